"""The glasses' flags, one group for `wearsim simulate` and `wearsim bench --via stream`, and the one
builder of their `simulator.settings.GlassesSettings`.

Each flag that sets part of the hello takes its default from `streaming.wire.SessionConfig`, where
every hello default is stated, so the same flags give both commands the same glasses (and the same
record of them). The two commands differ only in what is theirs: `simulate` paces in real time unless
`--fast`, plays one impairment profile and may take a camera's frames; `bench` sweeps frame policies and
profiles (one cell each) and keeps thumbnails of the frames sent.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any


def hello_default(name: str):
    """The hello's default for one of its fields (`SessionConfig`'s)."""
    from streaming.wire import SessionConfig

    return {f.name: f.default for f in dataclasses.fields(SessionConfig)}[name]


def add_glasses_arguments(group, *, real_time: bool = False) -> None:
    """The glasses' flags added to `group`. `real_time`: `--speed` defaults to 1.0 and `--fast` turns
    pacing off (`simulate`, which a person watches); otherwise the glasses send as fast as the server
    takes it unless `--speed` is given (`bench`)."""
    from perception.describer_spec import help_text
    from streaming.wire import END_OF_TURN

    group.add_argument("--server", help="ws://HOST:PORT of a running `wearsim serve` (default: start one in-process)")
    group.add_argument("--token", help="token for --server (or WEARSIM_TOKEN)")
    if real_time:
        group.add_argument("--speed", type=float, default=1.0, help="stream pacing, 1.0 real time (the default)")
        group.add_argument("--fast", action="store_true", help="no pacing at all")
    else:
        group.add_argument(
            "--speed", type=float, help="stream pacing, 1.0 real time (default: as fast as the server takes it)"
        )
    silence = hello_default("silence_ms")
    group.add_argument(
        "--silence-ms",
        type=int,
        default=silence,
        metavar="MS",
        help=f"the silence after speech that ends a turn (default {silence})",
    )
    group.add_argument(
        "--end-of-turn",
        choices=END_OF_TURN,
        default=hello_default("end_of_turn"),
        help="what ends the user's turn: silence (--silence-ms; the default), model (Smart Turn) or text (the words)",
    )
    group.add_argument(
        "--describer",
        help=f"the server's scene describer (default {hello_default('describer')}; `bench --subset proactive` on "
        f"drawn frames: authored; a vision model only when the server offers it): {help_text()}",
    )
    group.add_argument(
        "--frame-size",
        type=int,
        default=hello_default("frame_size"),
        metavar="PX",
        help="longer side at most PX pixels (default: as captured)",
    )
    group.add_argument(
        "--frame-quality",
        type=int,
        default=hello_default("frame_quality"),
        metavar="Q",
        help="JPEG quality 1-100 (default: as captured)",
    )
    group.add_argument(
        "--media-root",
        metavar="DIR",
        help="speech and frames from DIR (e.g. what `wearsim serve --record DIR` saved), not media/",
    )
    group.add_argument(
        "--synthetic-frames",
        action="store_true",
        help="a turn without recorded frames gets one drawn from its camera text",
    )
    group.add_argument(
        "--pictograph-frames",
        action="store_true",
        help="a turn without recorded frames gets its scene drawn as pictures, no caption (benchmark/v1/scenes/)",
    )
    group.add_argument("--jitter-ms", type=float, default=0.0, metavar="MS", help="a random extra delay per send")
    group.add_argument(
        "--drop-frames", type=float, default=0.0, metavar="P", help="the chance each frame is never sent"
    )
    group.add_argument(
        "--impairments-file", metavar="TOML", help="impairment profiles of your own (docs/impairments.md)"
    )
    group.add_argument("--impair-seed", type=int, default=0, metavar="N", help="the impairments' seed (default 0)")


def glasses_settings(
    args,
    *,
    backend: str,
    max_tokens: int | None = None,
    temperature: float | None = None,
    output: str = "text",
    keep_frames: bool = True,
    **playing,
):
    """The glasses the flags in `args` (`add_glasses_arguments`') describe, answered by `backend`; the
    reply cap and temperature where the command has its own flags for them (None: the hello's default);
    `playing`: what only one command gives (`scenes`, `live_frames`, `impairment`)."""
    from simulator.settings import GlassesSettings
    from streaming.wire import SessionConfig

    asked: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature}
    if args.describer is not None:
        asked["describer"] = args.describer
    hello = SessionConfig(
        backend=backend,
        silence_ms=args.silence_ms,
        end_of_turn=args.end_of_turn,
        frame_size=args.frame_size,
        frame_quality=args.frame_quality,
        output=output,
        **{name: value for name, value in asked.items() if value is not None},
    )
    return GlassesSettings(
        hello=hello,
        token=args.token or os.environ.get("WEARSIM_TOKEN"),
        media_root=Path(args.media_root).resolve() if args.media_root else None,
        synthetic_frames=args.synthetic_frames,
        speed=None if getattr(args, "fast", False) else args.speed,
        jitter_ms=args.jitter_ms,
        drop_frames=args.drop_frames,
        keep_frames=keep_frames,
        **playing,
    )
