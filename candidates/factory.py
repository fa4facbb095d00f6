"""`open_candidate(model_id)`: the one place model ids become adapters, through the provider table
(`candidates.providers`), and the openers of the providers that are not a plain chat adapter."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

from candidates import providers
from candidates.model_ids import LOCAL_FAMILY, output_problem, parse_model_id
from core.candidate import Candidate


def model_file(model_id: str) -> str | None:
    """The weights file an embedded model id runs (`local`: the bundled GGUF's
    file name; `local:PATH`: PATH's); None for hosted and replayed models.
    Raises RuntimeError with a one-line reason when that file is missing."""
    provider, model = parse_model_id(model_id)
    if providers.get(provider).kind != "local":
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
    if entry.kind == "chat":  # the adapter class itself
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


def open_replay(model: str, *, model_id: str, base_url: str | None, log_dir: Path | None, output: str):
    """The opener of `replay:RUN_DIR`."""
    from candidates.replay import ReplayCandidate

    return _closing(ReplayCandidate(model, model_id=model_id))


@contextlib.asynccontextmanager
async def open_local(
    model: str, *, model_id: str, base_url: str | None, log_dir: Path | None, output: str
) -> AsyncIterator[Candidate]:
    """The opener of `local` and `local:PATH.gguf`: the embedded llama.cpp servers, started here and
    stopped on exit (also when cancelled while starting or stopping)."""
    from candidates.local import LocalLlamaServer, LocalModel, slots
    from candidates.openai_chat import OpenAIChatCandidate

    count, threads = slots(bundled=not model)
    servers = [
        LocalLlamaServer(
            Path(model) if model else None,
            log_dir=log_dir,
            threads=threads,
            log_name="llama_server.log" if n == 0 else f"llama_server-{n + 1}.log",
        )
        for n in range(count)
    ]
    try:
        await asyncio.gather(*(asyncio.to_thread(server.start) for server in servers))
        clients = []
        for server in servers:
            client = OpenAIChatCandidate(
                server.model_path.stem,
                model_id=model_id,
                base_url=server.base_url,
                api_key="not-needed",
                family=LOCAL_FAMILY,
            )
            client.endpoint = f"local:{server.model_path.name}"
            clients.append(client)
        candidate = LocalModel(model_id, clients)
    except BaseException:  # cancelled (SIGTERM, Ctrl-C) or failed while starting: never leave one running
        for server in servers:
            server.stop()
        raise
    try:
        yield candidate
    finally:
        try:
            await candidate.aclose()
        finally:
            stopping = asyncio.gather(*(asyncio.to_thread(server.stop) for server in servers))
            try:
                await asyncio.shield(stopping)
            except asyncio.CancelledError:  # cancelled again while stopping: finish the stops here
                for server in servers:
                    server.stop()
                raise
