"""Slow studio uploads from one address cannot refuse another's (issue 57 row 14): 25 chunked uploads
sending a byte every 8 s held all 25 places of the studio's pool, and a real upload from another
address got 503 for 105 s. Now one address holds at most `IMPORT_PER_CLIENT` places (and
`MAX_INCOMING_PER_CLIENT` bytes), the rest kept for other addresses, and an upload must average `MIN_RECORD_RATE` once
`RECORD_GRACE_S` have passed (408). Loopback only; the grace lowered so the test is quick."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from streaming import web_routes
from streaming.import_pool import ImportBusy, ImportPool
from streaming.local_server import running_server
from streaming.server_settings import ServerSettings


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _chunked_upload(port: int, source: str) -> socket.socket:
    """A chunked POST /v1/record whose headers and one 4-byte piece are sent, then nothing."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    sock.sendall(
        (
            f"POST /v1/record?scenario=sc-01&step=turn_1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Origin: http://127.0.0.1:{port}\r\nContent-Type: video/webm\r\nTransfer-Encoding: chunked\r\n\r\n"
            "4\r\n\x1aE\xdf\xa3\r\n"
        ).encode("latin-1")
    )
    return sock


def _status(sock: socket.socket, wait: float) -> int | None:
    sock.settimeout(wait)
    try:
        head = sock.recv(64)
    except TimeoutError:
        return None
    return int(head.split()[1]) if head.startswith(b"HTTP/1.1 ") else None


@pytest.mark.whisper
def test_25_slow_uploads_from_one_address_leave_a_place_for_another(monkeypatch, tmp_path):
    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 60.0)
    monkeypatch.setattr("streaming.web_routes.RECORD_GAP_TIMEOUT_S", 60.0)  # trickling, not stopped
    with running_server(ServerSettings(record_dir=tmp_path / "studio")) as url:
        port = _port(url)
        http = url.replace("ws://", "http://")
        slow = [_chunked_upload(port, "127.0.0.3") for _ in range(25)]
        try:
            time.sleep(0.5)
            with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2"), timeout=30) as client:
                answer = client.post(
                    f"{http}/v1/record?scenario=sc-01&step=turn_1",
                    content=b"\x1aE\xdf\xa3 not a real recording",
                    headers={"Origin": http, "Content-Type": "video/webm"},
                )
            assert answer.status_code != 503, answer.text  # it had a place (400: its bytes are no WebM)
            refused = [s for s in slow if _status(s, 0.05) == 503]
            assert len(refused) == 25 - web_routes.IMPORT_PER_CLIENT  # past its share: told to wait
        finally:
            for sock in slow:
                sock.close()


@pytest.mark.whisper
def test_an_upload_under_the_minimum_rate_lets_go_after_its_grace(monkeypatch, tmp_path):
    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 60.0)
    monkeypatch.setattr("streaming.web_routes.RECORD_GRACE_S", 1.0, raising=False)
    with running_server(ServerSettings(record_dir=tmp_path / "studio")) as url:
        sock = _chunked_upload(_port(url), "127.0.0.4")
        try:
            started = time.monotonic()
            assert _status(sock, 5.0) == 408
            assert time.monotonic() - started < 5.0
        finally:
            sock.close()


def test_the_pool_gives_one_address_its_share_and_no_more():
    pool = ImportPool(1, 5, 100, per_client=2, per_client_bytes=60)
    a = [pool.reserve(10, "A"), pool.reserve(10, "A")]
    with pytest.raises(ImportBusy, match="at most 2 at once"):
        pool.reserve(0, "A")
    b = pool.reserve(50, "B")
    with pytest.raises(ImportBusy, match="at most 0 MB at once|this address's uploads"):
        b.grow(61)  # past B's bytes
    a[0].release()
    a[0].release()  # twice: counted once
    assert pool.held == 2 and pool.held_bytes == 60
    pool.reserve(0, "A")
