"""The client's text messages as typed values: one frozen dataclass per type
(`hello`, `turn.end`, `reply.cut`, `watch.end`, `session.end`; docs/protocol.md),
read from the wire by `decode_client_message` and written by
`encode_client_message` (what the simulated glasses send).

The checks are `streaming.wire`'s own (`decode_message`, `read_hello`,
`SessionConfig.from_dict`, `read_reply_cut`), so every refusal keeps its
code and text. Fields a message does not define are ignored, as they always
were. The server reads a hello in two steps (the token before the config:
`wire.read_hello`), so its reader takes only the other four from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from streaming import wire
from streaming.wire import CLIENT_TYPES, SessionConfig, WireError


@dataclass(frozen=True, kw_only=True)
class Hello:
    type: ClassVar[str] = "hello"
    token: str | None = None
    config: SessionConfig = field(default_factory=SessionConfig)


@dataclass(frozen=True, kw_only=True)
class TurnEnd:
    """The speaker is done (push to talk). `t_ms`: the client's stream time when it said so, sent by the
    simulated glasses; the server does not read it (and never checked it), so one that is not an integer
    reads as None."""

    type: ClassVar[str] = "turn.end"
    t_ms: int | None = None


@dataclass(frozen=True, kw_only=True)
class ReplyCut:
    """The client stopped playing turn `turn`'s spoken reply after `played_ms` of it."""

    type: ClassVar[str] = "reply.cut"
    turn: int
    played_ms: int


@dataclass(frozen=True, kw_only=True)
class WatchEnd:
    type: ClassVar[str] = "watch.end"


@dataclass(frozen=True, kw_only=True)
class SessionEnd:
    type: ClassVar[str] = "session.end"


ClientMessage = Hello | TurnEnd | ReplyCut | WatchEnd | SessionEnd
MESSAGE_TYPES: dict[str, type] = {cls.type: cls for cls in (Hello, TurnEnd, ReplyCut, WatchEnd, SessionEnd)}
assert tuple(MESSAGE_TYPES) == CLIENT_TYPES
# what may follow a hello
CONTROL_TYPES = ("turn.end", "reply.cut", "watch.end", "session.end")


def decode_client_message(text: str, *, allowed: tuple[str, ...] = CLIENT_TYPES) -> ClientMessage:
    """One client message of a type in `allowed`, every field checked; else `WireError` (`bad_json`,
    `too_large`, `bad_message`, and for a hello `bad_hello`), with the texts the dict readers give."""
    data = wire.decode_message(text, allowed=allowed)
    kind = data["type"]
    if kind == "hello":
        token, config = wire.read_hello(text)
        return Hello(token=token, config=SessionConfig.from_dict(config))
    if kind == "reply.cut":
        turn, played_ms = wire.read_reply_cut(data)
        return ReplyCut(turn=turn, played_ms=played_ms)
    if kind == "turn.end":
        t_ms = data.get("t_ms")
        return TurnEnd(t_ms=t_ms if isinstance(t_ms, int) and not isinstance(t_ms, bool) else None)
    if kind == "watch.end":
        return WatchEnd()
    if kind == "session.end":
        return SessionEnd()
    raise WireError("bad_message", f"unexpected message type {kind!r}")  # a type CLIENT_TYPES gained


def encode_client_message(message: ClientMessage) -> str:
    """A client message as its JSON text (a hello as `wire.hello` writes it)."""
    if isinstance(message, Hello):
        return wire.hello(message.token, message.config)
    if isinstance(message, ReplyCut):
        return wire.encode_message(message.type, turn=message.turn, played_ms=message.played_ms)
    if isinstance(message, TurnEnd):
        return wire.encode_message(message.type, **({} if message.t_ms is None else {"t_ms": message.t_ms}))
    if isinstance(message, (WatchEnd, SessionEnd)):
        return wire.encode_message(message.type)
    raise WireError("bad_message", f"not a client message: {message!r:.200}")
