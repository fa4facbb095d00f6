"""`open_candidate(model_id)`: the one place model ids become adapters."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

from benchmark.candidates.base import Candidate

KEY_VARIABLES = ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "ANTHROPIC_API_KEY")
LOCAL_FAMILY = "local"


def parse_model_id(model_id: str) -> tuple[str, str]:
    """(provider, model) from `provider:model` or a bare id inferred by prefix."""
    model_id = model_id.strip()
    if model_id == "local":
        return "local", ""
    provider, sep, model = model_id.partition(":")
    if sep and provider in {"openai", "gemini", "anthropic", "local", "replay", "openai-realtime", "gemini-live"}:
        if not model:
            raise ValueError(f"model id {model_id!r} names no model after '{provider}:'")
        return provider, model
    if model_id.startswith(("gpt-", "o1", "o3", "o4", "chatgpt-")):
        return "openai", model_id
    if model_id.startswith("gemini-"):
        return "gemini", model_id
    if model_id.startswith("claude-"):
        return "anthropic", model_id
    raise ValueError(
        f"cannot tell the provider of model id {model_id!r}: write openai:MODEL, gemini:MODEL, "
        "anthropic:MODEL, openai-realtime:MODEL, gemini-live:MODEL, local, local:PATH.gguf or replay:RUN_DIR")


def candidate_family(model_id: str) -> str:
    """The judge-resolution family of a model id (openai, gemini, claude, local, replay)."""
    provider, _ = parse_model_id(model_id)
    return {"anthropic": "claude", "openai-realtime": "openai", "gemini-live": "gemini"}.get(provider, provider)


def is_realtime(model_id: str) -> bool:
    """A streaming multimodal API (OpenAI Realtime, Gemini Live)."""
    return parse_model_id(model_id)[0] in ("openai-realtime", "gemini-live")


def default_model_id(env=None) -> str:
    """`local` when no provider key is configured."""
    env = os.environ if env is None else env
    if env.get("OPENAI_API_KEY"):
        return "openai:gpt-4o-mini"
    if env.get("GEMINI_API_KEY") or env.get("GOOGLE_API_KEY"):
        return "gemini:gemini-2.5-flash"
    if env.get("ANTHROPIC_API_KEY"):
        return "anthropic:claude-sonnet-4-5"
    return "local"


@contextlib.asynccontextmanager
async def open_candidate(model_id: str, *, base_url: str | None = None,
                         log_dir: Path | None = None) -> AsyncIterator[Candidate]:
    """A ready candidate; servers it started and clients it opened close on exit."""
    provider, model = parse_model_id(model_id)
    server = None
    if provider == "local":
        from benchmark.candidates.local import LocalLlamaServer
        from benchmark.candidates.openai_chat import OpenAIChatCandidate

        server = LocalLlamaServer(Path(model) if model else None, log_dir=log_dir)
        await asyncio.to_thread(server.start)
        candidate = OpenAIChatCandidate(server.model_path.stem, model_id=model_id, base_url=server.base_url,
                                        api_key="not-needed", family=LOCAL_FAMILY)
    elif provider == "openai":
        from benchmark.candidates.openai_chat import OpenAIChatCandidate

        candidate = OpenAIChatCandidate(model, model_id=model_id, base_url=base_url)
    elif provider == "gemini":
        from benchmark.candidates.gemini import GeminiCandidate

        candidate = GeminiCandidate(model, model_id=model_id, base_url=base_url)
    elif provider in ("openai-realtime", "gemini-live"):
        from benchmark.candidates.realtime import RealtimeCandidate

        candidate = RealtimeCandidate(model_id, base_url=base_url)
    elif provider == "anthropic":
        from benchmark.candidates.anthropic_chat import AnthropicCandidate

        candidate = AnthropicCandidate(model, model_id=model_id, base_url=base_url)
    else:
        from benchmark.candidates.replay import ReplayCandidate

        candidate = ReplayCandidate(model, model_id=model_id)
    try:
        yield candidate
    finally:
        try:
            await candidate.aclose()
        finally:
            if server is not None:
                await asyncio.to_thread(server.stop)
