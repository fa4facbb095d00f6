"""Wire fuzz: a seeded, bounded stream of random and mutated messages through
every decoder of `streaming.wire`. Whatever comes in, the only exception
allowed out is `WireError` (which the server turns into an `error` event)."""

from __future__ import annotations

import json
import random

import numpy as np

from core.candidate import Usage
from core.records import TurnInput, TurnMetrics
from media_effects.frames import encode_jpeg
from streaming import wire

SEED = 20240607
ROUNDS = 3000

JPEG = encode_jpeg(np.full((16, 16, 3), 90, np.uint8))
TURN_INPUT = TurnInput(
    turn=1,
    camera_block="a grey disc",
    speech="what is this",
    camera_source="perceived",
    speech_source="perceived",
    context_block="steam",
    context_source="authored",
    timings={"asr_decode_s": 0.2},
)
EVENTS = [
    wire.Ready(protocol=1, backend="local"),
    wire.SpeechStarted(t_ms=40),
    wire.TranscriptPartial(text="wha", t_ms=300),
    wire.TranscriptFinal(turn=1, text="what is this", start_ms=40, end_ms=900),
    wire.CameraBlock(turn=1, text="a disc", source="perceived", context="x", context_source="authored"),
    wire.TurnInputEvent(turn=1, input=TURN_INPUT),
    wire.AssistantDelta(turn=1, text="A d"),
    wire.AssistantDone(
        turn=1,
        text="A disc.",
        usage=Usage(
            input_tokens=12,
            output_tokens=3,
            input_text_tokens=12,
            input_audio_tokens=0,
            input_image_tokens=0,
            cached_input_tokens=4,
        ),
    ),
    wire.Metrics(turn=1, latency_s=TurnMetrics(reply_done=1.5)),
    wire.Error(code="bad_json", message="message is not JSON"),
]
TEXT_SEEDS = [
    wire.hello("tok", wire.SessionConfig(backend="openai:x", fallback_camera={"1": "a mug"}, fallback_context="steam")),
    wire.encode_message("turn.end", t_ms=5),
    wire.encode_message("session.end"),
    *(wire.encode_event(event) for event in EVENTS),
]
MEDIA_SEEDS = [wire.encode_media(wire.KIND_AUDIO, 123, b"\x01\x00" * 320), wire.encode_media(wire.KIND_FRAME, 9, JPEG)]
ODD_TEXT = [
    "",
    " ",
    "\x00",
    "\ud800",
    "\udfff",
    "é",
    "✓",
    "\u202e",
    "null",
    "NaN",
    "-Infinity",
    "1e999",
    "[]",
    "{}",
    "\\",
    '"',
    "9" * 5000,
    "[" * 1500,
    "{" * 1500,
    '{"type":' * 600,
]


def random_string(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return rng.choice(ODD_TEXT)
    return "".join(
        chr(rng.choice((rng.randrange(32, 127), rng.randrange(0x80, 0x3000), rng.randrange(0xD800, 0xE000))))
        for _ in range(rng.randrange(0, 12))
    )


def random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(10 if depth < 3 else 7)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice((True, False))
    if kind == 2:
        return rng.choice((0, -1, 1, 2, 3, 2**63, -(2**70), 10**30))
    if kind == 3:
        return rng.choice((0.5, -0.0, 1e308, float("nan"), float("inf"), float("-inf")))
    if kind in (4, 5, 6):
        return random_string(rng)
    if kind in (7, 8):
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    return {random_string(rng): random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))}


def mutate_object(rng: random.Random, data: dict) -> dict:
    data = dict(data)
    for _ in range(rng.randrange(1, 4)):
        choice = rng.randrange(6)
        keys = list(data)
        if choice == 0 and keys:
            data[rng.choice(keys)] = random_value(rng)
        elif choice == 1 and keys:
            del data[rng.choice(keys)]
        elif choice == 2:
            data[random_string(rng)] = random_value(rng)
        elif choice == 3:
            data["type"] = rng.choice((*wire.CLIENT_TYPES, *wire.SERVER_TYPES, random_string(rng), 7, None))
        elif choice == 4 and isinstance(data.get("config"), dict):
            config = dict(data["config"])
            name = rng.choice([*wire.SessionConfig.__dataclass_fields__, random_string(rng)])
            config[name] = random_value(rng)
            data["config"] = config
        elif choice == 5 and isinstance(data.get("input"), dict):
            data["input"] = mutate_object(rng, data["input"])
        elif choice == 5 and isinstance(data.get("usage"), dict):
            data["usage"] = random_value(rng)
    return data


def mutate_text(rng: random.Random, text: str) -> str:
    choice = rng.randrange(5)
    if choice == 0:
        return text[: rng.randrange(0, len(text) + 1)]
    position = rng.randrange(0, len(text) + 1)
    if choice == 1:
        return text[:position] + random_string(rng) + text[position:]
    if choice == 2:
        return text[:position] + text[position + rng.randrange(1, 8) :]
    if choice == 3:
        return text[:position] + rng.choice(ODD_TEXT) + text[position:]
    return text * rng.randrange(1, 3)


def fuzz_text(rng: random.Random):
    roll = rng.random()
    if roll < 0.05:
        return rng.choice((None, 5, b'{"type": "hello"}', ["hello"]))  # not even a string
    if roll < 0.15:
        return random_string(rng)
    seed = rng.choice(TEXT_SEEDS)
    if roll < 0.6:
        mutated = mutate_object(rng, json.loads(seed))
        return json.dumps(mutated, ensure_ascii=rng.random() < 0.5, allow_nan=True)
    return mutate_text(rng, seed)


def fuzz_media(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.3:
        return rng.randbytes(rng.randrange(0, 40))
    data = bytearray(rng.choice(MEDIA_SEEDS))
    if roll < 0.5:
        data[0] = rng.randrange(256)
    elif roll < 0.7:
        for _ in range(rng.randrange(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif roll < 0.85:
        del data[rng.randrange(0, len(data)) :]
    elif roll < 0.97:
        data += rng.randbytes(rng.randrange(1, 64))
    else:
        data += bytes(rng.choice((wire.MAX_FRAME_BYTES, wire.MAX_MESSAGE_BYTES)))
    return bytes(data)


def test_every_decoder_raises_only_wire_errors_on_random_and_mutated_input():
    rng = random.Random(SEED)
    decoders = (
        ("decode_message", wire.decode_message),
        ("parse_hello", wire.parse_hello),
        ("decode_event", wire.decode_event),
    )
    outcomes = {"decode_media": [0, 0], **{name: [0, 0] for name, _ in decoders}}  # [accepted, refused]
    for round_ in range(ROUNDS):
        cases = [("decode_media", wire.decode_media, fuzz_media(rng))]
        text = fuzz_text(rng)
        cases += [(name, decoder, text) for name, decoder in decoders]
        for name, decoder, value in cases:
            try:
                decoder(value)
                outcomes[name][0] += 1
            except wire.WireError as exc:
                assert exc.code and isinstance(exc.message, str)
                outcomes[name][1] += 1
            except Exception as exc:  # noqa: BLE001 - the point of the test
                raise AssertionError(
                    f"round {round_}: {name} raised {type(exc).__name__}: {exc} on {value!r:.300}"
                ) from exc
    # the mutations reach past the first checks: every decoder both accepted and refused inputs
    assert all(accepted and refused for accepted, refused in outcomes.values()), outcomes


def test_accepted_input_is_well_typed():
    rng = random.Random(SEED + 1)
    for _ in range(ROUNDS // 3):
        text = fuzz_text(rng)
        try:
            _, config = wire.parse_hello(text)
        except wire.WireError:
            pass
        else:
            assert isinstance(config.backend, str) and isinstance(config.fallback_camera, dict)
            assert all(isinstance(v, str) for v in config.fallback_camera.values())
            assert type(config.silence_ms) is int and type(config.camera) is bool
        try:
            event = wire.decode_event(text)
        except wire.WireError:
            continue
        assert wire.decode_event(wire.encode_event(event)) == event
