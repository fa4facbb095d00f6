"""The client's messages as typed values (streaming.client_messages): each round-trips, the texts are the
ones the dict readers wrote, and every refusal keeps its code and text."""

from __future__ import annotations

import json

import pytest

from streaming import wire
from streaming.client_messages import (
    CONTROL_TYPES,
    Hello,
    ReplyCut,
    SessionEnd,
    TurnEnd,
    WatchEnd,
    decode_client_message,
    encode_client_message,
)


def test_every_client_message_round_trips_typed():
    config = wire.SessionConfig(backend="openai:x", fallback_camera={"1": "a mug"}, barge_in=True)
    messages = [
        Hello(token="tok", config=config),
        Hello(),
        TurnEnd(),
        TurnEnd(t_ms=1200),
        ReplyCut(turn=2, played_ms=1500),
        WatchEnd(),
        SessionEnd(),
    ]
    for message in messages:
        assert decode_client_message(encode_client_message(message)) == message


def test_the_encoded_texts_are_the_ones_the_dict_encoders_write():
    config = wire.SessionConfig(backend="openai:x")
    assert encode_client_message(Hello(token=None, config=config)) == wire.hello(None, config)
    assert encode_client_message(TurnEnd(t_ms=5)) == wire.encode_message("turn.end", t_ms=5)
    assert encode_client_message(TurnEnd()) == wire.encode_message("turn.end")
    assert encode_client_message(ReplyCut(turn=1, played_ms=0)) == wire.encode_message("reply.cut", turn=1, played_ms=0)
    assert json.loads(encode_client_message(SessionEnd())) == {"type": "session.end"}
    assert json.loads(encode_client_message(WatchEnd())) == {"type": "watch.end"}


def test_refusals_keep_their_codes_and_texts():
    cases = [
        ("{oops", "bad_json", "message is not JSON"),
        ('{"type": "assistant.done"}', "bad_message", "unexpected message type 'assistant.done'"),
        ('{"type": "reply.cut", "turn": 0, "played_ms": 1}', "bad_message", "'turn' must be a turn number"),
        ('{"type": "reply.cut", "turn": 1, "played_ms": 2.5}', "bad_message", "'played_ms' must be a whole"),
        ('{"type": "hello", "protocol": 9}', "bad_hello", "protocol version 9 is not supported"),
        ('{"type": "hello", "protocol": 1, "config": {"colour": 1}}', "bad_hello", "unknown session config"),
        ('{"type": "hello", "protocol": 1, "token": 7}', "bad_hello", "token must be a string or null"),
    ]
    for text, code, message in cases:
        with pytest.raises(wire.WireError, match=message) as info:
            decode_client_message(text)
        assert info.value.code == code


def test_after_the_hello_only_the_control_messages_are_read():
    hello = wire.hello(None, wire.SessionConfig())
    with pytest.raises(wire.WireError, match="unexpected message type 'hello'") as info:
        decode_client_message(hello, allowed=CONTROL_TYPES)
    assert info.value.code == "bad_message"
    assert decode_client_message('{"type": "turn.end", "t_ms": "soon", "extra": 1}') == TurnEnd()  # never checked
