"""Wire protocol, streaming server, simulated glasses and the stream path of
the benchmark, against a real server (uvicorn on loopback) with real Whisper;
the assistant backend is a local OpenAI-compatible test server."""

import asyncio
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import websockets

from benchmark.conversations.stream import StreamConversation
from core.candidate import USAGE_FIELDS, Usage
from core.records import TurnInput, TurnMetrics, build_user_turn
from core.scenario import load_bank
from media_effects.frames import encode_jpeg
from perception.quality import word_error_rate
from simulator.pacing import Pacer
from simulator.settings import GlassesSettings
from streaming import wire
from streaming.local_server import running_server
from streaming.server_settings import ServerSettings
from streaming.wire import SessionConfig

BANK = load_bank()
BASELINE = BANK.condition("baseline")
JPEG = encode_jpeg(np.full((48, 64, 3), 128, np.uint8))


@pytest.fixture(scope="module")
def secured_url(backend):
    with running_server(ServerSettings(token="s3cret", backend_base_url=backend.base_url)) as url:
        yield url


# ---- codec ---------------------------------------------------------------


def test_media_round_trip():
    for kind, payload in ((wire.KIND_AUDIO, b"\x01\x00" * 320), (wire.KIND_FRAME, JPEG)):
        media = wire.decode_media(wire.encode_media(kind, 123456789, payload))
        assert (media.kind, media.t_ms, media.payload) == (kind, 123456789, payload)


def test_every_message_type_round_trips():
    for message_type in wire.CLIENT_TYPES:
        text = wire.encode_message(message_type, t_ms=2)
        assert wire.decode_message(text, allowed=(message_type,)) == {"type": message_type, "t_ms": 2}
    config = wire.SessionConfig(
        backend="openai:x",
        system_prompt="sys",
        silence_ms=900,
        fallback_camera={"1": "a grey disc"},
        fallback_context="steam",
        output="audio",
    )
    token, parsed = wire.parse_hello(wire.hello("tok", config))
    assert token == "tok" and parsed == config


def test_every_server_event_round_trips_typed():
    turn_input = TurnInput(
        turn=1,
        camera_block="a grey disc",
        speech="what is this",
        camera_source="perceived",
        speech_source="perceived",
        context_block="steam",
        context_source="authored",
        timings={"asr_decode_s": 0.2},
    )
    events = [
        wire.Ready(protocol=1, backend="local"),
        wire.SpeechStarted(t_ms=40),
        wire.TranscriptPartial(text="wha", t_ms=300),
        wire.TranscriptFinal(turn=1, text="what is this", start_ms=40, end_ms=900),
        wire.CameraBlock(turn=1, text="a grey disc", source="perceived", context="steam", context_source="authored"),
        wire.TurnInputEvent(turn=1, input=turn_input),
        wire.AssistantDelta(turn=1, text="A d"),
        wire.AssistantAudio(turn=1, audio="EAAQAA==", rate=24000),
        wire.AssistantDone(
            turn=1,
            text="A disc.",
            usage=Usage(
                input_tokens=12, output_tokens=3, input_text_tokens=10, input_image_tokens=2, output_text_tokens=3
            ),
        ),
        wire.Metrics(turn=1, latency_s=TurnMetrics(reply_done=1.5)),
        wire.Error(code="bad_json", message="message is not JSON"),
        wire.RemarkDelta(probe=2, text="Careful"),
        wire.RemarkAudio(probe=2, audio="EAAQAA==", rate=24000),
        wire.ProbeDone(
            probe=2,
            asked_ms=15_020,
            frame_ms=15_000,
            text="Careful, the guard is taped up.",
            silent=False,
            first_s=0.84,
            done_s=1.2,
            usage=Usage(input_tokens=40, output_tokens=9, input_text_tokens=40, output_text_tokens=9),
        ),
        wire.ProbeDone(probe=3, asked_ms=20_020, frame_ms=20_000, text="[silent]", silent=True),
        wire.ProbeDone(
            probe=4,
            asked_ms=25_020,
            frame_ms=25_000,
            text="[silent]",
            silent=True,
            camera="A tall steel vessel.",
            incomplete="cut short: a user started speaking",
        ),
        wire.ProbePaced(asked_ms=30_000, gap_s=2.0, min_gap_s=1.0, rate=4.0, sessions=8),
        wire.WatchDone(probes=3, frames={"sent_ms": [1000, 2000]}),
        wire.WatchDone(probes=4, frames={"sent_ms": [1000]}, skipped=12),
    ]
    assert {e.type for e in events} == set(wire.SERVER_TYPES)
    for event in events:
        assert wire.decode_event(wire.encode_event(event)) == event
    on_wire = json.loads(wire.encode_event(wire.TurnInputEvent(turn=1, input=turn_input)))
    assert on_wire["user_message"] == "[Camera: a grey disc]\nwhat is this"
    assert on_wire["context_message"] == "[Camera: steam]"
    usage = json.loads(wire.encode_event(events[8]))["usage"]
    assert usage == {
        **dict.fromkeys(USAGE_FIELDS),
        "input_tokens": 12,
        "output_tokens": 3,
        "input_text_tokens": 10,
        "input_image_tokens": 2,
        "output_text_tokens": 3,
    }  # unknown parts are null, not 0
    # a server of an earlier version sent the two totals only: the split reads as unknown
    old = json.loads(wire.encode_event(events[8]))
    old["usage"] = {"input_tokens": 12, "output_tokens": 3}
    assert wire.decode_event(json.dumps(old)).usage == Usage(input_tokens=12, output_tokens=3)
    for bad in ({"input_tokens": -1}, {"input_audio_tokens": "7"}, {"input_tokens": 1, "audio": 3}):
        with pytest.raises(wire.WireError):
            wire.decode_event(json.dumps({**old, "usage": bad}))


def test_unknown_or_malformed_server_events_are_rejected():
    for text, words in (
        ('{"type": "assistant.shout", "text": "hi"}', "unknown server event type"),
        ('{"type": "assistant.delta", "turn": 1}', "missing field(s) ['text']"),
        ('{"type": "speech.started", "t_ms": 1, "colour": 2}', "unknown field(s) ['colour']"),
        ('{"type": "turn.input", "turn": 1, "input": {"turn": 1}}', "field 'speech'"),
    ):
        with pytest.raises(wire.WireError, match=re.escape(words)):
            wire.decode_event(text)
    with pytest.raises(wire.WireError):
        wire.encode_message("assistant.done", text="server events are not client messages")


def test_codec_errors_are_named():
    cases = [
        (lambda: wire.decode_media(b"\x01\x00"), "bad_media"),
        (lambda: wire.decode_media(wire.encode_media(wire.KIND_AUDIO, 0, b"\x01")), "bad_media"),
        (lambda: wire.decode_media(wire.encode_media(wire.KIND_FRAME, 0, b"not a jpeg")), "bad_media"),
        (
            lambda: wire.decode_media(wire.encode_media(wire.KIND_FRAME, 0, b"\xff\xd8" + bytes(600_000))),
            "frame_too_large",
        ),
        (lambda: wire.decode_message("{oops"), "bad_json"),
        (lambda: wire.decode_message('{"type": "assistant.done"}'), "bad_message"),
        (lambda: wire.parse_hello('{"type": "hello", "protocol": 9}'), "bad_hello"),
        (lambda: wire.parse_hello('{"type": "hello", "protocol": 1, "config": {"colour": 1}}'), "bad_hello"),
    ]
    for call, code in cases:
        with pytest.raises(wire.WireError) as info:
            call()
        assert info.value.code == code


# ---- pacing --------------------------------------------------------------


class FakeClock:
    def __init__(self, send_cost=0.0):
        self.now, self.send_cost, self.sent = 100.0, send_cost, []

    def __call__(self):
        return self.now

    async def sleep(self, seconds):
        self.now += max(seconds, 0)


def test_pacer_keeps_the_schedule_without_drift():
    clock = FakeClock()
    pacer = Pacer(1.0, clock=clock, sleep=clock.sleep)

    async def go():
        for i in range(500):  # 10 s of 20 ms chunks, each send costing 7 ms
            await pacer.wait(i * 20)
            clock.sent.append(clock.now)
            clock.now += 0.007

    asyncio.run(go())
    offsets = [sent - 100.0 - i * 0.020 for i, sent in enumerate(clock.sent)]
    assert max(abs(o) for o in offsets) < 1e-9  # a late send never shifts the next one
    assert max(pacer.lateness) == 0


def test_pacer_speed_fast_and_tolerance_under_slow_sends():
    clock = FakeClock()
    pacer = Pacer(2.0, clock=clock, sleep=clock.sleep)

    async def go(p, cost):
        times = []
        for i in range(100):
            await p.wait(i * 20)
            times.append(clock.now)
            clock.now += cost
        return times

    times = asyncio.run(go(pacer, 0.0))
    assert times[-1] - times[0] == pytest.approx(99 * 0.010)
    # sends slower than the schedule (30 ms each for 20 ms of audio) fall behind, and it is recorded
    slow = Pacer(1.0, clock=clock, sleep=clock.sleep)
    asyncio.run(go(slow, 0.030))
    assert slow.lateness[-1] == pytest.approx(99 * 0.010, abs=1e-6)
    fast_clock = FakeClock()
    fast = Pacer(None, clock=fast_clock, sleep=fast_clock.sleep)
    asyncio.run(go(fast, 0.0))
    assert fast_clock.now == 100.0


# ---- server --------------------------------------------------------------


async def _hello(url, token=None, **config):
    ws = await websockets.connect(url + "/v1/session")
    await ws.send(wire.hello(token, wire.SessionConfig(**({"backend": "openai:fake"} | config))))
    return ws, json.loads(await ws.recv())


def test_unauthenticated_session_is_refused(secured_url):
    async def go():
        ws, first = await _hello(secured_url)
        with pytest.raises(websockets.ConnectionClosed) as info:
            await ws.recv()
        return first, info.value.rcvd.code

    first, code = asyncio.run(go())
    assert first == {"type": "error", "code": "unauthenticated", "message": "missing or wrong token"}
    assert code == wire.CLOSE_UNAUTHENTICATED

    async def good():
        ws, first = await _hello(secured_url, token="s3cret")
        await ws.close()
        return first

    assert asyncio.run(good())["type"] == "ready"


def test_bad_messages_get_errors_then_a_close_and_others_keep_working(server_url):
    async def go():
        bad, ready = await _hello(server_url)
        assert ready["type"] == "ready"
        good, _ = await _hello(server_url)
        await bad.send("{not json")
        first = json.loads(await bad.recv())
        await bad.send(wire.encode_media(wire.KIND_FRAME, 0, b"\xff\xd8" + bytes(600_000)))
        second = json.loads(await bad.recv())
        await bad.send(b"\x07")
        third = json.loads(await bad.recv())
        with pytest.raises(websockets.ConnectionClosed) as info:
            await bad.recv()
        await good.send(wire.encode_media(wire.KIND_FRAME, 0, JPEG))
        await good.send(wire.encode_message("turn.end"))  # nothing said yet: no turn, no error
        await good.send(wire.encode_message("session.end"))
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await good.recv()
        return first, second, third, info.value.rcvd.code, closed.value.rcvd.code

    first, second, third, code, good_code = asyncio.run(go())
    assert first["code"] == "bad_json" and second["code"] == "frame_too_large"
    assert third["code"] == "bad_media" and "closing after 3 violations" in third["message"]
    assert code == wire.CLOSE_LIMITS and good_code == wire.CLOSE_NORMAL


def _play(url, scenario, turns=(1, 2), camera=True):
    async def go():
        conversation = StreamConversation(
            scenario, BASELINE, GlassesSettings(url=url, hello=SessionConfig(backend="openai:fake")), camera=camera
        )
        try:
            return [await conversation.send(turn) for turn in turns], conversation.messages
        finally:
            await conversation.aclose()

    return asyncio.run(go())


@pytest.mark.whisper
def test_without_media_the_stream_gives_the_text_path_turn_inputs(server_url):
    scenario = BANK.get("sc-01")  # speech media only: no frames
    results, messages = _play(server_url, scenario)
    for result, image, speech in zip(
        results, (scenario.turn_1_image, scenario.turn_2_image), (scenario.turn_1_user, scenario.turn_2_user)
    ):
        sent = result.input
        assert sent.camera_source == "authored" and sent.camera_block == image
        assert sent.speech_source == "perceived" and word_error_rate(speech, sent.speech) <= 0.7
        assert sent.user_message == build_user_turn(image, sent.speech)
        assert set(result.metrics.to_json()) == {
            "speech_end_to_transcript_final",
            "speech_end_to_camera_block",
            "speech_end_to_first_token",
            "speech_end_to_first_audio",
            "speech_end_to_reply_done",
            "turn_end_to_first_token",
            "last_frame_age_s",
        }
        assert all(
            getattr(result.metrics, stage) is not None
            for stage in ("transcript_final", "camera_block", "first_token", "reply_done", "turn_end_to_first_token")
        )
        assert result.metrics.first_audio is None  # a chat backend answers in text
        assert result.metrics.last_frame_age_s is None  # nor is it streamed frames
        assert 0 <= result.metrics.turn_end_to_first_token <= result.metrics.first_token
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert results[1].reply.text == "It is the one in your hand now."


@pytest.mark.whisper
def test_with_media_the_camera_blocks_are_perceived(server_url, backend):
    scenario = BANK.get("sc-47")  # rendered context, turn 1 and turn 2 stills
    results, messages = _play(server_url, scenario, turns=(1, 2, 3))
    first, second, repair = (r.input for r in results)
    assert first.camera_source == "perceived" and first.context_source == "perceived"
    assert first.camera_block != scenario.turn_1_image
    assert messages[0].text.startswith("[Camera: Mostly") and messages[1].text.startswith("[Camera: ")
    assert second.camera_source == "perceived" and second.context_block is None
    assert repair.camera_block is None and "salt" in repair.speech.lower()
    sent = backend.requests[-1]["messages"]
    assert sent[0] == {"role": "system", "content": BASELINE.system_prompt}
    assert all("current_answers" not in json.dumps(r) and "sc-47" not in json.dumps(r) for r in backend.requests)


def test_camera_ablation_over_the_stream(server_url):
    results, messages = _play(server_url, BANK.get("sc-47"), turns=(1,), camera=False)
    assert results[0].input.camera_source is None and "[Camera:" not in messages[0].text


def _bench(args, run_dir, backend):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--model",
            "openai:fake",
            "--base-url",
            backend.base_url,
            "--judge-family",
            "lexical",
            "--conditions",
            "baseline",
            "--output-dir",
            str(run_dir),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OPENAI_API_KEY": ""},
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]


@pytest.mark.whisper
def test_bench_via_stream_records_perception_with_the_same_keys_as_direct(backend, tmp_path):
    streamed = _bench(["--via", "stream", "--limit", "2"], tmp_path / "stream", backend)
    assert len(streamed) == 2 and all(r["error"] is None for r in streamed)
    for record in streamed:
        assert record["via"] == "stream"
        turn_2 = record["turns"][1]
        assert turn_2["input"]["speech_source"] == "perceived" and turn_2["input"]["speech"]
        assert turn_2["metrics"]["speech_end_to_reply_done"] > 0
        assert turn_2["glasses"]["speech_media"] in ("media", "tts")
        assert turn_2["glasses"]["script"] == BANK.get(record["scenario_id"]).turn_2_user  # what was spoken
        assert "current_answers" not in json.dumps(record["messages"])
    rates = [word_error_rate(t["glasses"]["script"], t["input"]["speech"]) for r in streamed for t in r["turns"]]
    wer = json.loads((tmp_path / "stream" / "summary.json").read_text())["perception"]["speech_wer"]
    assert wer["n"] == len(rates) and wer["mean"] == round(sum(rates) / len(rates), 3)
    assert f"mean {wer['mean']:.3f}" in (tmp_path / "stream" / "findings.md").read_text()
    direct = _bench(["--via", "direct", "--limit", "1"], tmp_path / "direct", backend)
    first = {r["scenario_id"]: r for r in streamed}[direct[0]["scenario_id"]]
    assert set(first) == set(direct[0])
    for streamed_turn, direct_turn in zip(first["turns"], direct[0]["turns"]):
        assert set(streamed_turn) == set(direct_turn)
        assert set(streamed_turn["input"]) == set(direct_turn["input"])
        assert set(streamed_turn["reply"]) == set(direct_turn["reply"])


def test_frames_wait_in_the_capped_buffer_for_a_busy_worker_and_then_meet_the_policy_in_order():
    from candidates.realtime import LiveConversation
    from streaming.backends import RealtimeBackend
    from streaming.session import Session

    class Api:  # a realtime session that records what it was sent
        input_rate = 16000
        replays_history = False

        def __init__(self):
            self.sent = []

        async def send_user(self, text, images=()):
            self.sent += list(images)

    class Silent:  # voice activity that never hears anyone
        in_speech = False

        async def end_turn(self):
            return []

    async def go():
        api = Api()
        live = LiveConversation(None, "x")
        live.session = api
        session = Session(wire.SessionConfig(backend="openai-realtime:x"), Silent(), RealtimeBackend(live), send=None)
        session.frames.max_frames = 20
        frames = [JPEG + bytes([i]) for i in range(30)]
        for i, frame in enumerate(frames):  # the worker is not running: a flood while it is busy
            await session.on_media(wire.Media(kind=wire.KIND_FRAME, t_ms=i * 500, payload=frame))
        assert len(session.frames.frames) == 20 and not session._queue  # capped; nothing queued per frame
        await session.on_turn_end()
        worker = asyncio.create_task(session.run())
        while session.busy:
            await asyncio.sleep(0.01)
        worker.cancel()
        return api.sent, frames

    sent, frames = asyncio.run(go())
    # the 20 newest frames (500 ms apart) met the default policy, one a second, in stream order
    assert sent == frames[10::2]
