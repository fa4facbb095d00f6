"""The segmenter tells the early decode's transcript while the end-of-turn silence is still being waited
(`EarlyTranscript`, issue 59), so the streaming session can have the model evaluate the turn's prompt before
the turn ends: once per early decode, with the clip the turn will end with if the silence runs out."""

import asyncio
import subprocess

import numpy as np
import pytest

from media_effects.audio import SAMPLE_RATE, decode_audio, float_to_pcm16
from perception.asr import Transcript
from perception.speech import EarlyTranscript, FinalTranscript, SpeechPaused, SpeechSegmenter


@pytest.fixture(scope="module")
def question(tmp_path_factory):
    path = tmp_path_factory.mktemp("early") / "q.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(path), "How long will this take?"], check=True)
    audio = decode_audio(path)
    voiced = np.nonzero(np.abs(audio) > 0.01)[0]
    return audio[: voiced[-1] + 1]


class Counting:
    """A transcriber that answers at once with the clip's length in samples, and counts its decodes."""

    def __init__(self):
        self.decodes = 0

    async def transcribe(self, audio):
        self.decodes += 1
        return Transcript(
            text=f"clip of {len(audio)}", segments=(), audio_seconds=len(audio) / SAMPLE_RATE, decode_seconds=0.01
        )

    async def transcribe_if_idle(self, audio):
        return None


def _events(segmenter, audio):
    async def go():
        pcm, events = float_to_pcm16(audio), []
        for i in range(0, len(pcm), 640):
            events += await segmenter.feed(pcm[i : i + 640], i // 32)
            await asyncio.sleep(0)  # the early decode's task runs between chunks, as on a live stream
        return events

    return asyncio.run(go())


def test_the_early_transcript_comes_once_before_the_turn_ends_with_its_clip(question):
    asr = Counting()
    audio = np.concatenate([np.zeros(4000, np.float32), question, np.zeros(32000, np.float32)])
    events = [
        e
        for e in _events(SpeechSegmenter(asr, silence_ms=1500), audio)
        if isinstance(e, (EarlyTranscript, FinalTranscript))
    ]
    assert [type(e) for e in events] == [EarlyTranscript, FinalTranscript]
    early, final = events
    assert (early.text, early.start_ms, early.end_ms) == (final.text, final.start_ms, final.end_ms)
    assert final.decoded_early and asr.decodes == 1


def test_the_pause_is_told_as_its_clip_goes_to_the_decoder_before_its_words_are_known(question):
    asr = Counting()
    audio = np.concatenate([np.zeros(4000, np.float32), question, np.zeros(32000, np.float32)])
    events = [
        e
        for e in _events(SpeechSegmenter(asr, silence_ms=1500), audio)
        if isinstance(e, (SpeechPaused, EarlyTranscript, FinalTranscript))
    ]
    assert [type(e) for e in events] == [SpeechPaused, EarlyTranscript, FinalTranscript]
    paused, early, _ = events
    assert (paused.start_ms, paused.end_ms) == (early.start_ms, early.end_ms)


def test_speech_after_the_early_transcript_brings_another_for_the_longer_clip(question):
    asr = Counting()
    pause = np.zeros(int(0.7 * SAMPLE_RATE), np.float32)  # past the 300 ms that starts an early decode
    audio = np.concatenate([np.zeros(4000, np.float32), question, pause, question, np.zeros(32000, np.float32)])
    events = [
        e
        for e in _events(SpeechSegmenter(asr, silence_ms=1500), audio)
        if isinstance(e, (EarlyTranscript, FinalTranscript))
    ]
    assert [type(e) for e in events] == [EarlyTranscript, EarlyTranscript, FinalTranscript]
    first, second, final = events
    assert first.end_ms < second.end_ms == final.end_ms and second.text == final.text != first.text


def test_no_early_transcript_when_the_turn_ends_in_the_speech(question):
    asr = Counting()
    audio = np.concatenate([np.zeros(4000, np.float32), question])

    async def go():
        segmenter, pcm, events = SpeechSegmenter(asr, silence_ms=1500), float_to_pcm16(audio), []
        for i in range(0, len(pcm), 640):
            events += await segmenter.feed(pcm[i : i + 640], i // 32)
        return events + await segmenter.end_turn()  # push-to-talk let go while speaking

    events = asyncio.run(go())
    assert [type(e) for e in events if isinstance(e, (EarlyTranscript, FinalTranscript))] == [FinalTranscript]
