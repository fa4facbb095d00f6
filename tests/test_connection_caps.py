"""Issue 34, item 14: one address cannot hold every HTTP connection the server allows, and
`/healthz` answers while the server's connection cap is full.

Attacks with real sockets against the in-process server. Loopback has the whole of
127.0.0.0/8, so other clients connect from 127.0.0.2 and up (their source address bound).
"""

from __future__ import annotations

import socket

import httpx

from streaming.local_server import running_server


def _http(url: str) -> str:
    return url.replace("ws://", "http://")


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _silent(port: int, source: str) -> socket.socket:
    """A connection that never sends its request (a slow client)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def _get(url: str, path: str, source: str) -> int:
    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=10) as client:
        return client.get(_http(url) + path).status_code


def _refused_at_once(sock: socket.socket) -> bool:
    sock.settimeout(2.0)
    try:
        first = sock.recv(200)
    except socket.timeout:
        return False  # held open
    except ConnectionError:
        return True
    return first == b"" or first.startswith(b"HTTP/1.1 503")


def test_one_address_with_600_slow_connections_holds_only_its_share(monkeypatch):
    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 60.0)  # the attack outlives the test
    from streaming import local_server

    with running_server() as url:
        port = _port(url)
        crowd = [_silent(port, "127.0.0.1") for _ in range(600)]
        try:
            assert _get(url, "/healthz", "127.0.0.2") == 200
            assert _get(url, "/", "127.0.0.2") == 200
            refused = sum(_refused_at_once(sock) for sock in crowd[local_server.MAX_HTTP_PER_CLIENT:])
            assert refused == 600 - local_server.MAX_HTTP_PER_CLIENT
            assert not _refused_at_once(crowd[0])  # the address keeps its share
        finally:
            for sock in crowd:
                sock.close()


def test_healthz_answers_while_the_connection_cap_is_full(monkeypatch):
    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 60.0)
    monkeypatch.setattr("streaming.local_server.MAX_HTTP_CONNECTIONS", 24)
    monkeypatch.setattr("streaming.local_server.MAX_HTTP_PER_CLIENT", 8)
    with running_server() as url:
        port = _port(url)
        crowd = [_silent(port, f"127.0.0.{10 + n // 8}") for n in range(24)]  # three addresses, 8 each
        try:
            assert _get(url, "/healthz", "127.0.0.2") == 200
            assert _get(url, "/", "127.0.0.2") == 503  # the cap is full for everything else
        finally:
            for sock in crowd:
                sock.close()
        for _ in range(50):  # the server notices the closed connections
            if _get(url, "/", "127.0.0.2") == 200:
                break
        assert _get(url, "/", "127.0.0.2") == 200
