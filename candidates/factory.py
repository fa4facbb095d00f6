"""`open_candidate(model_id)`: the one place model ids become adapters, through the provider table
(`candidates.providers`), and the opener of the realtime providers."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

from candidates import providers
from candidates.model_ids import output_problem, parse_model_id
from core.candidate import Candidate


def model_file(model_id: str) -> str | None:
    """The weights file an embedded model id runs (`local`: the bundled GGUF's
    file name; `local:PATH`: PATH's); None for hosted and replayed models.
    Raises RuntimeError with a one-line reason when that file is missing."""
    provider, model = parse_model_id(model_id)
    if providers.get(provider).kind != providers.LOCAL:
        return None
    if not model:
        from candidates.local import bundled_gguf

        return bundled_gguf().name
    path = Path(model)
    if not path.is_file():
        raise RuntimeError(f"no such GGUF file: {path} (from --model {model_id})")
    return path.name


@contextlib.asynccontextmanager
async def open_candidate(
    model_id: str, *, base_url: str | None = None, log_dir: Path | None = None, output: str = "text"
) -> AsyncIterator[Candidate]:
    """A ready candidate, opened through its provider's entry in `candidates.providers`; servers it
    started and clients it opened close on exit. `output="audio"` (realtime APIs only) asks for
    spoken replies. A provider the table does not hold is a ValueError naming the known ones."""
    provider, model = parse_model_id(model_id)
    entry = providers.get(provider)
    problem = output_problem(model_id, output)
    if problem:
        raise ValueError(f"output {output!r} {problem}")
    opener = entry.load_opener()
    if entry.kind == providers.CHAT:  # the adapter class itself
        candidate = opener(model, model_id=model_id, base_url=base_url)
        try:
            yield candidate
        finally:
            await candidate.aclose()
        return
    async with opener(model, model_id=model_id, base_url=base_url, log_dir=log_dir, output=output) as candidate:
        yield candidate


class _ClosingCandidate(Candidate, Protocol):
    """A candidate holding clients or sessions, closed on exit."""

    async def aclose(self) -> None: ...


@contextlib.asynccontextmanager
async def _closing(candidate: _ClosingCandidate) -> AsyncIterator[Candidate]:
    try:
        yield candidate
    finally:
        await candidate.aclose()


def open_realtime(model: str, *, model_id: str, base_url: str | None, log_dir: Path | None, output: str):
    """The opener of the realtime providers (`openai-realtime`, `gemini-live`)."""
    from candidates.realtime import RealtimeCandidate

    return _closing(RealtimeCandidate(model_id, base_url=base_url, output=output))
