"""`wearsim simulate`: play one scenario through simulated glasses."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim simulate sc-01                         # starts a server in-process, real-time pacing
  wearsim simulate sc-47 --fast --repair         # no waiting, and play the repair utterance
  wearsim simulate sc-13 --server ws://127.0.0.1:8765 --speed 2 --jitter-ms 30 --drop-frames 0.1
  wearsim simulate sc-05 --camera 0              # frames from the laptop camera instead of media
  wearsim simulate sc-05 --model openai-realtime:gpt-realtime-2 --output audio   # spoken replies, saved as WAV
The session log (every event) is saved as JSON (--log, default runs/simulate/SCENARIO-TIME.json; written by temp file
and rename, and a --log that is a symbolic link is refused before the session starts); with
--output audio each turn's spoken reply is saved next to it (SCENARIO-TIME-turnN.wav).
"""


def register(subparsers) -> None:
    from benchmark.cli.glasses_args import add_glasses_arguments

    p = subparsers.add_parser(
        "simulate",
        help="play a scenario through simulated glasses",
        epilog=EPILOG,
        description="Play one scenario's turns through simulated glasses against a "
        "streaming server, as the benchmark's stream path does: per turn, what "
        "the server heard, the camera block it built, the reply and its "
        "latencies; at the end the lexical judge's verdict on Turn 2 (and on "
        "Turn 3 with --repair).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scenario_id")
    add_glasses_arguments(p, real_time=True)
    p.add_argument("--model", default=None, help="assistant backend model id (default: local without keys)")
    p.add_argument("--condition", default="baseline", help="prompt condition for the system prompt")
    p.add_argument(
        "--impair",
        metavar="PROFILE",
        help="play the glasses under an impairment profile: clean, street, kitchen, dim, shaky, accent, weak-wifi "
        "or one of --impairments-file (docs/impairments.md)",
    )
    p.add_argument("--repair", action="store_true", help="also play the repair utterance (turn 3)")
    p.add_argument(
        "--camera",
        type=int,
        help="use frames from this cv2 camera index (a few grabbed at the start; for a live camera and "
        "microphone, use the browser page: wearsim serve, then http://127.0.0.1:8765/)",
    )
    p.add_argument("--json", action="store_true", help="print every server event as one JSON line, in full")
    p.add_argument(
        "--output",
        choices=("text", "audio"),
        default="text",
        help="audio: spoken replies (a realtime --model: openai-realtime:, gemini-live:)",
    )
    p.add_argument("--log", help="where to save the session log")
    p.set_defaults(run=run)


class SimulateError(RuntimeError):
    """A failure the user can fix; the message is the one line to print."""


def _camera_frames(index: int, count: int = 10) -> list[bytes]:
    import os
    import sys

    device = f"/dev/video{index}"
    if sys.platform.startswith("linux") and not os.path.exists(device):
        raise SimulateError(
            f"--camera {index}: no camera at {device}; plug one in, pick another index "
            "(ls /dev/video*), or leave out --camera to play the scenario's media"
        )
    os.environ.setdefault("OPENCV_LOG_LEVEL", "ERROR")  # no multi-line backend warnings for a missing device
    import cv2

    from media_effects.frames import encode_jpeg

    capture = cv2.VideoCapture(index)
    if not capture.isOpened():
        raise SimulateError(
            f"--camera {index}: camera {index} cannot be opened (in use, or no permission?); "
            "leave out --camera to play the scenario's media"
        )
    frames: list[bytes] = []
    while len(frames) < count:
        ok, image = capture.read()
        if not ok:
            break
        frames.append(encode_jpeg(image))
    capture.release()
    if not frames:
        raise SimulateError(
            f"--camera {index}: camera {index} gave no frames; leave out --camera to play the scenario's media"
        )
    return frames


def run(args) -> int:
    import asyncio
    import contextlib
    import dataclasses
    import json
    import os
    import sys
    import time
    from pathlib import Path

    from benchmark.cli.glasses_args import glasses_settings, hello_default
    from candidates import default_model_id
    from core.safe_files import UnsafePathError, check_target, make_dirs, write_atomic
    from core.scenario import load_bank

    bank = load_bank()
    try:
        scenario = bank.get(args.scenario_id)
        condition = bank.condition(args.condition)
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    model = args.model or default_model_id()
    describer = args.describer or hello_default("describer")
    log = Path(args.log or f"runs/simulate/{scenario.scenario_id}-{time.strftime('%Y%m%d-%H%M%S')}.json")
    try:  # the log (and the spoken replies beside it) is written as a run dir's files: never through a link
        for path in (log, *(log.with_name(f"{log.stem}-turn{turn}.wav") for turn in (1, 2, 3))):
            check_target(path)
    except UnsafePathError as exc:
        print(f"wearsim simulate: --log: {exc}; nothing was run", file=sys.stderr)
        return 2
    try:
        live = _camera_frames(args.camera) if args.camera is not None else None
    except SimulateError as exc:
        print(f"wearsim simulate: {exc}", file=sys.stderr)
        return 2
    scenes = None
    if args.pictograph_frames:
        from core.scenes import SceneError, scene_dir, scene_spec_in
        from media_effects.pictures import PictureSetMissing, font_path

        try:
            font_path()
            scenes = scene_spec_in(scene_dir(bank), scenario)
        except (PictureSetMissing, SceneError) as exc:
            print(f"error: --pictograph-frames: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
        from benchmark.report.frame_source import before_run_note

        if note := before_run_note(describer, "pictograph", model):
            print(note, file=sys.stderr)
    profile = None
    if args.impair or args.impairments_file:
        from media_effects.impairment_profiles import select_profiles

        try:
            [profile] = select_profiles([args.impair or ""], args.impairments_file)
            profile = profile.with_seed(args.impair_seed)
        except (ValueError, OSError) as exc:
            print(f"error: --impair: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2

    def show(event) -> None:
        from streaming import wire

        if args.json:
            print(wire.encode_event(event), flush=True)
        else:
            print_readable(event)

    glasses = glasses_settings(
        args,
        backend=model,
        output=args.output,
        keep_frames=False,
        scenes=scenes,
        live_frames=tuple(live) if live else None,
        impairment=profile,
    )

    async def session(url: str) -> tuple[list[dict], dict[int, bytes]]:
        from benchmark.conversations.stream import StreamConversation

        conversation = StreamConversation(scenario, condition, dataclasses.replace(glasses, url=url), on_event=show)
        try:
            await conversation.open()
        except (TimeoutError, OSError) as exc:
            reason = (
                "no answer"
                if not isinstance(exc, OSError)
                else (os.strerror(exc.errno).lower() if exc.errno else str(exc))
            )
            raise SimulateError(
                f"cannot connect to the streaming server at {url}: {reason}; start one with "
                "`wearsim serve`, or leave out --server to start one in-process"
            ) from exc
        except Exception as exc:  # websockets: a bad URI, a refused handshake; the server refused the session
            raise SimulateError(
                f"the streaming server at {url} did not take the session: "
                f"{type(exc).__name__}: {exc} (check --server and --token)"
            ) from exc
        turns = (1, 2, 3) if args.repair else (1, 2)
        client = conversation.client
        assert client is not None  # open() connected it, or raised
        try:
            for turn in turns:  # the bench's turn loop: the same pause between turns, the same hello
                result = await conversation.send(turn)
                lost = result.glasses
                if lost.audio_lost_ms or lost.frames_lost_ms:
                    print(
                        f"uplink ({lost.impairment}): turn {turn} lost {len(lost.audio_lost_ms)} audio chunks "
                        f"and {len(lost.frames_lost_ms)} frames",
                        file=sys.stderr,
                    )
                results.append(result)
        finally:
            await conversation.aclose()
        return client.session_log(), {turn: client.reply_audio(turn) for turn in turns}

    results: list = []  # each turn's TurnResult
    server: contextlib.AbstractContextManager = contextlib.nullcontext(args.server)
    if not args.server:
        from streaming.local_server import running_server
        from streaming.server_settings import ServerSettings

        print("starting the streaming server in-process", file=sys.stderr)
        server = running_server(ServerSettings(allowed_backends=(model,), allowed_describers=(describer,)))
    try:
        with server as url:
            events, spoken = asyncio.run(session(url))
    except SimulateError as exc:
        if getattr(args, "debug", False):
            raise
        print(f"wearsim simulate: {exc}", file=sys.stderr)
        return 2
    make_dirs(log.parent)
    write_atomic(
        log,
        json.dumps(
            {"scenario_id": scenario.scenario_id, "backend": model, "glasses": glasses.record(), "events": events},
            indent=2,
        ),
        log.parent,
    )
    print(f"session log: {log}", file=sys.stderr)
    from core.candidate import REPLY_AUDIO_RATE
    from media_effects.audio import write_wav

    for turn, audio in spoken.items():
        if audio:
            wav = log.with_name(f"{log.stem}-turn{turn}.wav")
            write_wav(wav, audio, REPLY_AUDIO_RATE)
            print(f"turn {turn} spoken reply: {wav} ({len(audio) / 2 / REPLY_AUDIO_RATE:.1f} s)", file=sys.stderr)
    if not args.json:
        for line in verdict(scenario, results):
            print(line)
    return 0


def print_readable(event) -> None:
    """One server event as a person reads a session: per turn what was heard, the camera block, the
    reply as it streams and the latencies from the end of speech."""
    from streaming import wire

    if isinstance(event, wire.Ready):
        print(f"session ready: backend {event.backend}", flush=True)
    elif isinstance(event, wire.TranscriptFinal):
        print(f"\nTurn {event.turn}\n  heard:   {event.text}", flush=True)
    elif isinstance(event, wire.CameraBlock):
        if event.context:
            print(f"  before:  {event.context}  ({_source(event.context_source)})", flush=True)
        print(f"  camera:  {event.text or '(no camera block)'}  ({_source(event.source)})", flush=True)
    elif isinstance(event, wire.AssistantDelta):
        started = _replying.setdefault(event.turn, False)
        print(("" if started else "  reply:   ") + event.text, end="", flush=True)
        _replying[event.turn] = True
    elif isinstance(event, wire.AssistantDone):
        if not _replying.get(event.turn):
            print(f"  reply:   {event.text or '(empty)'}", end="")
        print(" [interrupted]" if event.interrupted else "", flush=True)
    elif isinstance(event, wire.Metrics):
        m = event.latency_s
        stages = [
            ("transcript", m.transcript_final),
            ("camera block", m.camera_block),
            ("first word", m.first_token),
            ("first audio", m.first_audio),
            ("reply done", m.reply_done),
        ]
        print(
            "  latency from the end of speech: "
            + ", ".join(f"{name} {value:.2f} s" for name, value in stages if value is not None),
            flush=True,
        )
    elif isinstance(event, wire.Error):
        print(f"  server error {event.code}: {event.message}", flush=True)


_replying: dict[int, bool] = {}  # turn -> its reply has started printing


def _source(source: str | None) -> str:
    return {
        "perceived": "perceived from the media",
        "authored": "the scenario's text: no media for it",
        "media": "the frame itself went to the model",
        None: "nothing sent",
    }.get(source, str(source))


def verdict(scenario, results) -> list[str]:
    """The lexical judge on Turn 2 (and Turn 3 when played), as the benchmark would label them."""
    import asyncio

    from benchmark.judges.lexical import LexicalJudge
    from core.records import judge_case

    inputs = [r.input for r in results]
    lines = ["", f"Verdict (lexical judge; the benchmark's target for Turn 2 is {scenario.target_context}):"]
    for index, result in enumerate(results):
        turn = result.input.turn
        if turn == 1:
            continue
        target = scenario.target_context if turn == 2 else scenario.repair_target
        label = asyncio.run(LexicalJudge().label(judge_case(scenario, turn, result.reply.text, inputs[: index + 1])))
        outcome = "unscored" if label.label is None else ("pass" if label.label == target else "miss")
        lines.append(
            f"  Turn {turn}: {outcome} (label {label.label or 'none'}: "
            f"{label.unscored_reason or label.rationale}; target {target})"
        )
    return lines
