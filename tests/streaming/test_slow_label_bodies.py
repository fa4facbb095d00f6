"""Slow label bodies and silent connections cannot take the labelling page down (issue 57 row 4).

530 label POSTs sending one byte every 8 s held every place of `wearsim annotate`'s server (a
request in progress never gives its place, and the route read its body with no deadline): `/` was
503 for a minute; then 30 silent connections held the 8 places of the `/healthz` reserve, and
`/healthz` was 503 too. Now the label body is read under a deadline and a minimum rate
(`streaming.body_deadline`: 408, connection closed), and a reserve place is kept for a request
whose headers are in (`RESERVE_HEAD_TIMEOUT_S`, the oldest silent one giving way to a newer
connection). Loopback only, a few dozen sockets, the caps and deadlines lowered so each test takes
seconds.
"""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest

from benchmark.labels.run import AnnotatorDesk, open_label_run
from benchmark.labels.store import label_path
from streaming.annotate_app import create_annotate_app
from streaming.connection_room import Room
from streaming.local_server import running_app
from tests.label_runs import build_run


@pytest.fixture
def desk(tmp_path):
    run = open_label_run(build_run(tmp_path / "run", ["current"] * 4))
    return AnnotatorDesk(run=run, annotator="ana", what="turn2", sample=run.sample("turn2", None, 47))


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _slow_label(port: int, body: bytes = b"{", declared: int = 200, source: str = "127.0.0.1") -> socket.socket:
    """A label POST whose headers and the first bytes of its body are sent, the rest not yet."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    sock.sendall(
        (
            f"POST /v1/annotate/label HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
        ).encode()
        + body
    )
    return sock


def _trickle(socks: list[socket.socket], every: float, stop: threading.Event) -> threading.Thread:
    """One more byte on each of `socks` every `every` s until `stop` (a socket the server closed is skipped)."""

    def go() -> None:
        while not stop.wait(every):
            for sock in socks:
                try:
                    sock.send(b" ")
                except OSError:
                    pass

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread


def _answer(sock: socket.socket, wait: float) -> tuple[int | None, bytes]:
    """The status the server answered on `sock` (0: closed without one; None: nothing within `wait`), and
    all it sent until it closed the connection or `wait` passed."""
    sock.settimeout(wait)
    got = b""
    try:
        while piece := sock.recv(4096):
            got += piece
    except TimeoutError:
        if not got:
            return None, got
    except ConnectionError:
        pass
    return (int(got.split()[1]) if got.startswith(b"HTTP/1.1 ") else 0), got


def _get(url: str, path: str, source: str = "127.0.0.2") -> int | None:
    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=1.0) as client:
        try:
            return client.get(url + path).status_code
        except httpx.HTTPError:
            return None


def _closed(sock: socket.socket) -> bool:
    """Whether the server has closed `sock` (read without waiting)."""
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except ConnectionError:
        return True
    finally:
        sock.setblocking(True)


@pytest.mark.clock
def test_slow_label_bodies_get_408_at_their_deadline_and_the_page_answers_again(monkeypatch, desk):
    """The issue's shape, scaled down: 10 label POSTs past the 8 places, a byte every 0.4 s each. They hold
    the places (the page 503) until the grace passes under the minimum rate; then each gets 408 (or 503
    on the reserve) and is closed, and the page answers 200."""
    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 60.0)  # no other deadline helps
    monkeypatch.setattr("streaming.local_server.MAX_HTTP_CONNECTIONS", 8)
    monkeypatch.setattr("streaming.annotate_app.LABEL_GRACE_S", 1.0, raising=False)
    monkeypatch.setattr("streaming.annotate_app.LABEL_BODY_TIMEOUT_S", 3.0, raising=False)
    with running_app(create_annotate_app(desk)) as url:
        port = _port(url)
        slow = [_slow_label(port) for _ in range(8)]
        time.sleep(0.3)  # their headers in: requests in progress, which never give their places
        slow += [_slow_label(port) for _ in range(2)]
        stop = threading.Event()
        trickling = _trickle(slow, 0.4, stop)
        try:
            time.sleep(0.3)
            assert _get(url, "/") == 503  # every place holds a label being sent
            started = time.monotonic()
            while _get(url, "/") != 200 and time.monotonic() - started < 5.0:
                time.sleep(0.2)
            assert _get(url, "/") == 200
            answers = [_answer(sock, 2.0) for sock in slow]
            assert sorted(status for status, _ in answers).count(408) >= 8, answers
            assert all(status in (408, 503) for status, _ in answers), answers
            assert all(b"connection: close" in got for status, got in answers if status == 408)
            assert all(_closed(sock) for sock in slow)
        finally:
            stop.set()
            trickling.join()
            for sock in slow:
                sock.close()
    assert not label_path(desk.run.run_dir, "ana").exists()


@pytest.mark.clock
def test_silent_connections_cannot_hold_the_healthz_reserve(monkeypatch, desk):
    """Every place holds a label being sent; 10 silent connections, opened again as soon as they are
    closed, crowd the 3-place reserve. `/healthz` still answers 200 within 1 s, before and after the
    reserve's head timeout, and `/` is still 503 (only `/healthz` is answered from the reserve); once the
    crowd stops, its last connections are closed at the head timeout."""
    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 60.0)
    monkeypatch.setattr("streaming.local_server.MAX_HTTP_CONNECTIONS", 4)
    monkeypatch.setattr("streaming.local_server.HEALTHZ_RESERVE", 3)
    monkeypatch.setattr("streaming.local_server.RESERVE_HEAD_TIMEOUT_S", 1.0, raising=False)
    monkeypatch.setattr("streaming.annotate_app.LABEL_GRACE_S", 60.0, raising=False)  # the places stay held
    monkeypatch.setattr("streaming.annotate_app.LABEL_BODY_TIMEOUT_S", 60.0, raising=False)
    with running_app(create_annotate_app(desk)) as url:
        port = _port(url)
        slow = [_slow_label(port) for _ in range(4)]
        silent: list[socket.socket] = []
        stop = threading.Event()

        def crowd() -> None:  # keeps 10 silent connections open from 127.0.0.3
            while not stop.is_set():
                for n in range(10):
                    if n >= len(silent):
                        silent.append(socket.create_connection(("127.0.0.1", port), 5, ("127.0.0.3", 0)))
                    elif _closed(silent[n]):
                        silent[n].close()
                        silent[n] = socket.create_connection(("127.0.0.1", port), 5, ("127.0.0.3", 0))
                stop.wait(0.05)

        crowding = threading.Thread(target=crowd, daemon=True)
        try:
            time.sleep(0.3)
            crowding.start()
            time.sleep(0.5)
            for _ in range(8):  # over 2 s: past the reserve's head timeout
                started = time.monotonic()
                assert _get(url, "/healthz") == 200
                assert time.monotonic() - started < 1.0
                time.sleep(0.25)
            assert _get(url, "/") == 503
            stop.set()
            crowding.join()
            time.sleep(1.5)
            assert all(_closed(sock) for sock in silent)
            assert _get(url, "/healthz") == 200
        finally:
            stop.set()
            for sock in slow + silent:
                sock.close()


@pytest.mark.clock
def test_a_label_at_a_slow_phones_pace_saves_and_one_under_the_rate_gets_408(monkeypatch, desk):
    monkeypatch.setattr("streaming.annotate_app.LABEL_GRACE_S", 1.0, raising=False)
    monkeypatch.setattr("streaming.annotate_app.LABEL_BODY_TIMEOUT_S", 3.0, raising=False)
    first, second, third = (item.key for item in desk.sample[:3])
    with running_app(create_annotate_app(desk)) as url:
        port = _port(url)
        with httpx.Client(timeout=5) as client:
            answer = client.post(
                url + "/v1/annotate/label", json={"key": first, "label": "current"}, headers={"Origin": url}
            )
        assert answer.status_code == 200 and answer.json() == {"saved": first, "labelled": 1}

        body = f'{{"key": "{second}", "label": "current", "note": "slow link"}}'.encode()
        phone = _slow_label(port, body[:10], len(body))
        for at in range(10, len(body), 20):  # the rest in pieces 0.25 s apart: within the grace
            time.sleep(0.25)
            phone.sendall(body[at : at + 20])
        status, got = _answer(phone, 3.0)
        phone.close()
        assert status == 200, got

        body = f'{{"key": "{third}", "label": "current"}}'.encode()
        started = time.monotonic()
        trickled = _slow_label(port, body[:1], len(body))
        stop = threading.Event()
        trickling = _trickle([trickled], 0.5, stop)  # 2 bytes a second: under the rate once the grace is past
        try:
            status, got = _answer(trickled, 4.0)
            assert status == 408, got
            assert 1.0 <= time.monotonic() - started < 3.0  # at the grace, not at the total deadline
            assert b"did not arrive in time" in got and b"connection: close" in got
        finally:
            stop.set()
            trickling.join()
            trickled.close()
    assert set(desk.own_labels()) == {first, second}


def test_the_reserve_is_kept_for_requests_whose_headers_are_in():
    room = Room(limit=1, per_client=1, reserve=2)
    busy = object()
    assert room.arrive(busy, "A") == ("in", None)
    room.requested(busy)  # the one place answers a request
    silent, asking = object(), object()
    assert room.arrive(silent, "B") == ("reserve", None)
    assert room.arrive(asking, "B") == ("reserve", None)
    room.requested(asking)  # its /healthz headers are in
    newer = object()
    assert room.arrive(newer, "C") == ("reserve", silent)  # the silent one gives its reserve place
    room.requested(newer)
    assert room.arrive(object(), "C") == ("busy", None)  # both on the reserve being answered
    room.answered(asking)  # answered: waiting for its next headers, it may give way again
    assert room.arrive(object(), "C") == ("reserve", asking)
