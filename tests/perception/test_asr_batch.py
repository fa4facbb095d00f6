"""The shared decode queue (issue 36): utterances that end together are decoded in
one batch by the one model, each caller gets its own clip's text, and the batched
path (a 10 s window for short clips) keeps the word error rate of the plain one."""

import asyncio
import subprocess

import numpy as np
import pytest

from core.scenario import load_bank
from media_effects.audio import decode_audio
from perception.asr import MAX_BATCH, Transcriber
from perception.quality import word_error_rate

BANK = load_bank()
WER_SCENARIOS = ("sc-01", "sc-05", "sc-13", "sc-21", "sc-27", "sc-33", "sc-43", "sc-47")
MAX_MEAN_WER = 0.45  # as tests/perception/test_perception.py holds the plain path to


@pytest.fixture(scope="module")
def lines(tmp_path_factory):
    folder = tmp_path_factory.mktemp("asr")
    spoken = []
    for sid in WER_SCENARIOS:
        for i, text in enumerate((BANK.get(sid).turn_1_user, BANK.get(sid).turn_2_user)):
            path = folder / f"{sid}-{i}.wav"
            subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(path), text], check=True)
            spoken.append((text, decode_audio(path)))
    return spoken


class Counting(Transcriber):
    def __init__(self):
        super().__init__()
        self.batches: list[int] = []

    def transcribe_batch_sync(self, clips):
        self.batches.append(len(clips))
        return super().transcribe_batch_sync(clips)


@pytest.mark.whisper
def test_utterances_that_end_together_are_decoded_in_batches_each_to_its_caller(lines):
    transcriber = Counting()

    async def go():
        return await asyncio.gather(*(transcriber.transcribe(audio) for _, audio in lines))

    transcripts = asyncio.run(go())
    assert len(transcripts) == len(lines) == 16
    assert len(transcriber.batches) < len(lines) and max(transcriber.batches) <= MAX_BATCH
    assert sum(transcriber.batches) == len(lines)  # every clip decoded once
    rates = [word_error_rate(text, t.text) for (text, _), t in zip(lines, transcripts)]
    assert sum(rates) / len(rates) <= MAX_MEAN_WER, rates
    # each caller got its own clip back (the clips' lengths differ), in the order asked
    assert [t.audio_seconds for t in transcripts] == [len(audio) / 16000 for _, audio in lines]
    assert len({len(audio) for _, audio in lines}) == len(lines)


class Overlapping(Counting):
    """Notes how many batches are being decoded at once."""

    def __init__(self, workers):
        Transcriber.__init__(self, workers=workers)
        self.batches, self.now, self.most = [], 0, 0
        self._count = __import__("threading").Lock()

    def transcribe_batch_sync(self, clips):
        with self._count:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            return super().transcribe_batch_sync(clips)
        finally:
            with self._count:
                self.now -= 1


@pytest.mark.whisper
@pytest.mark.parametrize("workers", [1, 2])
def test_the_decoders_take_batches_at_once_up_to_their_number(lines, workers):
    transcriber = Overlapping(workers)

    async def go():
        return await asyncio.gather(*(transcriber.transcribe(audio) for _, audio in lines))

    transcripts = asyncio.run(go())
    assert transcriber.most == workers and sum(transcriber.batches) == len(lines)
    assert [t.audio_seconds for t in transcripts] == [len(audio) / 16000 for _, audio in lines]
    rates = [word_error_rate(text, t.text) for (text, _), t in zip(lines, transcripts)]
    assert sum(rates) / len(rates) <= MAX_MEAN_WER, rates


@pytest.mark.whisper
def test_a_partial_is_skipped_while_finals_wait_and_a_gone_caller_is_skipped(lines):
    transcriber = Counting()

    async def go():
        first = asyncio.ensure_future(transcriber.transcribe(lines[0][1]))
        await asyncio.sleep(0)
        gone = asyncio.ensure_future(transcriber.transcribe(lines[1][1]))
        await asyncio.sleep(0)
        gone.cancel()
        partial = await transcriber.transcribe_if_idle(lines[2][1])
        return await first, partial

    first, partial = asyncio.run(go())
    assert partial is None and word_error_rate(lines[0][0], first.text) < 1.0
    assert transcriber.batches == [1]  # the cancelled clip was never decoded


def test_a_failed_batch_is_every_callers_error(lines, monkeypatch):
    transcriber = Transcriber()
    monkeypatch.setattr(transcriber, "transcribe_batch_sync", lambda clips: (_ for _ in ()).throw(RuntimeError("no")))

    async def go():
        return await asyncio.gather(*(transcriber.transcribe(audio) for _, audio in lines[:3]), return_exceptions=True)

    assert all(isinstance(r, RuntimeError) for r in asyncio.run(go()))


@pytest.mark.whisper
def test_a_long_clip_gets_the_whole_window():
    transcriber = Transcriber()
    long = np.zeros(16000 * 12, np.float32)
    (result,) = transcriber.transcribe_batch_sync([long])
    assert result.audio_seconds == 12.0
