"""Gemini through `google-genai`; images as inline bytes."""

from __future__ import annotations

import os
import time

from candidates import ratelimit
from candidates.retry import RetryableError
from candidates.usage import gemini_usage
from core.candidate import Message, Reply, Usage


class GeminiCandidate(ratelimit.LimitedChat):
    family = "gemini"

    def __init__(
        self,
        model: str,
        *,
        model_id: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        attempts: int = 5,
    ):
        from google import genai
        from google.genai import types

        self.model = model
        self.model_id = model_id or f"gemini:{model}"
        self.attempts = attempts
        self.endpoint = base_url or "default"  # the cache and the rate limiter key on it
        self.limiter = ratelimit.limiter_for("gemini", self.endpoint)
        api_key = api_key or os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
        if not api_key:
            raise RuntimeError(f"{self.model_id}: set GEMINI_API_KEY (or GOOGLE_API_KEY)")
        http_options = types.HttpOptions(base_url=base_url, api_version="v1beta") if base_url else None
        self.client = genai.Client(api_key=api_key, http_options=http_options)
        self.types = types

    def _contents(self, messages: list[Message]) -> list:
        types = self.types
        contents = []
        for message in messages:
            parts = [types.Part.from_text(text=message.text)]
            parts += [types.Part.from_bytes(data=image.data, mime_type=image.mime_type) for image in message.images]
            contents.append(types.Content(role="model" if message.role == "assistant" else "user", parts=parts))
        return contents

    async def _request(self, messages, system, config, on_delta) -> Reply:
        from google.genai import errors

        generation = self.types.GenerateContentConfig(
            system_instruction=system or None,
            temperature=config.temperature,
            max_output_tokens=config.max_tokens,
            response_mime_type="application/json" if config.json_mode else None,
        )
        started = time.monotonic()
        first_token = None
        pieces: list[str] = []
        usage = Usage()
        try:
            stream = await self.client.aio.models.generate_content_stream(
                model=self.model, contents=self._contents(messages), config=generation
            )
            async for chunk in stream:
                if chunk.usage_metadata is not None:
                    usage = gemini_usage(
                        chunk.usage_metadata, text_only_output=True, text_only_input=not any(m.images for m in messages)
                    )
                if chunk.text:
                    if first_token is None:
                        first_token = time.monotonic() - started
                    pieces.append(chunk.text)
                    if on_delta is not None:
                        on_delta(chunk.text)
        except errors.APIError as exc:
            if exc.code == 429 or (exc.code or 0) >= 500:
                raise RetryableError(f"{self.model_id}: HTTP {exc.code}") from None
            raise RuntimeError(f"{self.model_id}: HTTP {exc.code}: {(exc.message or '')[:300]}") from None
        return Reply(
            text="".join(pieces),
            model=self.model_id,
            usage=usage,
            latency_s=time.monotonic() - started,
            first_token_s=first_token,
        )

    async def aclose(self) -> None:
        return None
