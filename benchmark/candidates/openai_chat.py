"""Any OpenAI-compatible chat endpoint through the `openai` SDK (OpenAI,
vLLM, Ollama, llama.cpp's server, routers)."""

from __future__ import annotations

import base64
import os
import time
from typing import Callable

from benchmark.candidates.base import GenerationConfig, Message, Reply, Usage
from benchmark.candidates.retry import RetryableError, retry_after_seconds, with_retries


def to_openai_messages(messages: list[Message], system: str) -> list[dict]:
    """Our messages in the chat-completions format; images as data-URI parts."""
    out: list[dict] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if not message.images:
            out.append({"role": message.role, "content": message.text})
            continue
        parts: list[dict] = [{"type": "text", "text": message.text}]
        for image in message.images:
            data = base64.b64encode(image.data).decode("ascii")
            parts.append({"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{data}"}})
        out.append({"role": message.role, "content": parts})
    return out


class OpenAIChatCandidate:
    family = "openai"

    def __init__(self, model: str, *, model_id: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, family: str = "openai", timeout: float = 120.0, attempts: int = 5):
        from openai import AsyncOpenAI

        self.model = model
        self.model_id = model_id or f"openai:{model}"
        self.family = family
        self.attempts = attempts
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        # a local endpoint needs no key; the SDK insists on a non-empty one
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
        if not api_key:
            raise RuntimeError(f"{self.model_id}: set OPENAI_API_KEY, or --base-url for a local endpoint")
        self.client = AsyncOpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)

    async def respond(self, messages: list[Message], system: str, config: GenerationConfig,
                      on_delta: Callable[[str], None] | None = None) -> Reply:
        return await with_retries(lambda: self._respond_once(messages, system, config, on_delta), attempts=self.attempts)

    async def _respond_once(self, messages, system, config, on_delta) -> Reply:
        import openai

        kwargs = dict(model=self.model, messages=to_openai_messages(messages, system),
                      temperature=config.temperature, max_tokens=config.max_tokens)
        if config.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        started = time.monotonic()
        first_token = None
        pieces: list[str] = []
        usage = Usage()
        try:
            if on_delta is None:  # one response: usage always comes back
                response = await self.client.chat.completions.create(**kwargs)
                if response.usage is not None:
                    usage = Usage(response.usage.prompt_tokens or 0, response.usage.completion_tokens or 0)
                text = response.choices[0].message.content or "" if response.choices else ""
                return Reply(text, self.model_id, usage, time.monotonic() - started, None)
            stream = await self.client.chat.completions.create(
                stream=True, stream_options={"include_usage": True}, **kwargs)
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
                for choice in chunk.choices or ():
                    text = choice.delta.content if choice.delta else None
                    if text:
                        if first_token is None:
                            first_token = time.monotonic() - started
                        pieces.append(text)
                        if on_delta is not None:
                            on_delta(text)
        except openai.RateLimitError as exc:
            raise RetryableError(f"{self.model_id}: rate limited (429)", retry_after_seconds(exc.response.headers)) from None
        except openai.InternalServerError as exc:
            raise RetryableError(f"{self.model_id}: server error {exc.status_code}", retry_after_seconds(exc.response.headers)) from None
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise RetryableError(f"{self.model_id}: {type(exc).__name__}") from None
        except openai.APIStatusError as exc:
            raise RuntimeError(f"{self.model_id}: HTTP {exc.status_code}: {_safe_message(exc)}") from None
        return Reply("".join(pieces), self.model_id, usage, time.monotonic() - started, first_token)

    async def aclose(self) -> None:
        await self.client.close()


def _safe_message(exc) -> str:
    """The provider's error message without anything that could carry a key."""
    try:
        body = exc.response.json()
        message = body.get("error", {}).get("message") if isinstance(body, dict) else None
    except Exception:
        message = None
    return (message or type(exc).__name__)[:300]
