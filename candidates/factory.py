"""`open_candidate(model_id)`: the one place model ids become adapters."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from core.candidate import Candidate
from candidates.model_ids import LOCAL_FAMILY, REALTIME_PROVIDERS, output_problem, parse_model_id


def model_file(model_id: str) -> str | None:
    """The weights file an embedded model id runs (`local`: the bundled GGUF's
    file name; `local:PATH`: PATH's); None for hosted and replayed models.
    Raises RuntimeError with a one-line reason when that file is missing."""
    provider, model = parse_model_id(model_id)
    if provider != "local":
        return None
    if not model:
        from candidates.local import bundled_gguf

        return bundled_gguf().name
    path = Path(model)
    if not path.is_file():
        raise RuntimeError(f"no such GGUF file: {path} (from --model {model_id})")
    return path.name


@contextlib.asynccontextmanager
async def open_candidate(model_id: str, *, base_url: str | None = None, log_dir: Path | None = None,
                         output: str = "text") -> AsyncIterator[Candidate]:
    """A ready candidate; servers it started and clients it opened close on exit.
    `output="audio"` (realtime APIs only) asks for spoken replies."""
    provider, model = parse_model_id(model_id)
    problem = output_problem(model_id, output)
    if problem:
        raise ValueError(f"output {output!r} {problem}")
    servers = []
    if provider == "local":
        from candidates.local import LocalLlamaServer, LocalModel, slots
        from candidates.openai_chat import OpenAIChatCandidate

        count, threads = slots(bundled=not model)
        servers = [LocalLlamaServer(Path(model) if model else None, log_dir=log_dir, threads=threads,
                                    log_name="llama_server.log" if n == 0 else f"llama_server-{n + 1}.log")
                   for n in range(count)]
        try:
            await asyncio.gather(*(asyncio.to_thread(server.start) for server in servers))
            clients = []
            for server in servers:
                client = OpenAIChatCandidate(server.model_path.stem, model_id=model_id, base_url=server.base_url,
                                             api_key="not-needed", family=LOCAL_FAMILY)
                client.endpoint = f"local:{server.model_path.name}"
                clients.append(client)
            candidate = LocalModel(model_id, clients)
        except BaseException:  # cancelled (SIGTERM, Ctrl-C) or failed while starting: never leave one running
            for server in servers:
                server.stop()
            raise
    elif provider == "openai":
        from candidates.openai_chat import OpenAIChatCandidate

        candidate = OpenAIChatCandidate(model, model_id=model_id, base_url=base_url)
    elif provider == "gemini":
        from candidates.gemini import GeminiCandidate

        candidate = GeminiCandidate(model, model_id=model_id, base_url=base_url)
    elif provider in REALTIME_PROVIDERS:
        from candidates.realtime import RealtimeCandidate

        candidate = RealtimeCandidate(model_id, base_url=base_url, output=output)
    elif provider == "anthropic":
        from candidates.anthropic_chat import AnthropicCandidate

        candidate = AnthropicCandidate(model, model_id=model_id, base_url=base_url)
    else:
        from candidates.replay import ReplayCandidate

        candidate = ReplayCandidate(model, model_id=model_id)
    try:
        yield candidate
    finally:
        try:
            await candidate.aclose()
        finally:
            if servers:
                stopping = asyncio.gather(*(asyncio.to_thread(server.stop) for server in servers))
                try:
                    await asyncio.shield(stopping)
                except asyncio.CancelledError:  # cancelled again while stopping: finish the stops here
                    for server in servers:
                        server.stop()
                    raise
