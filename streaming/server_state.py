"""What every session of one server shares (`ServerState`), and the opened backends by model id
(`Backends`). `streaming.app` builds one state per app: the counters from the start, the models and
budgets when the app starts (its lifespan); a connection reads them when it opens its session."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from media_effects.frames import FrameBudget
    from perception.asr import Transcriber
    from perception.speech import VoiceActivity
    from streaming.memory import Trimmer
    from streaming.probe_pace import ProbePace


class BackendLimit(Exception):
    pass


class Backends:
    """Opened candidates by model id, shared across sessions."""

    def __init__(self, base_url: str | None, max_open: int = 4):
        self.base_url = base_url
        self.max_open = max_open
        self._open: dict[str, Any] = {}
        self._stack = contextlib.AsyncExitStack()
        self._locks: dict[str, asyncio.Lock] = {}

    async def get(self, model_id: str) -> Any:
        from candidates import open_candidate

        if model_id not in self._locks and len(self._locks) >= self.max_open:
            raise BackendLimit(
                f"this server opens at most {self.max_open} backends and has them: {', '.join(sorted(self._locks))}"
            )
        async with self._locks.setdefault(model_id, asyncio.Lock()):  # one opening per id; others go on
            if model_id not in self._open:
                try:
                    self._open[model_id] = await self._stack.enter_async_context(
                        open_candidate(model_id, base_url=self.base_url)
                    )
                except BaseException:
                    self._locks.pop(model_id, None)  # a failed opening takes no place
                    raise
            return self._open[model_id]

    async def close(self) -> None:
        await self._stack.aclose()
        self._open.clear()


@dataclass(kw_only=True)
class ServerState:
    """The counters (connections still saying hello, sessions open) and, once the app has started, the
    shared models and budgets; None until then."""

    sessions: int = 0
    pending: int = 0  # connections not yet past their hello
    transcriber: Transcriber | None = None  # one Whisper model
    vad: VoiceActivity | None = None  # one voice activity model
    frame_budget: FrameBudget | None = None  # one byte cap over every session's buffered frames
    probe_pace: ProbePace | None = None  # the proactive probes' pace over the whole server
    backends: Backends | None = None  # the shared chat candidates
    describer_models: Backends | None = None  # the vision-model describers, each opened once
    trimmer: Trimmer | None = None  # gives freed memory back after sessions close
