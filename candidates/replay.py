"""`replay:RUN_DIR_OR_TRANSCRIPTS`: answers with responses recorded in a run.

A reply is looked up by the system prompt and every user message sent so
far, as recorded in each trial's `messages`; when several trials recorded
the same conversation their replies are returned in turn. Used by tests and
to re-run judging without calling the candidate.
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from core.candidate import GenerationConfig, Message, Reply


class ReplayCandidate:
    family = "replay"

    def __init__(self, source: str | Path, *, model_id: str | None = None):
        path = Path(source)
        if path.is_dir():
            path = path / "transcripts.jsonl"
        if not path.exists():
            raise RuntimeError(f"replay: no transcripts at {path}")
        self.model_id = model_id or f"replay:{source}"
        self._replies: dict[tuple, list[str]] = defaultdict(list)
        self._served: dict[tuple, int] = defaultdict(int)
        from core.records import RecordError, TrialRecord

        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            where = f"replay: {path}: line {number}"
            try:
                record = TrialRecord.from_json(json.loads(line), where)
            except json.JSONDecodeError as exc:
                raise RuntimeError(f"{where}: invalid JSON: {exc.msg}") from None
            except RecordError as exc:
                raise RuntimeError(str(exc)) from None
            if record.errored:
                continue
            if not record.messages:
                raise RuntimeError(f"{where}: no recorded messages; replay needs transcripts written by wearsim bench")
            users: list[str] = []
            for message in record.messages:
                if message.role == "user":
                    users.append(message.text)
                else:
                    self._replies[(record.system_prompt or "", tuple(users))].append(message.text)

    async def respond(
        self,
        messages: list[Message],
        system: str,
        config: GenerationConfig,
        on_delta: Callable[[str], None] | None = None,
    ) -> Reply:
        key = (system, tuple(m.text for m in messages if m.role == "user"))
        replies = self._replies.get(key)
        if not replies:
            raise RuntimeError(
                f"{self.model_id}: no recorded reply for this conversation (last user message: {key[1][-1][:80]!r})"
            )
        text = replies[self._served[key] % len(replies)]
        self._served[key] += 1
        if on_delta is not None:
            on_delta(text)
        return Reply(text=text, model=self.model_id)

    async def aclose(self) -> None:
        return None


@contextlib.asynccontextmanager
async def open_replay(
    model: str, *, model_id: str, base_url: str | None, log_dir: Path | None, output: str
) -> AsyncIterator[ReplayCandidate]:
    """The opener of `replay:RUN_DIR` (its entry in `candidates.providers`)."""
    candidate = ReplayCandidate(model, model_id=model_id)
    try:
        yield candidate
    finally:
        await candidate.aclose()
