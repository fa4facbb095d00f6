"""Run the streaming server in-process, on a free loopback port, in a thread;
and `server_config`, the uvicorn settings `wearsim serve` uses as well.

A connection must finish its HTTP request (the WebSocket handshake) within
`HANDSHAKE_TIMEOUT_S` or it is dropped, and uvicorn answers 503 past
`limit_concurrency` connections, so bare TCP connections are not held
forever. Without settings the server accepts any backend id that names no server
file (`ServerSettings.allowed_backends=None`); a caller that knows the one
model it will ask for passes `ServerSettings(allowed_backends=(model_id,))`.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from streaming import wire
from streaming.app import ServerSettings, create_app


HANDSHAKE_TIMEOUT_S = 10.0


def _with_handshake_deadline(base: type, seconds: float) -> type:
    """uvicorn's HTTP protocol, closing a connection whose first request has not
    arrived (headers complete) within `seconds`."""

    class DeadlineProtocol(base):
        def connection_made(self, transport):
            super().connection_made(transport)
            self._deadline = self.loop.call_later(seconds, self._deadline_passed)

        def _deadline_passed(self):
            if self.cycle is None and not self.transport.is_closing():
                self.transport.close()

        def handle_websocket_upgrade(self, *args):
            self._deadline.cancel()
            return super().handle_websocket_upgrade(*args)

        def connection_lost(self, exc):
            self._deadline.cancel()
            super().connection_lost(exc)

    return DeadlineProtocol


def server_config(settings: ServerSettings | None, host: str, port: int) -> uvicorn.Config:
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    settings = settings or ServerSettings()
    return uvicorn.Config(create_app(settings), host=host, port=port, log_level="warning",
                          ws_max_size=wire.MAX_WIRE_BYTES,
                          http=_with_handshake_deadline(AutoHTTPProtocol, HANDSHAKE_TIMEOUT_S),
                          limit_concurrency=settings.max_sessions + settings.max_pending_hellos + 16)


@contextlib.contextmanager
def _server_log(path: Path | None):
    """While the server runs, its own and uvicorn's log lines also go to `path`."""
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    loggers = [logging.getLogger(name) for name in ("wearsim.server", "uvicorn.error")]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(min(logger.level or logging.INFO, logging.INFO))
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
        handler.close()


@contextlib.contextmanager
def running_server(settings: ServerSettings | None = None, *, port: int = 0, startup_timeout: float = 300.0,
                   log_path: Path | None = None):
    with _server_log(log_path):
        with _running_server(settings, port, startup_timeout) as url:
            logging.getLogger("wearsim.server").info("streaming server on %s (in-process)", url)
            yield url


@contextlib.contextmanager
def _running_server(settings: ServerSettings | None, port: int, startup_timeout: float):
    from benchmark.candidates.local import free_port

    port = port or free_port()
    config = server_config(settings, "127.0.0.1", port)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + startup_timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if not thread.is_alive():
            raise RuntimeError("the streaming server stopped while starting")
        time.sleep(0.1)
    else:
        server.should_exit = True
        raise RuntimeError("the streaming server did not start")
    try:
        yield f"ws://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
