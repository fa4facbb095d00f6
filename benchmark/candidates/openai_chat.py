"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp's
server, routers).

Requests go through the `openai` SDK by default. `WEARSIM_OPENAI_TRANSPORT=http`
(or `transport="http"`) sends them over a small HTTP/1.1 client of our own
instead (`ChatHTTP`: asyncio streams, TLS with the system's certificates,
keep-alive connections, JSON and server-sent-event bodies) that speaks the
documented chat-completions wire format at about a twentieth of the SDK's
CPU per request; the harness benchmark uses it to measure the harness
itself (docs/performance.md, "The harness"). Behind a proxy (HTTPS_PROXY,
HTTP_PROXY, ALL_PROXY, honouring NO_PROXY) the SDK is always used.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from urllib.parse import urlsplit

from benchmark.candidates import ratelimit
from benchmark.candidates.base import Message, Reply, Usage
from benchmark.candidates.retry import RetryableError, retry_after_seconds

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


class HTTPStatusError(Exception):
    def __init__(self, status: int, headers: dict, body: bytes):
        super().__init__(f"HTTP {status}")
        self.status, self.headers, self.body = status, headers, body

    def message(self) -> str:
        """The provider's error message without anything that could carry a key."""
        try:
            data = json.loads(self.body)
            message = data.get("error", {}).get("message") if isinstance(data, dict) else None
            if message is None and isinstance(data, dict) and isinstance(data.get("error"), str):
                message = data["error"]
        except (ValueError, AttributeError):
            message = None
        return (str(message) if message else f"HTTP {self.status}")[:300]


class _StaleConnection(Exception):
    """A kept-alive connection the server had closed: nothing was read from it."""


class ChatHTTP:
    """A minimal HTTP/1.1 client for one base URL: POST a JSON body, read a
    JSON reply or a stream of server-sent events. Connections are kept alive
    and reused; a kept connection the server closed is replaced once."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout: float):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https"):
            raise RuntimeError(f"base URL {base_url.split('?')[0]!r} must start with http:// or https://")
        self.tls = parts.scheme == "https"
        self.host = parts.hostname or "localhost"
        self.port = parts.port or (443 if self.tls else 80)
        self.prefix = parts.path.rstrip("/")
        host_header = self.host if ":" not in self.host else f"[{self.host}]"
        if parts.port:
            host_header += f":{parts.port}"
        base = {"Host": host_header, "User-Agent": "wearsim", "Accept-Encoding": "identity",
                "Content-Type": "application/json", **headers}
        self._head = "".join(f"{k}: {v}\r\n" for k, v in base.items())
        self.timeout = timeout
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._ssl = None

    def _ssl_context(self):
        if self._ssl is None:
            import ssl

            self._ssl = ssl.create_default_context()
        return self._ssl

    async def _connect(self):
        if self.tls:
            return await asyncio.open_connection(self.host, self.port, ssl=self._ssl_context(),
                                                 server_hostname=self.host)
        return await asyncio.open_connection(self.host, self.port)

    def _request_bytes(self, path: str, body: bytes, accept: str) -> bytes:
        return (f"POST {self.prefix}{path} HTTP/1.1\r\n{self._head}Accept: {accept}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1") + body

    async def _send(self, path: str, body: bytes, accept: str):
        """(status, headers, reader, writer, reusable) with the head read."""
        data = self._request_bytes(path, body, accept)
        while self._idle:
            try:
                return await self._exchange(*self._idle.pop(), data)
            except _StaleConnection:
                pass
        try:
            return await self._exchange(*await self._connect(), data)
        except _StaleConnection:
            raise ConnectionError("the server closed the connection without a reply") from None

    @classmethod
    async def _exchange(cls, reader, writer, data: bytes):
        """Send the request and read the reply's head; on any failure, cancellation
        included (a barge-in drops a request), the connection is closed, never kept."""
        try:
            return await cls._read_head(reader, writer, data)
        except BaseException:
            writer.close()
            raise

    @staticmethod
    async def _read_head(reader, writer, data: bytes):
        try:
            writer.write(data)
            await writer.drain()
            status_line = await reader.readline()
        except (ConnectionError, OSError):
            raise _StaleConnection() from None
        if not status_line:
            raise _StaleConnection()
        version, _, rest = status_line.decode("latin-1").partition(" ")
        try:
            status = int(rest.split(" ", 1)[0])
        except ValueError:
            raise ConnectionError(f"not an HTTP reply: {status_line[:60]!r}") from None
        headers: dict[str, str] = {}
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, sep, value = line.decode("latin-1").partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        connection = headers.get("connection", "").lower()
        reusable = (connection != "close") if version.upper() == "HTTP/1.1" else (connection == "keep-alive")
        return status, headers, reader, writer, reusable

    @staticmethod
    async def _chunks(reader: asyncio.StreamReader, headers: dict):
        """The body's bytes as they arrive; the last item is None when the
        body had a known end (the connection may be reused)."""
        if "chunked" in headers.get("transfer-encoding", "").lower():
            while True:
                size_line = await reader.readline()
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    yield None
                    return
                yield await reader.readexactly(size)
                await reader.readexactly(2)
        elif "content-length" in headers:
            remaining = int(headers["content-length"])
            while remaining > 0:
                piece = await reader.read(min(remaining, 65536))
                if not piece:
                    raise asyncio.IncompleteReadError(b"", remaining)
                remaining -= len(piece)
                yield piece
            yield None
        else:  # HTTP/1.0 style: the body ends with the connection
            while True:
                piece = await reader.read(65536)
                if not piece:
                    return
                yield piece

    def _release(self, reader, writer, reusable: bool, complete: bool) -> None:
        if reusable and complete and len(self._idle) < MAX_IDLE_CONNECTIONS and not reader.at_eof():
            self._idle.append((reader, writer))
        else:
            writer.close()

    async def post_json(self, path: str, body: bytes) -> tuple[int, dict, bytes]:
        status, headers, reader, writer, reusable = await self._send(path, body, "application/json")
        pieces, complete = [], False
        try:
            async for piece in self._chunks(reader, headers):
                if piece is None:
                    complete = True
                else:
                    pieces.append(piece)
        except BaseException:
            writer.close()
            raise
        self._release(reader, writer, reusable, complete)
        return status, headers, b"".join(pieces)

    async def post_events(self, path: str, body: bytes):
        """Server-sent events of a streamed reply: each `data:` payload (str).
        A non-2xx status raises `HTTPStatusError` with the body."""
        status, headers, reader, writer, reusable = await self._send(path, body, "text/event-stream")
        complete = False
        try:
            if status >= 300:
                pieces = [p async for p in self._chunks(reader, headers) if p is not None]
                writer.close()
                raise HTTPStatusError(status, headers, b"".join(pieces))
            buffer = b""
            async for piece in self._chunks(reader, headers):
                if piece is None:
                    complete = True
                    break
                buffer += piece
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    line = line.rstrip(b"\r")
                    if line.startswith(b"data:"):
                        yield line[5:].strip().decode("utf-8")
            if buffer.strip().startswith(b"data:"):
                yield buffer.strip()[5:].strip().decode("utf-8")
        except BaseException:
            writer.close()
            raise
        self._release(reader, writer, reusable, complete)

    async def aclose(self) -> None:
        while self._idle:
            _, writer = self._idle.pop()
            writer.close()


def _proxied(base_url: str) -> bool:
    """A proxy is configured for this URL (the SDK's httpx handles proxies; our client does not)."""
    import urllib.request

    parts = urlsplit(base_url)
    proxies = urllib.request.getproxies()
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(parts.hostname or "")


class OpenAIChatCandidate(ratelimit.LimitedChat):
    family = "openai"

    def __init__(self, model: str, *, model_id: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, family: str = "openai", timeout: float = 120.0, attempts: int = 5,
                 transport: str | None = None):
        self.model = model
        self.model_id = model_id or f"openai:{model}"
        self.family = family
        self.attempts = attempts
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        # a local endpoint needs no key; the SDK insists on a non-empty one
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
        if not api_key:
            raise RuntimeError(f"{self.model_id}: set OPENAI_API_KEY, or --base-url for a local endpoint")
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.endpoint = self.base_url  # the cache and the rate limiter key on it
        self.limiter = ratelimit.limiter_for("openai", self.base_url)
        transport = transport or os.environ.get("WEARSIM_OPENAI_TRANSPORT", "").strip().lower() or "sdk"
        if transport not in ("sdk", "http"):
            raise ValueError(f"WEARSIM_OPENAI_TRANSPORT must be sdk or http, got {transport!r}")
        if _proxied(self.base_url):
            transport = "sdk"
        self.transport = transport
        if transport == "sdk":
            from openai import AsyncOpenAI

            self.client = AsyncOpenAI(api_key=api_key, base_url=self.base_url, timeout=timeout, max_retries=0)
            self.http = None
        else:
            headers = {"Authorization": f"Bearer {api_key}"}
            for variable, header in (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project")):
                if os.environ.get(variable, "").strip() and base_url is None:
                    headers[header] = os.environ[variable].strip()
            self.http = ChatHTTP(self.base_url, headers, timeout)
            self.client = None
        self.timeout = timeout

    def _body(self, messages, system, config, stream: bool) -> dict:
        body = {"model": self.model, "messages": to_openai_messages(messages, system),
                "temperature": config.temperature, "max_tokens": config.max_tokens}
        if config.json_mode:
            body["response_format"] = {"type": "json_object"}
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    async def _request(self, messages, system, config, on_delta) -> Reply:
        if self.http is None:
            return await self._respond_sdk(messages, system, config, on_delta)
        try:
            return await asyncio.wait_for(self._respond_http(messages, system, config, on_delta), self.timeout)
        except asyncio.TimeoutError:
            raise RetryableError(f"{self.model_id}: timed out after {self.timeout:g} s") from None
        except HTTPStatusError as exc:
            if exc.status in RETRYABLE_STATUSES or exc.status >= 500:
                what = "rate limited (429)" if exc.status == 429 else f"server error {exc.status}"
                raise RetryableError(f"{self.model_id}: {what}", retry_after_seconds(exc.headers)) from None
            raise RuntimeError(f"{self.model_id}: HTTP {exc.status}: {exc.message()}") from None
        except (ConnectionError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            raise RetryableError(f"{self.model_id}: {type(exc).__name__}") from None

    async def _respond_http(self, messages, system, config, on_delta) -> Reply:
        started = time.monotonic()
        body = json.dumps(self._body(messages, system, config, on_delta is not None),
                          ensure_ascii=False).encode("utf-8")
        if on_delta is None:  # one response: usage always comes back
            status, headers, raw = await self.http.post_json("/chat/completions", body)
            if status >= 300:
                raise HTTPStatusError(status, headers, raw)
            try:
                data = json.loads(raw)
                choices = data.get("choices") or []
                text = (choices[0].get("message") or {}).get("content") or "" if choices else ""
            except (ValueError, AttributeError, TypeError):
                raise RuntimeError(f"{self.model_id}: the endpoint's reply is not a chat completion") from None
            return Reply(text, self.model_id, _usage(data.get("usage")), time.monotonic() - started, None)
        first_token = None
        pieces: list[str] = []
        usage = Usage()
        async for event in self.http.post_events("/chat/completions", body):
            if event == "[DONE]":
                continue  # read on to the end of the body, so the connection can be reused
            try:
                chunk = json.loads(event)
            except ValueError:
                continue
            if not isinstance(chunk, dict):
                continue
            if chunk.get("error"):
                raise HTTPStatusError(500, {}, event.encode())
            if chunk.get("usage"):
                usage = _usage(chunk["usage"])
            for choice in chunk.get("choices") or ():
                text = (choice.get("delta") or {}).get("content")
                if text:
                    if first_token is None:
                        first_token = time.monotonic() - started
                    pieces.append(text)
                    on_delta(text)
        return Reply("".join(pieces), self.model_id, usage, time.monotonic() - started, first_token)

    async def _respond_sdk(self, messages, system, config, on_delta) -> Reply:
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
        if self.http is not None:
            await self.http.aclose()
        if self.client is not None:
            await self.client.close()


def _usage(data) -> Usage:
    if not isinstance(data, dict):
        return Usage()
    return Usage(int(data.get("prompt_tokens") or 0), int(data.get("completion_tokens") or 0))


def _safe_message(exc) -> str:
    """The provider's error message without anything that could carry a key."""
    try:
        body = exc.response.json()
        message = body.get("error", {}).get("message") if isinstance(body, dict) else None
    except Exception:
        message = None
    return (message or type(exc).__name__)[:300]
