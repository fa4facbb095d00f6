"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp's
server, routers), over one HTTP path: `aiohttp`, speaking the documented
chat-completions wire format (a JSON reply, or server-sent events when the
reply is streamed). Connections are kept alive and pooled per candidate;
proxies come from the environment (HTTPS_PROXY, NO_PROXY, ...). aiohttp, not
httpx or the SDK: on the harness it costs a tenth of their CPU per request
(docs/performance.md, "The harness"). The SDK stays for the realtime APIs,
whose sessions it manages.
"""

from __future__ import annotations

import base64
import json
import os
import time

import aiohttp

from candidates import ratelimit
from candidates.retry import RetryableError, retry_after_seconds
from candidates.usage import openai_chat_usage
from core.candidate import Message, Reply, Usage

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRYABLE_STATUSES = {408, 409, 429}
MAX_IDLE_CONNECTIONS = 128


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


class OpenAIChatCandidate(ratelimit.LimitedChat):
    family = "openai"

    def __init__(
        self,
        model: str,
        *,
        model_id: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        family: str = "openai",
        timeout: float = 120.0,
        attempts: int = 5,
    ):
        self.model = model
        self.model_id = model_id or f"openai:{model}"
        self.family = family
        self.attempts = attempts
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
        if not api_key:
            raise RuntimeError(f"{self.model_id}: set OPENAI_API_KEY, or --base-url for a local endpoint")
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise RuntimeError(
                f"{self.model_id}: base URL {self.base_url.split('?')[0]!r} must start with http:// or https://"
            )
        self.endpoint = self.base_url  # the cache and the rate limiter key on it
        self.url = _without_userinfo(self.base_url) + "/chat/completions"  # the key goes in a header only
        self.limiter = ratelimit.limiter_for("openai", self.base_url)
        headers = {"Authorization": f"Bearer {api_key}", "User-Agent": "wearsim"}
        for variable, header in (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project")):
            if os.environ.get(variable, "").strip() and base_url is None:
                headers[header] = os.environ[variable].strip()
        self.headers = {**headers, "Content-Type": "application/json"}
        self.timeout = timeout
        self._http: aiohttp.ClientSession | None = None  # made in the event loop that first uses it

    @property
    def http(self) -> aiohttp.ClientSession:
        if self._http is None:
            self._http = aiohttp.ClientSession(
                headers=self.headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                trust_env=True,
                connector=aiohttp.TCPConnector(limit=0, limit_per_host=0, keepalive_timeout=30),
            )
        return self._http

    def _body(self, messages, system, config, stream: bool) -> bytes:
        body = {
            "model": self.model,
            "messages": to_openai_messages(messages, system),
            "temperature": config.temperature,
            "max_tokens": config.max_tokens,
        }
        if config.json_mode:
            body["response_format"] = {"type": "json_object"}
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    async def _request(self, messages, system, config, on_delta) -> Reply:
        """One try: 429, 408, 409, 5xx, timeouts and dropped connections raise `RetryableError`."""
        try:
            if on_delta is None:
                return await self._complete(messages, system, config)
            return await self._stream(messages, system, config, on_delta)
        except TimeoutError:
            raise RetryableError(f"{self.model_id}: timed out after {self.timeout:g} s") from None
        except aiohttp.ClientConnectorError as exc:
            raise RetryableError(f"{self.model_id}: cannot connect: {type(exc.os_error).__name__}") from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise RetryableError(f"{self.model_id}: connection lost: {type(exc).__name__}") from None

    async def _check(self, response: aiohttp.ClientResponse) -> None:
        status = response.status
        if status < 300:
            return
        body = await response.read()
        if status in RETRYABLE_STATUSES or status >= 500:
            what = "rate limited (429)" if status == 429 else f"server error {status}"
            raise RetryableError(f"{self.model_id}: {what}", retry_after_seconds(response.headers))
        raise RuntimeError(f"{self.model_id}: HTTP {status}: {_error_message(body, status)}")

    async def _complete(self, messages, system, config) -> Reply:
        started = time.monotonic()
        async with self.http.post(self.url, data=self._body(messages, system, config, False)) as response:
            await self._check(response)
            raw = await response.read()
        try:
            data = json.loads(raw)
            choices = data.get("choices") or []
            text = (choices[0].get("message") or {}).get("content") or "" if choices else ""
        except (ValueError, AttributeError, TypeError):
            raise RuntimeError(f"{self.model_id}: the endpoint's reply is not a chat completion") from None
        usage = openai_chat_usage(data.get("usage"), images_sent=any(m.images for m in messages))
        return Reply(
            text=text, model=self.model_id, usage=usage, latency_s=time.monotonic() - started, first_token_s=None
        )

    async def _stream(self, messages, system, config, on_delta) -> Reply:
        started = time.monotonic()
        first_token = None
        pieces: list[str] = []
        usage = Usage()
        async with self.http.post(
            self.url, data=self._body(messages, system, config, True), headers={"Accept": "text/event-stream"}
        ) as response:
            await self._check(response)
            async for line in response.content:
                if not line.startswith(b"data:"):
                    continue
                event = line[5:].strip().decode("utf-8")
                if event == "[DONE]":
                    continue  # read on to the end of the body, so the connection can be reused
                try:
                    chunk = json.loads(event)
                except ValueError:
                    continue
                if not isinstance(chunk, dict):
                    continue
                if chunk.get("error"):
                    raise RetryableError(
                        f"{self.model_id}: the stream ended with an error: {_error_message(event.encode(), 500)}"
                    )
                if chunk.get("usage"):
                    usage = openai_chat_usage(chunk["usage"], images_sent=any(m.images for m in messages))
                for choice in chunk.get("choices") or ():
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        if first_token is None:
                            first_token = time.monotonic() - started
                        pieces.append(text)
                        on_delta(text)
        return Reply(
            text="".join(pieces),
            model=self.model_id,
            usage=usage,
            latency_s=time.monotonic() - started,
            first_token_s=first_token,
        )

    async def served_model(self) -> str | None:
        """The model the endpoint names in the `model` field of its reply to a one-token request (None: the
        field is missing or empty). Errors as `respond`'s one try: `RetryableError` or `RuntimeError`."""
        body = {"model": self.model, "messages": [{"role": "user", "content": "ok"}], "max_tokens": 1}
        try:
            async with self.http.post(self.url, data=json.dumps(body).encode("utf-8")) as response:
                await self._check(response)
                raw = await response.read()
        except TimeoutError:
            raise RetryableError(f"{self.model_id}: timed out after {self.timeout:g} s") from None
        except aiohttp.ClientError as exc:
            raise RetryableError(f"{self.model_id}: cannot connect: {type(exc).__name__}") from None
        try:
            named = json.loads(raw).get("model")
        except (ValueError, AttributeError):
            raise RuntimeError(f"{self.model_id}: the endpoint's reply is not a chat completion") from None
        return (named.strip() or None) if isinstance(named, str) else None

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None


def _without_userinfo(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=host))


def _error_message(body: bytes, status: int) -> str:
    """The provider's error message without anything that could carry a key."""
    try:
        data = json.loads(body)
        message = data.get("error", {}).get("message") if isinstance(data, dict) else None
        if message is None and isinstance(data, dict) and isinstance(data.get("error"), str):
            message = data["error"]
    except (ValueError, AttributeError):
        message = None
    return (str(message) if message else f"HTTP {status}")[:300]
