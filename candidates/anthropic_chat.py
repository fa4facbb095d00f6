"""Claude through the optional `anthropic` SDK (`pip install 'wearsim[anthropic]'`)."""

from __future__ import annotations

import base64
import os
import time

from candidates import ratelimit
from candidates.retry import RetryableError, retry_after_seconds
from candidates.usage import anthropic_usage
from core.candidate import Message, Reply


class AnthropicCandidate(ratelimit.LimitedChat):
    family = "claude"

    def __init__(
        self,
        model: str,
        *,
        model_id: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        attempts: int = 5,
    ):
        try:
            import anthropic
        except ImportError:
            raise RuntimeError("anthropic:* models need the extra: pip install 'wearsim[anthropic]'") from None
        self.model = model
        self.model_id = model_id or f"anthropic:{model}"
        self.attempts = attempts
        self.endpoint = base_url or "default"  # the cache and the rate limiter key on it
        self.limiter = ratelimit.limiter_for("anthropic", self.endpoint)
        api_key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not api_key:
            raise RuntimeError(f"{self.model_id}: set ANTHROPIC_API_KEY")
        self.client = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0)

    @staticmethod
    def _messages(messages: list[Message]) -> list[dict]:
        out = []
        for message in messages:
            content: list[dict] = [{"type": "text", "text": message.text}]
            for image in message.images:
                content.append(
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": image.mime_type,
                            "data": base64.b64encode(image.data).decode("ascii"),
                        },
                    }
                )
            out.append({"role": message.role, "content": content})
        return out

    async def _request(self, messages, system, config, on_delta) -> Reply:
        import anthropic

        started = time.monotonic()
        first_token = None
        pieces: list[str] = []
        try:
            # temperature goes in the body: SDK 1.x has no keyword for it, the API still reads it.
            # The SDK's stubs want its TypedDicts and (2.x) `Omit`; plain dicts and NOT_GIVEN, which
            # anthropic>=0.30 knows, are what it takes at run time.
            async with self.client.messages.stream(
                model=self.model,
                system=system or anthropic.NOT_GIVEN,  # type: ignore[arg-type]
                messages=self._messages(messages),  # type: ignore[arg-type]
                max_tokens=config.max_tokens,
                extra_body={"temperature": config.temperature},
            ) as stream:
                async for text in stream.text_stream:
                    if first_token is None:
                        first_token = time.monotonic() - started
                    pieces.append(text)
                    if on_delta is not None:
                        on_delta(text)
                final = await stream.get_final_message()
        except anthropic.RateLimitError as exc:
            raise RetryableError(
                f"{self.model_id}: rate limited (429)", retry_after_seconds(exc.response.headers)
            ) from None
        except anthropic.InternalServerError as exc:
            raise RetryableError(f"{self.model_id}: server error {exc.status_code}") from None
        except (anthropic.APITimeoutError, anthropic.APIConnectionError) as exc:
            raise RetryableError(f"{self.model_id}: {type(exc).__name__}") from None
        usage = anthropic_usage(final.usage, images_sent=any(m.images for m in messages))
        return Reply(
            text="".join(pieces),
            model=self.model_id,
            usage=usage,
            latency_s=time.monotonic() - started,
            first_token_s=first_token,
        )

    async def aclose(self) -> None:
        await self.client.close()
