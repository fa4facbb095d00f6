"""Frame policies: the exact frames each one lets through on a scripted
camera timeline, their text forms and errors, the size and quality frames
are sent at, and a server session sending exactly the policy's frames to a
realtime backend with the per-turn frame facts in its metrics."""

from __future__ import annotations

import asyncio

import cv2
import numpy as np
import pytest

from core.candidate import Reply
from core.records import FrameFacts, RecordError, TurnResult
from media_effects.frames import decode_jpeg, encode_jpeg, synthetic_text
from media_effects.synthetic import synthetic_frame
from perception.frame_policy import FrameGate, parse_frame_policies, parse_frame_policy, resize_frame
from perception.speech import FinalTranscript
from streaming import wire
from streaming.backends import MediaBackend
from streaming.session import Session


def picture(left: int) -> bytes:
    """A grey 64x48 picture with a white square 26 pixels wide at `left`."""
    image = np.full((48, 64, 3), 128, np.uint8)
    cv2.rectangle(image, (left, 5), (left + 25, 30), (255, 255, 255), -1)
    return encode_jpeg(image, 95)


A, B = picture(5), picture(33)  # the square moved: about 44% of the picture changed


def chosen(policy: str, timeline) -> list[int]:
    """The stream times a policy sends from a timeline of (t_ms, jpeg, speaking)."""
    gate = FrameGate(parse_frame_policy(policy))
    return [t for t, jpeg, speaking in timeline if gate.offer(t, jpeg, speaking)]


def five_a_second(until_ms: int, scene=lambda t: A, speaking=lambda t: False):
    return [(t, scene(t), speaking(t)) for t in range(0, until_ms + 1, 200)]


def test_fixed_rates_keep_their_schedule():
    timeline = five_a_second(6000)
    assert chosen("fps:1", timeline) == [0, 1000, 2000, 3000, 4000, 5000, 6000]
    # 2 a second from frames every 200 ms: each slot takes the first frame at or after it
    assert chosen("fps:2", timeline) == [0, 600, 1000, 1600, 2000, 2600, 3000, 3600, 4000, 4600, 5000, 5600, 6000]
    assert chosen("fps:0.2", timeline) == [0, 5000]


def test_a_fixed_rate_restarts_its_schedule_after_a_gap_in_the_frames():
    timeline = [(t, A, False) for t in (0, 1000, 4300, 5000, 5300, 6300)]
    assert chosen("fps:1", timeline) == [0, 1000, 4300, 5300, 6300]


def test_speech_policy_follows_voice_activity():
    timeline = five_a_second(6000, speaking=lambda t: 1000 <= t < 3000)
    # idle at 0.3 fps: 0; speech from 1000 at 1 fps: 1000, 2000; idle again: next slot 3333 ms after 2000
    assert chosen("speech:1/0.3", timeline) == [0, 1000, 2000, 5400]
    assert chosen("speech:1/0", timeline) == [1000, 2000]


def test_change_policy_sends_a_new_picture_at_most_at_its_rate():
    scenes = five_a_second(6000, scene=lambda t: B if 2000 <= t < 4000 else A)
    assert chosen("change:0.1", scenes) == [0, 2000, 4000]
    flicker = five_a_second(3000, scene=lambda t: A if (t // 200) % 2 == 0 else B)
    # a new picture every 200 ms, but at most 2 a second; 1000 shows the picture last sent at 600
    assert chosen("change:0.1/2", flicker) == [0, 600, 1200, 1800, 2400, 3000]
    assert chosen("change:0.5", scenes) == [0]  # under half the picture changed


def test_end_sends_nothing_as_frames_arrive():
    assert chosen("end", five_a_second(3000)) == []


def test_policy_names_round_trip_and_bad_ones_are_one_line_errors():
    assert [p.name for p in parse_frame_policies("end, fps:0.5,speech:1/0.3,change:0.01")] == [
        "end",
        "fps:0.5",
        "speech:1/0.3",
        "change:0.01/2",
    ]
    assert parse_frame_policy(parse_frame_policy("change:0.1/4").name).name == "change:0.1/4"
    for bad, words in (
        ("fps:0", "rate '0'"),
        ("fps:11", "rate '11'"),
        ("fps:x", "rate 'x'"),
        ("speech:1", "unknown frame policy"),
        ("change:2", "threshold '2'"),
        ("sometimes", "unknown frame policy"),
        ("end:1", "unknown frame policy"),
        ("fps:nan", "rate 'nan'"),
        ("fps:1,fps:1", "listed twice"),
        (",", "at least one"),
    ):
        with pytest.raises(ValueError) as caught:
            parse_frame_policies(bad)
        assert words in str(caught.value) and "\n" not in str(caught.value), bad


def test_frames_are_sent_at_the_size_and_quality_asked_and_keep_a_synthetic_comment():
    frame = synthetic_frame("a red kettle on the left burner")
    smaller = resize_frame(frame, max_side=320, quality=40)
    assert decode_jpeg(smaller).shape[:2] == (240, 320)
    assert len(smaller) < len(frame)
    assert synthetic_text(smaller) == "a red kettle on the left burner"
    assert resize_frame(frame) is frame  # nothing asked: the frame as captured


# ---- a session sending a realtime backend exactly the policy's frames


class Speech:
    """Voice activity by script: b"S" starts speech, b"F<words>" ends it 500 ms before this chunk."""

    def __init__(self):
        self.in_speech = False

    async def feed(self, pcm16: bytes, t_ms: int) -> list:
        if pcm16 == b"S":
            self.in_speech = True
        if pcm16.startswith(b"F"):
            self.in_speech = False
            return [
                FinalTranscript(
                    text=pcm16[1:].decode(),
                    start_ms=t_ms - 2000,
                    end_ms=t_ms - 500,
                    decode_seconds=0.01,
                    audio=np.zeros(1, np.float32),
                )
            ]
        return []

    async def end_turn(self) -> list:
        return []


class FrameLog(MediaBackend):
    def __init__(self):
        self.frames: list[tuple[int, int]] = []

    async def audio(self, pcm16):
        return None

    async def frame(self, t_ms, jpeg):
        self.frames.append((t_ms, len(jpeg)))

    async def answer(self, turn_input, on_delta, on_audio):
        return Reply(text="Fine.", model="log")

    async def interrupt(self):
        return None

    async def reply_cut(self, turn, played_ms):
        return None

    async def aclose(self):
        return None


def play(policy: str | None, speech_at: dict[int, bytes], until_ms: int, *, scene=lambda t: A):
    """Frames every 200 ms and audio every 100 ms to a session; (frames the backend got, metrics events)."""

    async def go():
        backend, events = FrameLog(), []

        async def send(event):
            events.append(event)

        session = Session(
            wire.SessionConfig(camera=True),
            Speech(),
            backend,
            send,
            policy=parse_frame_policy(policy) if policy else None,
        )
        worker = asyncio.create_task(session.run())
        for t in range(0, until_ms + 1, 100):
            if t % 200 == 0:
                await session.on_media(wire.Media(kind=wire.KIND_FRAME, t_ms=t, payload=scene(t)))
            await session.on_media(wire.Media(kind=wire.KIND_AUDIO, t_ms=t, payload=speech_at.get(t, b"x")))
        await asyncio.sleep(0)
        while session.busy and not worker.done():
            await asyncio.sleep(0.01)
        if worker.done():
            worker.result()  # the worker's error, if it failed
        worker.cancel()
        await session.aclose()
        return backend.frames, [e for e in events if isinstance(e, wire.Metrics)]

    return asyncio.run(go())


def test_a_realtime_backend_gets_exactly_the_frames_the_policy_sends_and_the_metrics_count_them():
    # voice activity hears turn 1 from 900 ms (its final at 3500: speech ended at 3000), turn 2 from 3900
    # (speech ended at 6000); a frame meets the policy before the audio chunk of its time is heard
    sent, metrics = play("speech:1/0.3", {900: b"S", 3500: b"Fone", 3900: b"S", 6500: b"Ftwo"}, 7000)
    assert [t for t, _ in sent] == [0, 1000, 2000, 3000, 4000, 5000, 6000]
    one, two = (m.frames for m in metrics)
    # a turn counts the frames offered until it was asked (turn 1: up to 3400 ms, when its final came
    # at 3500); the newest frame sent is the newest by the end of speech (3000)
    assert (one.policy, one.offered, one.sent, one.sent_ms, one.newest_ms, one.window_ms) == (
        "speech:1/0.3",
        18,
        4,
        (0, 1000, 2000, 3000),
        3000,
        3400,
    )
    assert (two.offered, two.sent, two.sent_ms, two.newest_ms, two.window_ms) == (15, 3, (4000, 5000, 6000), 6000, 3000)
    assert one.sent_bytes == sum(size for t, size in sent if t <= 3000)
    assert [m.latency_s.last_frame_age_s for m in metrics] == [0.0, 0.0]


def test_the_age_of_the_newest_frame_counts_from_an_earlier_turn_when_none_was_sent_since():
    sent, metrics = play("fps:0.2", {900: b"S", 3500: b"Fone", 3900: b"S", 7500: b"Ftwo"}, 7500)
    assert [t for t, _ in sent] == [0, 5000]
    assert [m.latency_s.last_frame_age_s for m in metrics] == [3.0, 2.0]
    assert metrics[1].frames.sent_ms == (5000,)


def test_end_sends_the_frame_at_the_end_of_speech_only_and_the_default_for_a_realtime_api_is_one_a_second():
    sent, metrics = play("end", {900: b"S", 3500: b"Fone"}, 3600)
    assert [t for t, _ in sent] == [3000]
    assert metrics[0].frames.sent_ms == (3000,)
    sent, metrics = play(None, {900: b"S", 3500: b"Fone"}, 3600)
    assert [t for t, _ in sent] == [0, 1000, 2000, 3000]
    assert metrics[0].frames.policy == "fps:1"


def test_frame_facts_round_trip_and_bad_fields_are_named():
    facts = FrameFacts(
        policy="fps:1",
        offered=10,
        sent=2,
        sent_bytes=4000,
        sent_ms=(0, 1000),
        window_ms=2000,
        newest_ms=1000,
        newest_frame_scene="earlier",
    )
    data = facts.to_json()
    assert FrameFacts.from_json(data) == facts
    with pytest.raises(RecordError) as caught:
        FrameFacts.from_json({**data, "newest_frame_scene": "later", "sent": "2"}, "transcripts.jsonl:3: frames")
    assert "transcripts.jsonl:3: frames: field 'sent'" in str(caught.value)
    assert "newest_frame_scene" in str(caught.value)
    turn = TurnResult.from_json(
        {"turn": 2, "input": {"turn": 2, "speech": "hi"}, "reply": {"text": "ok"}, "frames": data}, "line 1"
    )
    assert turn.frames == facts


# ---- the sweep through `wearsim bench`


def _bench(run_dir, model: str, base_url: str, env: dict, *extra):
    import json
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--model",
            model,
            "--base-url",
            base_url,
            "--judge-family",
            "lexical",
            "--conditions",
            "baseline",
            "--output-dir",
            str(run_dir),
            "--via",
            "stream",
            "--synthetic-frames",
            "--describer",
            "authored",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )
    records = (
        [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]
        if (run_dir / "transcripts.jsonl").exists()
        else []
    )
    return done, records


@pytest.mark.slow
def test_a_policy_sweep_runs_a_cell_per_policy_and_a_low_rate_hands_turn_2_the_earlier_scene(tmp_path):
    import json

    from tests.fake_openai import FakeOpenAI

    run_dir = tmp_path / "sweep"
    with FakeOpenAI(reply="The one in your hand now.") as server:
        done, records = _bench(
            run_dir,
            "openai:fake",
            server.base_url,
            {"OPENAI_API_KEY": ""},
            "--frame-policy",
            "fps:0.2,fps:2",
            "--staleness",
            "250",
            "--ids",
            "sc-01,sc-02,sc-03",
        )
    assert done.returncode == 0, done.stderr
    assert sorted((r["scenario_id"], r["frame_policy"]) for r in records) == [
        (f"sc-0{i}", p) for i in (1, 2, 3) for p in ("fps:0.2", "fps:2")
    ]
    for record in records:
        assert record["error"] is None
        for turn in record["turns"]:
            frames = turn["frames"]
            assert frames["policy"] == record["frame_policy"] and frames["offered"] >= frames["sent"]
            assert len(frames["sent_ms"]) == frames["sent"] and frames["newest_frame_scene"] in (
                "current",
                "earlier",
                "unknown",
            )
        turn_2 = record["turns"][1]
        # the chat cascade described the newest frame the policy sent: its scene decides the camera block
        expected = BANK_SCENES[record["scenario_id"]][turn_2["frames"]["newest_frame_scene"]]
        assert turn_2["input"]["camera_block"] == expected
    summary = json.loads((run_dir / "summary.json").read_text())
    rows = summary["by_frame_policy"]["baseline"]
    # sc-01's and sc-02's Turn 2 fall between two of fps:0.2's slots (stream_phase_ms places them); fps:2
    # sends a frame of the new scene within half a second, before the 250 ms lead and the question are over
    stale = {
        r["scenario_id"]
        for r in records
        if r["frame_policy"] == "fps:0.2" and r["turns"][1]["frames"]["newest_frame_scene"] == "earlier"
    }
    assert stale == {"sc-01", "sc-02"} and rows["fps:0.2"]["stale_frame_rate"]["k"] == 2
    assert rows["fps:2"]["stale_frame_rate"]["k"] == 0
    assert rows["fps:2"]["frames_per_minute"] > 4 * rows["fps:0.2"]["frames_per_minute"]
    assert set(rows["fps:2"]["by_gap"]) == {"250"}
    findings = (run_dir / "findings.md").read_text()
    assert "## Frame policy" in findings and "| `fps:0.2` |" in findings and "upper bound" not in findings
    assert (run_dir / "plots" / "frame_policy.png").stat().st_size > 10_000
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["frame_policies"] == ["fps:0.2", "fps:2"]


def _scenes():
    from core.scenario import load_bank

    bank = load_bank()
    return {
        s.scenario_id: {"current": s.turn_2_image, "earlier": s.turn_1_image, "unknown": None} for s in bank.scenarios
    }


BANK_SCENES = _scenes()


def test_a_bad_policy_is_one_line_with_exit_2_and_nothing_written(tmp_path):
    for bad in ("fps:0", "sometimes", "change:3"):
        done, _ = _bench(tmp_path / "bad", "local", "http://127.0.0.1:9/v1", {}, "--frame-policy", bad)
        assert done.returncode == 2 and done.stderr.startswith("error: --frame-policy") and done.stderr.count("\n") == 1
        assert not (tmp_path / "bad").exists()


@pytest.mark.slow
def test_a_realtime_api_gets_exactly_the_images_the_records_say_were_sent(tmp_path):
    from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime

    with FakeOpenAIRealtime() as server:
        done, records = _bench(
            tmp_path / "rt",
            "openai-realtime:gpt-realtime",
            server.base_url,
            {"OPENAI_API_KEY": TEST_KEY},
            "--frame-policy",
            "fps:0.5,change:0.01,end",
            "--ids",
            "sc-01,sc-05",
        )
        sessions = server.sessions
    assert done.returncode == 0, done.stderr
    images = sum(
        1 for s in sessions for item in s["items"] for part in item["content"] if part["type"] == "input_image"
    )
    recorded = sum(t["frames"]["sent"] for r in records for t in r["turns"])
    assert len(records) == 6 and all(r["error"] is None for r in records)
    assert images == recorded > 0
    by_policy = {}
    for record in records:
        by_policy.setdefault(record["frame_policy"], 0)
        by_policy[record["frame_policy"]] += sum(t["frames"]["sent"] for t in record["turns"])
    # `end`: one frame per camera turn and the context; `change`: one per scene
    assert by_policy["end"] <= 2 * 2 + 2 and by_policy["change:0.01/2"] <= 3 * 2


@pytest.mark.clock
def test_a_hello_with_a_malformed_policy_is_bad_hello_and_serve_refuses_one_at_start():
    import subprocess
    import sys

    for bad in ("fps:0", "every:2", 3):
        with pytest.raises(wire.WireError) as caught:
            wire.parse_hello(wire.encode_message("hello", protocol=1, config={"frame_policy": bad}))
        assert caught.value.code == "bad_hello" and "\n" not in caught.value.message
    config = wire.parse_hello(wire.encode_message("hello", protocol=1, config={"frame_policy": " change:0.05 "}))[1]
    assert config.frame_policy.name == "change:0.05/2"  # parsed once, into the typed policy
    for field, value in (("frame_size", 5000), ("frame_quality", 101), ("frame_size", True)):
        with pytest.raises(wire.WireError):
            wire.parse_hello(wire.encode_message("hello", protocol=1, config={field: value}))
    done = subprocess.run(
        [sys.executable, "-m", "benchmark", "serve", "--frame-policy", "fps:99", "--port", "9"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.startswith("error: --frame-policy: frame policy 'fps:99'")


def test_camera_conditions_degrade_the_frames_a_session_sends_and_an_unknown_name_is_bad_hello():
    from streaming.app import camera_conditions

    dim = camera_conditions("dim")
    with pytest.raises(wire.WireError) as caught:
        camera_conditions("foggy")
    assert caught.value.code == "bad_hello" and "dim" in caught.value.message

    async def go(profile):
        backend = FrameLog()
        session = Session(
            wire.SessionConfig(camera=True),
            Speech(),
            backend,
            send=lambda e: asyncio.sleep(0),
            policy=parse_frame_policy("fps:1"),
            camera_profile=profile,
        )
        bright = encode_jpeg(np.full((48, 64, 3), 200, np.uint8))
        worker = asyncio.create_task(session.run())
        await session.on_media(wire.Media(kind=wire.KIND_FRAME, t_ms=0, payload=bright))
        await session.on_media(wire.Media(kind=wire.KIND_AUDIO, t_ms=0, payload=b"x"))
        while session.busy:
            await asyncio.sleep(0.01)
        worker.cancel()
        return [frame.jpeg for frame in session.sent.frames]

    [plain], [darkened] = asyncio.run(go(None)), asyncio.run(go(dim))
    assert decode_jpeg(darkened).mean() < 0.3 * decode_jpeg(plain).mean()
