"""Run the streaming server in-process, on a free loopback port, in a thread;
and `server_config`, the uvicorn settings `wearsim serve` uses as well.

Slow clients cannot hold the server: every request's headers (the first
one's, a WebSocket handshake's, and each later one's on a kept-alive
connection) must be complete within `HANDSHAKE_TIMEOUT_S` of the connection
opening or of the previous response, or the connection is dropped; a body
the app did not read does not keep it either (the same deadline runs from
the response). `POST /v1/record` reads its body under its own deadline
(`streaming.web_routes`). The connection cap `docs/protocol.md` gives
(sessions + connections awaiting a hello + 16) is counted over WebSockets
only, and a handshake past it gets HTTP 503; plain HTTP requests (`/`,
`/v1/info`, `/healthz`, `/v1/record`) have places of their own,
`MAX_HTTP_CONNECTIONS`, so a crowd of slow HTTP clients cannot fill the
sessions' places, nor sessions the page's. Who holds those places is
`streaming.connection_room`'s rule: a fair share per address where
addresses differ, a connection still waiting for its request's headers
giving its place to a new one, and `/healthz` answered from a reserve even
when every place holds a request in progress. A connection on that
reserve must send its request's headers within `RESERVE_HEAD_TIMEOUT_S`,
and gives its place to a newer one until it has (issue 57 row 4: 30
silent connections held the reserve and `/healthz` was 503 for a minute);
a request's body is read under a deadline and a minimum rate by the
routes that read one (`streaming.body_deadline`), so a request in progress
does not hold its place for good either.

Clients that ask and never read cannot hold it either (issue 57 row 2: 520
clients pipelining GETs with a tiny receive window held every place, and
1.1 GB of send queue, for good): each plain HTTP connection's send queue is
bounded (`SEND_BUFFER_BYTES` in the kernel, the transport's 64 KB above
it, at most `MAX_PIPELINED` requests queued behind the one answered, past
which it is reset); a connection whose writes stay paused for
`WRITE_TIMEOUT_S` is reset, and meanwhile gives its place like a waiting
one. A connection dropped by the server (its deadline passed, its place
given away) is aborted with a reset, never left to drain into a client that
does not read. Without settings the server accepts any backend id that names no server
file (`ServerSettings.allowed_backends=None`); a caller that knows the one
model it will ask for passes `ServerSettings(allowed_backends=(model_id,))`.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import socket
import struct
import termios
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from streaming import wire
from streaming.app import create_app
from streaming.connection_room import Room
from streaming.server_settings import ServerSettings

HANDSHAKE_TIMEOUT_S = 10.0  # for any request's headers, the WebSocket handshake's among them
KEEP_ALIVE_S = 5  # an idle kept-alive connection is closed after this (uvicorn's timeout_keep_alive)
MAX_HTTP_CONNECTIONS = 512  # plain HTTP connections at once; WebSockets are capped apart (websocket_limit)
MAX_HTTP_PER_CLIENT = 64  # the least share of one address while several hold connections (connection_room)
WRITE_TIMEOUT_S = 10.0  # writes paused (the client reads nothing) this long: the connection is reset
SEND_BUFFER_BYTES = 128 * 1024  # a plain HTTP connection's kernel send buffer (SO_SNDBUF; Linux doubles it)
# requests queued behind the one being answered; one more and the connection is reset. No browser pipelines;
# each queued request is work a non-reading crowd makes the server do before anything else (uvloop takes new
# connections a few per turn of the loop): 520 clients pipelining 17 GETs kept /healthz waiting 0.84-1.14 s,
# 5 GETs 0.59-0.69 s, 3 GETs 0.37-0.41 s (issue 57 row 2)
MAX_PIPELINED = 2
HEALTHZ_RESERVE = 8  # connections let in past MAX_HTTP_CONNECTIONS to answer /healthz only
RESERVE_HEAD_TIMEOUT_S = 2.0  # for a request's headers on a reserve connection (a health check sends them at once)
ALWAYS_ANSWERED = ("/healthz",)  # answered from the reserve
BUSY = b'{"error": "the server holds its maximum of WebSocket connections; try again later"}'
BUSY_HTTP = b'{"error": "the server holds its maximum of connections; try again later"}'


def _busy_response(body: bytes) -> bytes:
    return (
        b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    )


def _peer_host(transport) -> str | None:
    peer = transport.get_extra_info("peername")
    return peer[0] if isinstance(peer, tuple) and peer else None


def _abort(transport) -> None:
    """Drop a connection at once with a reset: what it had still to send is thrown away (a plain close
    waits for a client that never reads, for ever, with the send queue held)."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def _unsent(transport) -> int:
    """Bytes the connection has still to send: the transport's buffer and the kernel's send queue."""
    queued = transport.get_write_buffer_size()
    sock = transport.get_extra_info("socket")
    if sock is not None and hasattr(termios, "TIOCOUTQ"):
        with contextlib.suppress(OSError, ValueError):
            queued += struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0"))[0]
    return queued


def _bound_send_queue(transport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)


def _with_deadlines(base: type, seconds: float, websocket_limit: int, http_limit: int, per_client: int) -> type:
    """uvicorn's HTTP protocol, resetting a connection whose next request's headers are not complete
    within `seconds` of the connection opening or of the previous response, or whose writes stay
    paused for `WRITE_TIMEOUT_S` (its send queue bounded, `_bound_send_queue`, `MAX_PIPELINED`), answering 503 to a
    WebSocket handshake past `websocket_limit` open WebSockets, and giving plain HTTP connections their
    places by `streaming.connection_room.Room` (at most `http_limit`, a fair share per address of at
    least `per_client`, idle connections giving way to new ones, `/healthz` answered from a reserve)."""
    room = Room(http_limit, per_client, HEALTHZ_RESERVE)
    write_seconds, pipelined, reserve_seconds = WRITE_TIMEOUT_S, MAX_PIPELINED, RESERVE_HEAD_TIMEOUT_S

    class DeadlineProtocol(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.limit_concurrency = None  # the places are the room's, which lets /healthz through
            self.app = self._placed(self.app)
            self._deadline = None
            self._stall = None  # the write deadline, while writes are paused
            self._running = None

        def _placed(self, app):
            """`app`, marking the connection answered while a request runs; a connection let in on the
            reserve gets `/healthz` only, and any request 503 while the app holds `http_limit` requests."""
            server_state = self.server_state

            async def placed(scope, receive, send):
                if scope["type"] == "http":
                    room.requested(self)
                    busy = room.is_reserved(self) or len(server_state.tasks) > http_limit
                    if busy and scope.get("path") not in ALWAYS_ANSWERED:
                        await send(
                            {
                                "type": "http.response.start",
                                "status": 503,
                                "headers": [(b"content-type", b"application/json"), (b"connection", b"close")],
                            }
                        )
                        await send({"type": "http.response.body", "body": BUSY_HTTP})
                        return
                try:
                    await app(scope, receive, send)
                except RuntimeError:  # uvloop refuses a write to a transport the client just reset
                    if not self.transport.is_closing():
                        raise

            return placed

        def connection_made(self, transport):
            super().connection_made(transport)
            _bound_send_queue(transport)
            where, taken = room.arrive(self, _peer_host(transport))
            if taken is not None:  # a connection waiting for its request's headers, or stalled, gives its place
                taken.drop()
            if where == "busy":
                transport.write(_busy_response(BUSY_HTTP))
                transport.close()
                return
            self._arm()

        def _arm(self):
            if self._deadline is not None:
                self._deadline.cancel()
            wait = reserve_seconds if room.is_reserved(self) else seconds
            self._deadline = self.loop.call_later(wait, self._deadline_passed)

        def _deadline_passed(self):
            between_requests = self.cycle is None or self.cycle.response_complete
            if not between_requests:
                return
            if _unsent(self.transport):  # closed or not: it would wait for ever on a client that does not read
                self.drop()
            elif not self.transport.is_closing():
                self.transport.close()

        def drop(self):
            """Reset the connection; a response being written stops at once (uvloop raises on a write
            to a closed transport, and uvicorn learns of the loss a step later)."""
            for cycle in (self._running, self.cycle):  # uvicorn marks only the newest, maybe a queued one
                if cycle is not None and not cycle.response_complete:
                    cycle.disconnected = True
            _abort(self.transport)

        def _start_asgi_task(self, cycle, app):
            self._running = cycle  # the request being answered (the newest may wait behind it, pipelined)
            super()._start_asgi_task(cycle, app)

        def pause_writing(self):
            super().pause_writing()
            room.stall(self)
            if self._stall is None:
                self._stall = self.loop.call_later(write_seconds, self.drop)

        def resume_writing(self):
            super().resume_writing()
            room.unstall(self)
            if self._stall is not None:
                self._stall.cancel()
                self._stall = None

        def on_headers_complete(self):
            if self.transport.is_closing():
                return  # reset while reading: the rest of what it sent is not made into requests
            super().on_headers_complete()
            if len(self.pipeline) > pipelined:
                self.drop()

        def on_response_complete(self):
            super().on_response_complete()
            room.answered(self)
            self._arm()  # the next request's headers (or the end of this one's unread body) by then

        def handle_websocket_upgrade(self, *args):
            self._deadline.cancel()
            if self._stall is not None:
                self._stall.cancel()
            room.leave(self)  # a WebSocket counts against the WebSocket cap instead
            sockets = sum(isinstance(c, self.ws_protocol_class) for c in self.server_state.connections)
            if sockets >= websocket_limit:
                self.transport.write(_busy_response(BUSY))
                self.transport.close()
                return None
            return super().handle_websocket_upgrade(*args)

        def connection_lost(self, exc):
            for timer in (self._deadline, self._stall):
                if timer is not None:
                    timer.cancel()
            room.leave(self)
            super().connection_lost(exc)

    DeadlineProtocol.room = room
    return DeadlineProtocol


def server_config(settings: ServerSettings | None, host: str, port: int) -> uvicorn.Config:
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    settings = settings or ServerSettings()
    return uvicorn.Config(
        create_app(settings),
        host=host,
        port=port,
        log_level="warning",
        ws_max_size=wire.MAX_WIRE_BYTES,
        # no permessage-deflate: audio and JPEG frames do not shrink, and compressing
        # every message of every session took CPU the speech recognition waits for
        ws_per_message_deflate=False,
        http=_with_deadlines(
            AutoHTTPProtocol,
            HANDSHAKE_TIMEOUT_S,
            settings.max_sessions + settings.max_pending_hellos + 16,
            MAX_HTTP_CONNECTIONS,
            MAX_HTTP_PER_CLIENT,
        ),
        timeout_keep_alive=KEEP_ALIVE_S,
    )


def page_config(app, host: str, port: int) -> uvicorn.Config:
    """The uvicorn settings of a page-only app of ours (the labelling page): no WebSocket, the same
    deadlines and connection caps as the streaming server's plain HTTP."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        ws="none",
        http=_with_deadlines(AutoHTTPProtocol, HANDSHAKE_TIMEOUT_S, 0, MAX_HTTP_CONNECTIONS, MAX_HTTP_PER_CLIENT),
        timeout_keep_alive=KEEP_ALIVE_S,
    )


@contextlib.contextmanager
def _server_log(path: Path | None):
    """While the server runs, its own and uvicorn's log lines also go to `path` (appended, never
    through a link: `core.safe_files.open_append`)."""
    if path is None:
        yield
        return
    from core.safe_files import make_dirs, open_append

    make_dirs(path.parent)
    stream = open_append(path, text=True)
    handler = logging.StreamHandler(stream)
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
        stream.close()


@contextlib.contextmanager
def running_server(
    settings: ServerSettings | None = None,
    *,
    port: int = 0,
    startup_timeout: float = 300.0,
    log_path: Path | None = None,
):
    with _server_log(log_path):
        with _running_server(settings, port, startup_timeout) as url:
            logging.getLogger("wearsim.server").info("streaming server on %s (in-process)", url)
            yield url


@contextlib.contextmanager
def _running_server(settings: ServerSettings | None, port: int, startup_timeout: float):
    from candidates.local import free_port

    port = port or free_port()
    with _serving(server_config(settings, "127.0.0.1", port), startup_timeout) as url:
        yield url.replace("http://", "ws://")


@contextlib.contextmanager
def running_app(app, *, port: int = 0, startup_timeout: float = 60.0):
    """A page-only app of ours that answers `/healthz` (the labelling page, `streaming.annotate_app`),
    in-process on a free loopback port, in a thread, under `page_config`; yields its http:// URL."""
    from candidates.local import free_port

    port = port or free_port()
    with _serving(page_config(app, "127.0.0.1", port), startup_timeout) as url:
        yield url


@contextlib.contextmanager
def _serving(config: uvicorn.Config, startup_timeout: float):
    """uvicorn under `config` in a thread, until `/healthz` answers; yields its http:// URL."""
    port = config.port
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
            raise RuntimeError(f"the server on port {port} stopped while starting")
        time.sleep(0.1)
    else:
        server.should_exit = True
        raise RuntimeError(f"the server on port {port} did not start within {startup_timeout:.0f} s")
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=30)
