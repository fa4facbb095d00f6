"""Clients that ask and never read (issue 57 row 2).

Each attacker connects with a tiny receive window, pipelines GETs and never reads a byte of the
answers. Before the change a response waiting to drain into such a client held its place for good
(a request in progress is never given away) and its send queue with it: 520 of them took `/healthz`,
`/` and new sessions down. Now a connection's send queue is bounded (a kernel send buffer, at most
`MAX_PIPELINED` requests queued), a connection whose writes stay paused is reset after
`WRITE_TIMEOUT_S` and meanwhile gives its place like a waiting one, and every connection the server
drops is reset, not drained. Loopback only, a few dozen sockets, caps lowered so it is quick.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time

import httpx
import pytest
import websockets

from streaming import wire
from streaming.connection_room import Room
from streaming.local_server import running_server


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _non_reader(port: int, source: str, requests: int, path: str = "/web/app.js") -> socket.socket:
    """A connection with a tiny receive window that pipelines `requests` GETs and never reads."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.settimeout(5)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    try:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode() * requests)
    except OSError:
        pass  # refused (busy) or reset before all of it was sent
    return sock


def _get(url: str, path: str, source: str = "127.0.0.2") -> int:
    base = url.replace("ws://", "http://")
    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=1.0) as client:
        return client.get(base + path).status_code


def _session_opens(url: str) -> str:
    async def go() -> str:
        async with asyncio.timeout(10):
            ws = await websockets.connect(url + "/v1/session", max_size=None)
            try:
                await ws.send(wire.hello(None, wire.SessionConfig(backend="openai:fake")))
                return json.loads(await ws.recv())["type"]
            finally:
                await ws.close()

    return asyncio.run(go())


def _reset(sock: socket.socket, within: float) -> bool:
    """Whether the server dropped `sock` (reading what is left of it until the end or a reset)."""
    sock.settimeout(within)
    try:
        while sock.recv(65536):
            pass
    except ConnectionError:
        return True
    except TimeoutError:
        return False  # all it was sent is read and the server still holds it
    return True


@pytest.mark.whisper
def test_clients_pipelining_gets_and_never_reading_leave_healthz_the_page_and_sessions(monkeypatch):
    """The issue's shape, scaled down: 40 clients (the cap of places, lowered) pipeline 400 GETs of the
    17 KB script each (7 MB of answers) and stall; 20 more pipeline 400 GETs of `/healthz` (the
    reserve). Before the change `/healthz`, `/` and a new session were all refused."""
    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 60.0)  # no other deadline helps
    monkeypatch.setattr("streaming.local_server.WRITE_TIMEOUT_S", 60.0, raising=False)
    monkeypatch.setattr("streaming.local_server.MAX_HTTP_CONNECTIONS", 40)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-non-reading")  # the session's backend opens with one
    with running_server() as url:
        port = _port(url)
        crowd = [_non_reader(port, "127.0.0.1", 400) for _ in range(40)]
        try:
            time.sleep(2.5)  # long enough for the old code to fill each send queue and stall
            crowd += [_non_reader(port, "127.0.0.1", 400, "/healthz") for _ in range(20)]
            time.sleep(0.5)
            for _ in range(3):
                started = time.monotonic()
                assert _get(url, "/healthz") == 200
                assert time.monotonic() - started < 1.0
                assert _get(url, "/") == 200
            assert _session_opens(url) == "ready"
        finally:
            for sock in crowd:
                sock.close()


@pytest.mark.whisper
def test_a_stalled_connection_gives_its_place_and_is_reset_at_its_write_deadline(monkeypatch):
    """12 GETs of the 17 KB script each, under a pipelining cap raised for the test (the stall, not the
    cap, is what this checks), into a small send buffer, stall the writes; the page still answers (a
    stalled connection gives its place), and past the write deadline every stalled connection is reset."""
    monkeypatch.setattr("streaming.local_server.MAX_PIPELINED", 16)
    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 60.0)
    monkeypatch.setattr("streaming.local_server.WRITE_TIMEOUT_S", 1.5, raising=False)
    monkeypatch.setattr("streaming.local_server.SEND_BUFFER_BYTES", 4096, raising=False)
    monkeypatch.setattr("streaming.local_server.MAX_HTTP_CONNECTIONS", 10)
    with running_server() as url:
        port = _port(url)
        crowd = [_non_reader(port, "127.0.0.1", 12) for _ in range(10)]
        try:
            time.sleep(0.5)
            assert _get(url, "/") == 200
            assert _get(url, "/healthz") == 200
            time.sleep(2.0)
            assert all(_reset(sock, 2.0) for sock in crowd)
        finally:
            for sock in crowd:
                sock.close()


def _answers(port: int, requests: int) -> tuple[int, bool]:
    """How many of `requests` pipelined GETs of `/healthz` (on one connection, read to its end) were answered
    200, and whether the server reset the connection."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode() * requests)
    got, reset = b"", False
    sock.settimeout(1.0)
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except ConnectionError:
        reset = True
    except TimeoutError:
        pass  # all answered, the connection kept alive
    finally:
        sock.close()
    return got.count(b"HTTP/1.1 200"), reset


@pytest.mark.whisper
def test_a_client_may_queue_max_pipelined_requests_and_one_more_resets_it():
    """No browser pipelines, and each queued request is work a crowd that never reads makes the server do
    first: up to `MAX_PIPELINED` requests behind the one answered are all answered; one more resets the
    connection as its headers are read, before its answers are made."""
    from streaming.local_server import MAX_PIPELINED

    with running_server() as url:
        port = _port(url)
        assert _answers(port, MAX_PIPELINED + 1) == (MAX_PIPELINED + 1, False)
        answered, reset = _answers(port, MAX_PIPELINED + 2)
        assert reset and answered <= 1


def test_the_room_gives_a_stalled_connections_place_first():
    room = Room(limit=2, per_client=1, reserve=0)
    busy, stalled = object(), object()
    for c in (busy, stalled):
        assert room.arrive(c, "A") == ("in", None)
        room.requested(c)  # both answering a request
    assert room.arrive(object(), "A") == ("busy", None)  # requests in progress are never taken
    room.stall(stalled)  # its client reads nothing of its answer
    newer = object()
    assert room.arrive(newer, "B") == ("in", stalled)
    room.requested(newer)
    room.stall(busy)
    room.unstall(busy)  # it read again: it keeps its place
    assert room.arrive(object(), "C") == ("busy", None)
