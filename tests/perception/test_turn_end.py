"""The learned end of turn (issue 36): the Smart Turn model's input and file, the
segmenter's rules (`model` after a short silence, the fixed `silence` as the
fallback, `hint`), the turn facts in the metrics and the records, and the
session cap that follows a run's concurrency."""

import asyncio
import re
import subprocess

import numpy as np
import pytest

from core.records import RecordError
from media_effects.audio import decode_audio, float_to_pcm16
from perception.asr import Transcriber
from perception.speech import FinalTranscript, SpeechSegmenter
from perception.turn_end import MODEL_SAMPLES, TurnEndModel, model_input, model_path
from tests.paths import ROOT


@pytest.fixture(scope="module")
def transcriber():
    return Transcriber()


@pytest.fixture(scope="module")
def question(tmp_path_factory):
    path = tmp_path_factory.mktemp("turn") / "q.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(path), "How long will this take?"], check=True)
    audio = decode_audio(path)
    voiced = np.nonzero(np.abs(audio) > 0.01)[0]
    return audio[: voiced[-1] + 1]


class Scripted:
    """An end-of-turn model that answers a fixed probability and counts its calls."""

    def __init__(self, probability: float):
        self.value, self.calls = probability, []

    def probability(self, audio):
        self.calls.append(len(audio))
        return self.value


def _stream(segmenter, audio, chunk_samples=320):
    async def go():
        pcm, events = float_to_pcm16(audio), []
        for i in range(0, len(pcm), chunk_samples * 2):
            events += await segmenter.feed(pcm[i : i + chunk_samples * 2], i // 32)
        return events

    return asyncio.run(go())


def _speech_end_ms(audio) -> float:
    return len(audio) / 16


def test_a_model_that_hears_a_finished_utterance_ends_the_turn_after_the_short_silence(transcriber, question):
    model = Scripted(0.9)
    segmenter = SpeechSegmenter(transcriber, silence_ms=1500, turn_model=model)
    audio = np.concatenate([np.zeros(4000, np.float32), question, np.zeros(32000, np.float32)])
    finals = [e for e in _stream(segmenter, audio) if isinstance(e, FinalTranscript)]
    assert len(finals) == 1 and finals[0].ended_by == "model" and len(model.calls) == 1
    assert 200 <= finals[0].silence_ms < 300 and finals[0].probability == pytest.approx(0.9)
    assert finals[0].end_ms < (4000 + len(question)) / 16 + 400  # not the 1.5 s silence
    assert finals[0].speech_end_ms <= finals[0].end_ms and finals[0].ended_at is not None


def test_a_model_that_hears_more_to_come_leaves_the_turn_to_the_fixed_silence(transcriber, question):
    model = Scripted(0.1)
    segmenter = SpeechSegmenter(transcriber, silence_ms=1500, turn_model=model)
    audio = np.concatenate([np.zeros(4000, np.float32), question, np.zeros(40000, np.float32)])
    finals = [e for e in _stream(segmenter, audio) if isinstance(e, FinalTranscript)]
    assert len(finals) == 1 and finals[0].ended_by == "silence" and finals[0].silence_ms >= 1500
    assert len(model.calls) == 5  # at 200, 500, 800, 1100 and 1400 ms of silence


def test_without_a_model_the_fixed_silence_and_the_hint_end_turns(transcriber, question):
    audio = np.concatenate([np.zeros(4000, np.float32), question, np.zeros(16000, np.float32)])
    finals = [e for e in _stream(SpeechSegmenter(transcriber, silence_ms=600), audio) if isinstance(e, FinalTranscript)]
    assert [f.ended_by for f in finals] == ["silence"] and finals[0].probability is None
    segmenter = SpeechSegmenter(transcriber, silence_ms=5000)
    _stream(segmenter, audio)
    hinted = asyncio.run(segmenter.end_turn())
    assert hinted[0].ended_by == "hint" and 800 <= hinted[0].silence_ms <= 1000


class Asking(Transcriber):
    """The real Whisper, noting the stream time and the clip length of every decode asked for."""

    def __init__(self):
        super().__init__()
        self.now_ms, self.asked = 0, []

    async def transcribe(self, audio):
        self.asked.append((self.now_ms, len(audio)))
        return await super().transcribe(audio)


def _stream_noting_time(segmenter, asr, audio, chunk_samples=320):
    async def go():
        pcm, events = float_to_pcm16(audio), []
        for i in range(0, len(pcm), chunk_samples * 2):
            asr.now_ms = i // 32
            events += await segmenter.feed(pcm[i : i + chunk_samples * 2], i // 32)
        return events

    return asyncio.run(go())


def test_the_transcript_is_decoded_while_the_silence_is_waited(question):
    asr = Asking()
    audio = np.concatenate([np.zeros(4000, np.float32), question, np.zeros(32000, np.float32)])
    finals = [
        e
        for e in _stream_noting_time(SpeechSegmenter(asr, silence_ms=1500), asr, audio)
        if isinstance(e, FinalTranscript)
    ]
    assert len(finals) == 1 and finals[0].ended_by == "silence" and finals[0].decoded_early
    assert len(asr.asked) == 1  # one decode, asked for once 300 ms of silence had followed the speech
    asked_ms, clip = asr.asked[0]
    assert finals[0].speech_end_ms + 300 <= asked_ms <= finals[0].speech_end_ms + 300 + 32 + 20
    assert asked_ms < finals[0].end_ms - 300 + 1500 - 1000  # a second before the silence ended the turn
    assert clip == len(finals[0].audio)  # the very clip the turn ended with
    alone = Transcriber().transcribe_batch_sync([finals[0].audio])[0].text
    assert finals[0].text == alone and "long" in alone.lower()


def test_speech_after_a_pause_drops_the_early_decode(question):
    asr = Asking()
    pause = np.zeros(int(0.7 * 16000), np.float32)  # past the 300 ms that starts an early decode
    audio = np.concatenate([np.zeros(4000, np.float32), question, pause, question, np.zeros(32000, np.float32)])
    finals = [
        e
        for e in _stream_noting_time(SpeechSegmenter(asr, silence_ms=1500), asr, audio)
        if isinstance(e, FinalTranscript)
    ]
    assert len(finals) == 1 and finals[0].decoded_early  # one turn, both questions in it
    assert len(asr.asked) == 2 and asr.asked[0][1] < asr.asked[1][1] == len(finals[0].audio)
    assert finals[0].text.lower().count("long") == 2, finals[0].text


def test_a_hint_in_the_silence_takes_the_early_decode_and_a_hint_in_speech_decodes_then(question):
    asr = Asking()
    audio = np.concatenate([np.zeros(4000, np.float32), question, np.zeros(16000, np.float32)])
    segmenter = SpeechSegmenter(asr, silence_ms=5000)

    async def go():  # one loop: the early decode is a task of the session's loop
        pcm = float_to_pcm16(audio)
        for i in range(0, len(pcm), 640):
            asr.now_ms = i // 32
            await segmenter.feed(pcm[i : i + 640], i // 32)
        in_silence = await segmenter.end_turn()  # a second after the speech: push-to-talk let go late
        for i in range(0, len(pcm) - 16000 * 2, 640):  # the question again, cut off inside its speech
            await segmenter.feed(pcm[i : i + 640], (len(pcm) + i) // 32)
        return in_silence, await segmenter.end_turn()

    in_silence, in_speech = asyncio.run(go())
    assert in_silence[0].ended_by == "hint" and in_silence[0].decoded_early and "long" in in_silence[0].text.lower()
    assert 800 <= in_silence[0].silence_ms <= 1000 and len(asr.asked) == 2  # the early decode, then the second turn's
    assert in_speech[0].ended_by == "hint" and not in_speech[0].decoded_early and in_speech[0].silence_ms < 300


def test_the_model_input_is_the_last_eight_seconds_with_zeros_in_front():
    from faster_whisper.feature_extractor import FeatureExtractor

    extractor = FeatureExtractor(feature_size=80)
    rng = np.random.default_rng(1)
    long = rng.standard_normal(MODEL_SAMPLES + 16000).astype(np.float32)
    assert model_input(long, extractor).shape == (80, 800)
    np.testing.assert_allclose(model_input(long, extractor), model_input(long[-MODEL_SAMPLES:], extractor))
    short = model_input(long[:16000], extractor)
    assert short.shape == (80, 800)
    assert short[:, :690].std(axis=1).max() < 1e-4 < short[:, -90:].std(axis=1).min()  # zeros, then the clip


def test_the_shipped_model_loads_and_scores(question):
    assert model_path().name == "smart-turn-v3.2-cpu.onnx"
    model = TurnEndModel()
    score = model.probability(np.concatenate([question, np.zeros(3200, np.float32)]))
    assert 0.0 <= score <= 1.0


def test_a_missing_model_file_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("WEARSIM_TURN_MODEL", str(tmp_path / "none.onnx"))
    with pytest.raises(RuntimeError, match="WEARSIM_TURN_MODEL names no file"):
        model_path()


def test_turn_end_facts_round_trip_and_older_records_read():
    from core.candidate import Reply
    from core.records import TurnEnd, TurnInput, TurnResult

    facts = TurnEnd(rule="model", silence_s=0.2, after_speech_s=0.21, probability=0.83)
    data = facts.to_json()
    assert data == {"rule": "model", "silence_waited_s": 0.2, "speech_end_to_turn_end": 0.21, "model_probability": 0.83}
    assert TurnEnd.from_json(data) == facts
    result = TurnResult(
        turn=1,
        input=TurnInput(turn=1, camera_block=None, speech="hi", camera_source=None, speech_source="perceived"),
        reply=Reply(text="r", model="m"),
        turn_end=facts,
    )
    assert TurnResult.from_json(result.to_json(), "turn 1").turn_end == facts
    older = {k: v for k, v in result.to_json().items() if k != "turn_end"}
    assert TurnResult.from_json(older, "turn 1").turn_end == TurnEnd()
    with pytest.raises(RecordError, match="'rule' must be one of model, text, silence, hint, cap"):
        TurnEnd.from_json({**data, "rule": "guess"})


def test_the_hello_names_the_end_of_turn_rule():
    from streaming import wire

    assert wire.SessionConfig.from_dict({}).end_of_turn == "silence"  # the model failed the premature-end check
    assert wire.SessionConfig.from_dict({"end_of_turn": "model"}).end_of_turn == "model"
    assert wire.SessionConfig.from_dict({"end_of_turn": "text"}).end_of_turn == "text"
    with pytest.raises(wire.WireError, match="end_of_turn"):
        wire.SessionConfig.from_dict({"end_of_turn": "vibes"})


def test_the_in_process_server_has_room_for_the_run():
    from streaming.server_settings import ServerSettings

    assert ServerSettings.with_room_for(32).max_sessions >= 32
    assert ServerSettings.with_room_for(32).max_pending_hellos >= 32
    assert ServerSettings.with_room_for(2).max_sessions == ServerSettings().max_sessions
    source = (ROOT / "benchmark" / "cli" / "bench_conversations.py").read_text()
    assert re.search(r"with_room_for\(\s*settings\.concurrency", source)  # sized to the run, however wrapped


@pytest.mark.whisper
@pytest.mark.parametrize("end_of_turn", ["model", "silence", "text"])
def test_a_stream_turn_records_the_rule_that_ended_it(server_url, end_of_turn):
    """Through the server and the glasses: the metrics event carries the turn's end, the
    record keeps it, and latencies count from the end of speech (the silence included)."""
    from benchmark.conversations.stream import StreamConversation
    from core.scenario import load_bank
    from simulator.settings import GlassesSettings
    from streaming.wire import SessionConfig

    bank = load_bank()

    async def go():
        glasses = GlassesSettings(
            url=server_url,
            hello=SessionConfig(backend="openai:fake", silence_ms=600, end_of_turn=end_of_turn),
            speed=1.0,
        )
        conversation = StreamConversation(bank.get("sc-01"), bank.condition("baseline"), glasses)
        try:
            return await conversation.send(1)
        finally:
            await conversation.aclose()

    result = asyncio.run(go())
    end = result.turn_end
    assert end.rule in {"model": ("model", "silence"), "text": ("text", "silence")}.get(end_of_turn, ("silence",))
    assert end.silence_s >= 0.2
    assert end.after_speech_s >= end.silence_s - 0.1 and (end.probability is not None) == (end_of_turn == "model")
    assert result.metrics.transcript_final >= end.after_speech_s
    assert result.to_json()["turn_end"]["rule"] == end.rule
