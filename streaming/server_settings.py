"""The streaming server's settings (`ServerSettings`: what `wearsim serve` and the in-process server of a
run configure), which backends and describers a hello may name (`backend_refusal`, `LOCAL_DESCRIBERS`,
`OPT_IN_DESCRIBERS`), and `scrub`, which takes every configured secret out of an error text before it is
sent or logged. The server itself is `streaming.app`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from candidates.providers import PROVIDERS, key_variables
from perception.describer_spec import offered
from perception.frame_policy import FramePolicy
from streaming import wire
from streaming.probe_pace import DEFAULT_MIN_GAP_S, DEFAULT_RATE

SECRET_VARIABLES = (*key_variables(), "WEARSIM_TOKEN")  # every provider's key (candidates/providers.py)
# the describers every hello may name, and those that run here and spend nothing but CPU yet are offered only
# when the operator names them (`wearsim serve --describer ocr`): perception/describer_spec.py
LOCAL_DESCRIBERS = offered("default")
OPT_IN_DESCRIBERS = offered("opt-in")


def any_hosted() -> str:
    """The backend ids a server that names none accepts: every form of the provider table but those naming a
    file on the server."""
    ok = [form for p in PROVIDERS.values() for form, _ in p.forms if not (p.names_file and ":" in form)]
    never = [f"{p.name}:PATH" for p in PROVIDERS.values() if p.names_file]
    bare = [form for form in ok if ":" not in form]
    rest = [form for form in ok if ":" in form]
    return f"{', '.join(bare)}, or {', '.join(rest)} (never {' or '.join(never)})"


@dataclass(kw_only=True)
class ServerSettings:
    token: str | None = None  # required in hello when set
    asr_model: str | None = None
    describer_base_url: str | None = None
    backend_base_url: str | None = None
    # backend ids a hello may name, exactly (after stripping whitespace); None: any id that names no
    # server file (every provider but local:PATH and replay:PATH). `wearsim serve` defaults to ("local",).
    allowed_backends: tuple[str, ...] | None = None
    max_open_backends: int = 4  # distinct shared chat backends ever opened (at least len(allowed_backends))
    # describers a hello may name: the two that run here and spend nothing, plus the model describers the
    # operator offers (`wearsim serve --describer openai:M`): a model describer spends the server's key
    allowed_describers: tuple[str, ...] = LOCAL_DESCRIBERS
    max_sessions: int = 16  # concurrent sessions; more get `server_busy`
    max_pending_hellos: int = 32  # connections not yet past their hello; more get `server_busy`
    idle_timeout_s: float = 300.0  # after `ready`: nothing from the client and nothing in flight
    hello_timeout_s: float = wire.HELLO_TIMEOUT_S
    send_timeout_s: float = 30.0  # a client that takes no event for this long is dropped
    frame_bytes_per_session: int = 16_000_000
    frame_bytes_total: int = 128_000_000
    record_dir: Path | None = None  # where the browser studio saves recordings (off when None)
    # pages on other origins that may open sessions and save recordings (`--allow-origin`); the server's
    # own pages always may. Host names (besides addresses and localhost) requests may name: streaming.origin
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    # the frame policy of a session whose hello names none (`wearsim serve --frame-policy`); None: `end`
    # for a chat backend (today's cascade), `fps:1` for a realtime API
    frame_policy: FramePolicy | None = None
    # proactive probes, paced on the server's wall clock (streaming.probe_pace): the least gap between one
    # session's probes (`--probe-min-gap`) and the probes a second over the whole server (`--probe-rate`)
    probe_min_gap_s: float = DEFAULT_MIN_GAP_S
    probe_rate: float = DEFAULT_RATE
    probe_hold_turns: bool = True  # a user speaking or waiting for an answer holds every session's probes

    @classmethod
    def with_room_for(cls, sessions: int, **settings) -> ServerSettings:
        """Settings whose session and pending-hello caps hold at least `sessions` at once (the
        in-process server of a run with `--concurrency sessions`); never below the defaults. Its probe
        rate gives each of them a probe a second (`every:1`, the busiest strategy, keeps its meaning), and
        one trial's speech holds no other trial's probes back (the trials stay independent)."""
        return cls(
            max_sessions=max(cls.max_sessions, sessions),
            max_pending_hellos=max(cls.max_pending_hellos, sessions),
            probe_rate=max(cls.probe_rate, float(sessions)),
            probe_hold_turns=False,
            **settings,
        )

    def __post_init__(self):
        if self.allowed_backends is not None:
            if isinstance(self.allowed_backends, str):
                self.allowed_backends = (self.allowed_backends,)
            self.allowed_backends = tuple(dict.fromkeys(b.strip() for b in self.allowed_backends if b.strip()))
        if isinstance(self.allowed_describers, str):
            self.allowed_describers = (self.allowed_describers,)
        self.allowed_describers = tuple(dict.fromkeys(d.strip() for d in self.allowed_describers if d.strip()))
        from streaming.origin import normal_origin

        self.allowed_origins = tuple(dict.fromkeys(normal_origin(o) for o in self.allowed_origins))
        if not (self.probe_rate > 0 and 0 <= self.probe_min_gap_s <= 3600):
            raise ValueError("probe_rate must be above 0 and probe_min_gap_s from 0 to 3600 seconds")
        if self.frame_bytes_per_session < wire.MAX_FRAME_BYTES:
            raise ValueError(f"frame_bytes_per_session must hold one frame ({wire.MAX_FRAME_BYTES} bytes)")


def scrub(text: str, settings: ServerSettings | None = None) -> str:
    """`text` with every configured secret (provider keys, the server token) replaced."""
    values = {os.environ.get(name) or "" for name in SECRET_VARIABLES}
    if settings is not None and settings.token:
        values.add(settings.token)
    for value in sorted((v for v in values if v.strip()), key=len, reverse=True):
        text = text.replace(value, "[redacted]")
    return text


def backend_refusal(model_id: str, allowed: tuple[str, ...] | None) -> str | None:
    """Why a hello may not use this backend id, or None when it may."""
    shown = repr(model_id[:80])
    if allowed is not None:
        if model_id in allowed:
            return None
        return f"backend {shown} is not offered by this server; allowed: {', '.join(allowed)}"
    from candidates.model_ids import parse_model_id

    try:
        provider, model = parse_model_id(model_id)
    except ValueError:
        return f"backend {shown} is not a model id; allowed: {any_hosted()}"
    if PROVIDERS[provider].names_file and model:
        return f"backend {shown} names a file on the server, which a client may not choose; allowed: {any_hosted()}"
    return None
