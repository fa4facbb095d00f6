"""Who holds the server's plain HTTP connections (issue 34 item 14, then issue 49 rows 2-4).

Attacks with real sockets against the in-process server. Loopback has the whole of
127.0.0.0/8, so clients connect from 127.0.0.1 and up (their source address bound). The rule
(`streaming.connection_room`): a connection still waiting for its request's headers gives its
place to a new one (its own address's oldest when that address is over its fair share), so slow
clients crowd out only each other; `/healthz` is answered from a reserve when every place holds a
request in progress; an upload takes its place, with the bytes it declares, before a byte is stored.
"""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest

from streaming.connection_room import Room
from streaming.local_server import running_server
from streaming.server_settings import ServerSettings


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


def _get(url: str, path: str, source: str, timeout: float = 10) -> int:
    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=timeout) as client:
        return client.get(_http(url) + path).status_code


def _closed(sock: socket.socket) -> bool:
    sock.settimeout(0.05)
    try:
        return sock.recv(200) in (b"",) or False
    except TimeoutError:
        return False  # held open
    except ConnectionError:
        return True


@pytest.mark.whisper
def test_600_slow_connections_from_127_0_0_1_leave_healthz_and_the_page_answering_from_the_same_address(monkeypatch):
    """On loopback every client is 127.0.0.1: the per-address cap was a global cap, and 64 slow clients
    got /healthz and / answered 503. Now the slow ones give their places to new connections."""
    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 60.0)  # the attack outlives the test
    monkeypatch.setattr("streaming.local_server.MAX_HTTP_CONNECTIONS", 128)
    with running_server() as url:
        port = _port(url)
        for crowd_size in (64, 600):
            crowd = [_silent(port, "127.0.0.1") for _ in range(crowd_size)]
            try:
                assert _get(url, "/healthz", "127.0.0.1", timeout=1) == 200
                assert _get(url, "/", "127.0.0.1", timeout=1) == 200
                assert _get(url, "/healthz", "127.0.0.2", timeout=1) == 200
                time.sleep(0.2)
                held = sum(not _closed(sock) for sock in crowd)
                assert held <= 128  # the places: the oldest slow ones gave theirs to newer connections
                if crowd_size == 64:
                    assert held >= 62  # under the cap every slow connection keeps its place (two gave way to us)
            finally:
                for sock in crowd:
                    sock.close()


@pytest.mark.whisper
def test_ten_addresses_of_slow_clients_leave_the_page_answering(monkeypatch):
    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 60.0)
    monkeypatch.setattr("streaming.local_server.MAX_HTTP_CONNECTIONS", 100)
    monkeypatch.setattr("streaming.local_server.MAX_HTTP_PER_CLIENT", 4)
    with running_server() as url:
        port = _port(url)
        crowd = [_silent(port, f"127.0.0.{10 + n % 10}") for n in range(600)]  # 60 from each of ten addresses
        try:
            for source in ("127.0.0.10", "127.0.0.2"):  # one of the attack's addresses, and another
                assert _get(url, "/", source, timeout=1) == 200
                assert _get(url, "/healthz", source, timeout=1) == 200
            time.sleep(0.2)
            held = [sock for sock in crowd if not _closed(sock)]
            assert len(held) <= 100
        finally:
            for sock in crowd:
                sock.close()


def test_the_room_rule():
    room = Room(limit=4, per_client=1, reserve=1)
    a = [object() for _ in range(4)]
    assert [room.arrive(c, "A") for c in a] == [("in", None)] * 4  # one address: no share applies
    new = object()
    assert room.arrive(new, "A") == ("in", a[0])  # full: the oldest waiting gives way
    other = object()
    assert room.arrive(other, "B") == ("in", a[1])  # B under its share: A's oldest gives way
    for c in (a[2], a[3], new, other):
        room.requested(c)  # every place answers a request now
    on_reserve = object()
    assert room.arrive(on_reserve, "C") == ("reserve", None)  # no idle place: the /healthz reserve
    room.requested(on_reserve)  # its headers are in: it keeps its reserve place
    assert room.arrive(object(), "C") == ("busy", None)
    room.answered(a[2])  # a response done: that connection waits again, and may give way
    assert room.arrive(object(), "C") == ("in", a[2])


def test_a_crowd_on_the_reserve_takes_its_own_places_not_a_health_checks():
    """Every place answers a request; a health check from B is on the reserve, its headers not yet read,
    when a crowd from C keeps opening connections: each takes the place of C's oldest waiting one."""
    room = Room(limit=1, per_client=1, reserve=3)
    busy = object()
    room.arrive(busy, "A")
    room.requested(busy)
    crowd = [object() for _ in range(2)]
    check = object()
    assert [room.arrive(c, "C") for c in crowd] + [room.arrive(check, "B")] == [("reserve", None)] * 3
    more = [object() for _ in range(4)]
    assert [room.arrive(c, "C")[1] for c in more] == [crowd[0], crowd[1], more[0], more[1]]
    assert room.is_reserved(check)
    room.requested(check)  # its headers are in
    room.answered(check)  # answered, it waits again; now C holds two reserve places, B one
    assert room.arrive(object(), "C") == ("reserve", more[2])


@pytest.mark.whisper
def test_healthz_answers_from_its_reserve_while_every_place_holds_a_request(monkeypatch, tmp_path):
    """Every place holds an upload whose body trickles in (a request in progress, which never gives way):
    `/healthz` still answers, the page is told 503."""
    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 60.0)
    monkeypatch.setattr("streaming.local_server.MAX_HTTP_CONNECTIONS", 6)
    monkeypatch.setattr("streaming.web_routes.RECORD_GAP_TIMEOUT_S", 60.0)
    with running_server(ServerSettings(record_dir=tmp_path / "studio")) as url:
        port = _port(url)
        uploads = [_upload_start(port, 100_000) for _ in range(6)]
        try:
            time.sleep(0.5)
            assert _get(url, "/healthz", "127.0.0.2", timeout=1) == 200
            assert _get(url, "/", "127.0.0.2", timeout=2) == 503
        finally:
            for sock in uploads:
                sock.close()


def _upload_start(port: int, declared: int | None, source: str = "127.0.0.1") -> socket.socket:
    """A POST /v1/record whose headers are sent (with `declared` as its Content-Length, or chunked) and
    one piece of its body."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    length = f"Content-Length: {declared}\r\n" if declared is not None else "Transfer-Encoding: chunked\r\n"
    sock.sendall(
        (
            f"POST /v1/record?scenario=sc-01&step=turn_1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Origin: http://127.0.0.1:{port}\r\nContent-Type: video/webm\r\n{length}\r\n"
        ).encode()
    )
    sock.sendall(b"\x1aE\xdf\xa3" if declared is not None else b"4\r\n\x1aE\xdf\xa3\r\n")
    return sock


def _status(sock: socket.socket, wait: float = 2.0) -> int | None:
    """The status the server answered on `sock`, or None when it has not answered within `wait`."""
    sock.settimeout(wait)
    try:
        head = sock.recv(64)
    except TimeoutError:
        return None
    return int(head.split()[1]) if head.startswith(b"HTTP/1.1 ") else None


def _incoming_bytes(folder) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


@pytest.mark.whisper
def test_slow_uploads_take_their_bytes_before_a_byte_is_stored_and_incoming_stays_under_its_cap(monkeypatch, tmp_path):
    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 60.0)
    monkeypatch.setattr("streaming.web_routes.RECORD_GAP_TIMEOUT_S", 60.0)
    monkeypatch.setattr("streaming.web_routes.MAX_INCOMING_BYTES", 3 * 2**20)
    studio = tmp_path / "studio"
    with running_server(ServerSettings(record_dir=studio)) as url:
        port = _port(url)
        held = [_upload_start(port, 768 * 2**10, f"127.0.0.{2 + i}") for i in range(3)]  # 2.25 MB declared
        try:
            assert [_status(s, 0.5) for s in held] == [None] * 3  # being stored
            late = _upload_start(port, 2**20, "127.0.0.9")
            assert _status(late) == 503  # refused at its headers: no room for its 1 MB
            chunked = _upload_start(port, None, "127.0.0.10")  # declares nothing: takes bytes as they come
            assert _status(chunked, 0.5) is None
            piece = b"\x00" * 65536
            stop = threading.Event()
            peaks = []

            def watch():
                while not stop.is_set():
                    peaks.append(_incoming_bytes(studio / ".incoming"))
                    time.sleep(0.01)

            watcher = threading.Thread(target=watch)
            watcher.start()
            try:
                for s in held:
                    s.sendall(piece * 8)  # half a MB each, inside what they declared
                answered = None
                for _ in range(64):  # 4 MB in chunks: past the cap, it is refused on the way
                    try:
                        chunked.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
                    except OSError:
                        break
                    answered = _status(chunked, 0.01)
                    if answered is not None:
                        break
                answered = answered or _status(chunked)
            finally:
                stop.set()
                watcher.join()
            assert answered == 503
            assert max(peaks) <= 3 * 2**20
        finally:
            for s in held:
                s.close()
