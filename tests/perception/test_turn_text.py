"""The text end of turn (issue 59): the words of the early transcript end a turn when they read as finished
(`perception.turn_text.sounds_complete`) and the voice does not end in a held filler
(`perception.turn_text.spectral_flux`), as soon as that decode is done; words left open wait for the fixed
silence; speech that goes on drops the early transcript and with it the rule's reading."""

import asyncio
import subprocess

import numpy as np
import pytest

from media_effects.audio import SAMPLE_RATE, decode_audio, float_to_pcm16
from perception.asr import Transcript
from perception.speech import FinalTranscript, SpeechSegmenter
from perception.turn_text import HELD_SOUND_FLUX, ends_the_turn, sounds_complete, spectral_flux


@pytest.mark.parametrize(
    "text, complete",
    [
        ("What am I holding?", True),
        ("Is it done.", True),
        ("How long will this take!", True),
        ("Is my grip", False),  # no closing mark: Whisper heard the voice go on
        ("Is this the?", False),  # an article cannot end it
        ("Can you tell me if?", False),
        ("What should I, um.", False),
        ("So the one down there...", False),
        ("Wait,", False),
        ("", False),
        ("  ?  ", False),
    ],
)
def test_a_transcript_reads_as_finished_only_when_closed_on_a_word_that_can_end_a_sentence(text, complete):
    assert sounds_complete(text) is complete


def spoken(folder, text: str) -> np.ndarray:
    """`text` (SSML) spoken by espeak-ng, without the silence after it."""
    path = folder / "line.wav"
    subprocess.run(["espeak-ng", "-m", "-v", "en-us", "-s", "150", "-w", str(path), text], check=True)
    audio = decode_audio(path)
    voiced = np.nonzero(np.abs(audio) > 0.01)[0]
    return audio[: voiced[-1] + 1]


@pytest.fixture(scope="module")
def question(tmp_path_factory):
    return spoken(tmp_path_factory.mktemp("text"), "How long will this take?")


@pytest.fixture(scope="module")
def trailing_um(tmp_path_factory):
    """The first half of a question, then a filler, then the speaker stops (as before a pause)."""
    return spoken(tmp_path_factory.mktemp("text"), "When can I go um")


def test_a_held_filler_changes_less_than_a_spoken_word_and_only_it_holds_the_turn(question, trailing_um):
    pad = np.zeros(int(0.3 * SAMPLE_RATE), np.float32)
    assert spectral_flux(np.concatenate([pad, trailing_um, pad])) < HELD_SOUND_FLUX
    assert spectral_flux(np.concatenate([pad, question, pad])) >= HELD_SOUND_FLUX
    assert not ends_the_turn("When can I go?", np.concatenate([pad, trailing_um, pad]))  # Whisper drops the "um"
    assert ends_the_turn("How long will this take?", np.concatenate([pad, question, pad]))


def test_a_steady_tone_is_held_and_a_clip_too_short_to_tell_never_holds_a_turn_back():
    t = np.arange(int(0.6 * SAMPLE_RATE)) / SAMPLE_RATE
    tone = 0.3 * sum(np.sin(2 * np.pi * 120 * k * t) / k for k in range(1, 8)).astype(np.float32)
    assert spectral_flux(tone) < HELD_SOUND_FLUX / 2
    assert spectral_flux(np.zeros(400, np.float32)) == float("inf")
    assert spectral_flux(np.zeros(SAMPLE_RATE, np.float32)) == float("inf")  # silence: no voice to hear


class Saying:
    """A transcriber that answers `text` at once."""

    def __init__(self, text: str):
        self.text, self.decodes = text, 0

    async def transcribe(self, audio):
        self.decodes += 1
        return Transcript(text=self.text, segments=(), audio_seconds=len(audio) / SAMPLE_RATE, decode_seconds=0.01)

    async def transcribe_if_idle(self, audio):
        return None


def finals(segmenter, audio):
    async def go():
        pcm, events = float_to_pcm16(audio), []
        for i in range(0, len(pcm), 640):
            events += await segmenter.feed(pcm[i : i + 640], i // 32)
            await asyncio.sleep(0)  # the early decode runs between chunks
        return [e for e in events if isinstance(e, FinalTranscript)]

    return asyncio.run(go())


def test_finished_words_end_the_turn_once_the_early_decode_is_done(question):
    audio = np.concatenate([np.zeros(4000, np.float32), question, np.zeros(32000, np.float32)])
    [final] = finals(
        SpeechSegmenter(Saying("How long will this take?"), silence_ms=1500, text_turn=ends_the_turn), audio
    )
    assert final.ended_by == "text" and final.decoded_early
    assert 300 <= final.silence_ms < 400  # 300 ms starts the decode; it answered at once


def test_finished_words_before_a_held_filler_wait_for_the_fixed_silence(trailing_um):
    audio = np.concatenate([np.zeros(4000, np.float32), trailing_um, np.zeros(32000, np.float32)])
    [final] = finals(SpeechSegmenter(Saying("When can I go?"), silence_ms=1500, text_turn=ends_the_turn), audio)
    assert final.ended_by == "silence" and final.silence_ms >= 1500


def test_open_words_wait_for_the_fixed_silence(question):
    audio = np.concatenate([np.zeros(4000, np.float32), question, np.zeros(32000, np.float32)])
    [final] = finals(SpeechSegmenter(Saying("How long will"), silence_ms=1500, text_turn=ends_the_turn), audio)
    assert final.ended_by == "silence" and final.silence_ms >= 1500


def test_without_the_text_rule_finished_words_still_wait_for_the_silence(question):
    audio = np.concatenate([np.zeros(4000, np.float32), question, np.zeros(32000, np.float32)])
    [final] = finals(SpeechSegmenter(Saying("How long will this take?"), silence_ms=1500), audio)
    assert final.ended_by == "silence"


def test_a_pause_shorter_than_the_decode_start_never_ends_the_turn(question):
    """Speech back within 300 ms of silence: no early decode began, so the text rule had nothing to read."""
    pause = np.zeros(int(0.25 * SAMPLE_RATE), np.float32)
    audio = np.concatenate([np.zeros(4000, np.float32), question, pause, question, np.zeros(32000, np.float32)])
    asr = Saying("How long will this take?")
    [final] = finals(SpeechSegmenter(asr, silence_ms=1500, text_turn=ends_the_turn), audio)
    assert final.ended_by == "text" and final.start_ms < 400 and final.end_ms > len(question) * 2 / 16


@pytest.mark.whisper
def test_a_realtime_backend_refuses_the_text_end_of_turn_in_one_line():
    """A realtime API ends its turns itself: the hello asking it for the text rule is refused, naming why."""
    from streaming import wire
    from streaming.local_server import running_server
    from streaming.server_settings import ServerSettings
    from tests.streaming.test_server_hardening import _refused

    backend = "openai-realtime:gpt-realtime-2"
    with running_server(ServerSettings(allowed_backends=(backend,))) as url:
        first, code = _refused(url, config=wire.SessionConfig(backend=backend, end_of_turn="text"))
    assert (first["code"], code) == ("bad_hello", wire.CLOSE_BAD_HELLO)
    assert "end_of_turn 'text'" in first["message"] and "realtime" in first["message"]
