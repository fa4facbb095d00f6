"""The streaming server against what a client or a backend sends it, on a real server (uvicorn on
loopback, real Whisper and VAD): malformed input gets its documented error and close code, rates are
judged at arrival, idle and surplus sessions are closed, and no secret leaves in an error. No
test times anything."""

from __future__ import annotations

import asyncio
import json
import logging

import httpx
import pytest
import websockets

from benchmark.conversations.stream import StreamConversation
from simulator.client import ServerError
from simulator.pacing import Pacer
from simulator.settings import GlassesSettings
from streaming import wire
from streaming.local_server import running_server
from streaming.server_settings import ServerSettings, scrub
from streaming.wire import SessionConfig
from tests.http_fake import HTTPFake, QuietHandler
from tests.streaming.test_server_hardening import (
    BANK,
    BASELINE,
    SECRET,
    SILENCE,
    _closed,
    _connect,
    _refused,
    _still_serves,
)

# ---- 2c. malformed input: an answer, never a dropped connection ----------------------------


def test_malformed_hellos_get_their_error_and_4002(server_url):
    long_number = "1" * 5000
    cases = [
        ('{"type": "hello", "protocol": 1, "config": {"max_tokens": ' + long_number + "}}", "bad_json"),
        ('{"type": "hello", "protocol": ' + long_number + ', "token": "x"}', "bad_json"),
        ('{"type": "hello", "protocol": 1, "config": ' + "[" * 1000 + "]" * 1000 + "}", "bad_json"),
        ('{"type": "hello", "protocol": true}', "bad_hello"),
        ('{"type": "hello", "protocol": 1.0}', "bad_hello"),
        ('{"type": "hello", "protocol": 1, "token": 5}', "bad_hello"),
        ('{"type": "hello", "protocol": 1, "config": {"fallback_camera": 5}}', "bad_hello"),
        ('{"type": "hello", "protocol": 1, "config": {"fallback_camera": {"1": 7}}}', "bad_hello"),
        ('{"type": "hello", "protocol": 1, "config": {"silence_ms": true}}', "bad_hello"),
        ('{"type": "hello", "protocol": 1, "config": {"temperature": "hot"}}', "bad_hello"),
        ('{"type": "hello", "protocol": 1, "config": {"temperature": NaN}}', "bad_hello"),
        ('{"type": "hello", "protocol": 1, "config": {"backend": ["openai:fake"]}}', "bad_hello"),
        ('{"type": "hello", "protocol": 1, "config": {"camera": "yes"}}', "bad_hello"),
        ('{"type": "hello", "protocol": 1, "config": []}', "bad_hello"),
        ('{"type": "hello", "protocol": 1, "config": {"output": "speech"}}', "bad_hello"),
        ('{"type": "hello", "protocol": 1, "config": {"backend": "openai:fake", "output": "audio"}}', "bad_hello"),
    ]
    for text, code in cases:
        first, close = _refused(server_url, raw_hello=text)
        assert (first["type"], first["code"], close) == ("error", code, wire.CLOSE_BAD_HELLO), text[:80]
    _still_serves(server_url)


def test_tokens_are_compared_as_bytes_and_checked_before_the_config(backend):
    with running_server(ServerSettings(token="sécret-✓", backend_base_url=backend.base_url)) as url:
        for token in ("secret", "sécret-✗", "\ud800"):  # the last one escaped in the JSON, a lone surrogate
            hello = json.dumps({"type": "hello", "protocol": 1, "token": token, "config": {"backend": "openai:fake"}})
            first, code = _refused(url, raw_hello=hello)
            assert (first["code"], code) == ("unauthenticated", wire.CLOSE_UNAUTHENTICATED), token
        first, code = _refused(url, config=wire.SessionConfig(backend="replay:/etc"), token="nope")
        assert first["code"] == "unauthenticated"  # a stranger learns nothing about the backends

        async def good():
            ws, ready = await _connect(url, token="sécret-✓")
            await ws.close()
            return ready["type"]

        assert asyncio.run(good()) == "ready"


def test_malformed_messages_after_ready_are_violations_not_crashes(server_url):
    async def go():
        ws, ready = await _connect(server_url)
        answers = []
        for message in (
            '{"type": "turn.end", "n": %s}' % ("9" * 5000),
            "[" * 1000 + "]" * 1000,
            '{"type": "turn.end", "x": %s}' % ("[" * 100 + "]" * 100),
        ):
            await ws.send(message)
            answers.append(json.loads(await ws.recv()))
        events, code = await _closed(ws)
        return answers, code

    answers, code = asyncio.run(go())
    assert [a["code"] for a in answers] == ["bad_json", "bad_json", "bad_json"]
    assert "closing after 3 violations" in answers[-1]["message"] and code == wire.CLOSE_LIMITS


def test_a_message_over_the_limit_gets_too_large_before_anything_closes(server_url):
    async def go():
        ws, _ = await _connect(server_url)
        await ws.send(wire.encode_media(wire.KIND_AUDIO, 0, bytes(3_000_000)))
        first = json.loads(await ws.recv())
        await ws.send("x" * 1_500_000)
        second = json.loads(await ws.recv())
        await ws.send(wire.encode_media(wire.KIND_AUDIO, 0, SILENCE))  # the session goes on
        await ws.send(wire.encode_message("session.end"))
        _, code = await _closed(ws)
        return first, second, code

    first, second, code = asyncio.run(go())
    assert first["code"] == "too_large" and second["code"] == "too_large" and code == wire.CLOSE_NORMAL


# ---- 2d. audio rate at arrival -----------------------------------------------------------


@pytest.mark.whisper
def test_clients_paced_just_under_the_audio_limit_are_never_closed(server_url):
    """Three clients send silence at 19x real time for 3 s of wall time each."""
    speed, chunk_ms, wall_s = 19.0, 100, 3.0

    async def paced():
        ws, ready = await _connect(server_url)
        pacer = Pacer(speed)
        for i in range(int(wall_s * speed * 1000 / chunk_ms)):
            await pacer.wait(i * chunk_ms)
            await ws.send(wire.encode_media(wire.KIND_AUDIO, i * chunk_ms, SILENCE))
        await ws.send(wire.encode_message("session.end"))
        return await _closed(ws)

    async def go():
        return await asyncio.gather(*(paced() for _ in range(3)))

    for events, code in asyncio.run(go()):
        assert events == [] and code == wire.CLOSE_NORMAL


def test_audio_far_over_the_limit_is_refused_and_closed(server_url):
    async def go():
        ws, _ = await _connect(server_url)
        chunk = bytes(64_000)  # 2 s of audio per message, sent as fast as the socket takes it
        try:
            for i in range(200):
                await ws.send(wire.encode_media(wire.KIND_AUDIO, i * 2000, chunk))
        except websockets.ConnectionClosed:
            pass
        return await _closed(ws)

    events, code = asyncio.run(go())
    assert [e["code"] for e in events] == ["audio_rate"] * 3 and code == wire.CLOSE_LIMITS


# ---- 2e. idle and surplus sessions -------------------------------------------------------


@pytest.mark.whisper
def test_idle_sessions_and_silent_connections_are_closed(backend):
    with running_server(
        ServerSettings(backend_base_url=backend.base_url, idle_timeout_s=1.0, hello_timeout_s=1.0)
    ) as url:

        async def idle():
            ws, ready = await _connect(url)
            return ready["type"], await _closed(ws)

        async def silent():
            ws = await websockets.connect(url + "/v1/session")
            return await _closed(ws)

        ready, (events, code) = asyncio.run(idle())
        assert ready == "ready" and [e["code"] for e in events] == ["idle_timeout"] and code == wire.CLOSE_IDLE
        events, code = asyncio.run(silent())
        assert [e["code"] for e in events] == ["bad_hello"] and code == wire.CLOSE_BAD_HELLO


def test_sessions_over_the_cap_get_server_busy_and_the_others_go_on(backend):
    with running_server(ServerSettings(backend_base_url=backend.base_url, max_sessions=2)) as url:

        async def go():
            held = [await _connect(url) for _ in range(2)]
            busy, refused = await _connect(url)
            _, code = await _closed(busy)
            for ws, _ in held:  # the held sessions still work
                await ws.send(wire.encode_message("turn.end"))
                await ws.send(wire.encode_message("session.end"))
            closes = [(await _closed(ws))[1] for ws, _ in held]
            health = url.replace("ws://", "http://") + "/healthz"
            while httpx.get(health).json()["sessions"]:  # the server frees both places
                await asyncio.sleep(0.05)
            after, ready = await _connect(url)  # a freed place is taken again
            await after.close()
            return refused, code, closes, ready["type"]

        refused, code, closes, again = asyncio.run(go())
    assert refused["code"] == "server_busy" and code == wire.CLOSE_BUSY
    assert closes == [wire.CLOSE_NORMAL] * 2 and again == "ready"


@pytest.mark.whisper
def test_bare_connections_that_never_finish_a_handshake_are_dropped(monkeypatch):
    import socket

    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 1.0)
    with running_server() as url:
        port = int(url.rsplit(":", 1)[1])
        silent = socket.create_connection(("127.0.0.1", port))
        partial = socket.create_connection(("127.0.0.1", port))
        partial.sendall(b"GET /v1/session HTTP/1.1\r\nHost: x\r\n")  # headers that never end
        for sock in (silent, partial):
            sock.settimeout(60)
            assert sock.recv(100) == b""  # closed by the server
            sock.close()
        assert httpx.get(url.replace("ws://", "http://") + "/healthz").json()["ok"]


# ---- 2f. secrets in error texts ----------------------------------------------------------


class EchoingBackend(HTTPFake):
    """An OpenAI-compatible endpoint that rejects every request, quoting the key it was sent."""

    def __init__(self):
        class Handler(QuietHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_json(
                    400,
                    {
                        "error": {
                            "message": f"Incorrect API key provided: {self.headers.get('Authorization')}",
                            "type": "invalid_request_error",
                        }
                    },
                )

        super().__init__(Handler)


@pytest.mark.whisper
def test_a_backend_echoing_the_key_never_puts_it_in_an_event_or_a_log(monkeypatch, caplog):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    caplog.set_level(logging.WARNING, logger="wearsim.server")
    with EchoingBackend() as echo:
        with running_server(ServerSettings(backend_base_url=echo.base_url)) as url:

            async def go():
                conversation = StreamConversation(
                    BANK.get("sc-01"), BASELINE, GlassesSettings(url=url, hello=SessionConfig(backend="openai:leaky"))
                )
                try:
                    await conversation.send(1)
                finally:
                    await conversation.aclose()

            with pytest.raises(ServerError) as info:
                asyncio.run(go())
    assert "backend_error" in str(info.value) and "Incorrect API key provided" in str(info.value)
    assert SECRET not in str(info.value) and "[redacted]" in str(info.value)
    assert "Incorrect API key" in caplog.text and SECRET not in caplog.text


def test_scrub_removes_every_configured_secret(monkeypatch):
    for name, value in (
        ("GEMINI_API_KEY", "gk-1"),
        ("GOOGLE_API_KEY", "gg-2"),
        ("ANTHROPIC_API_KEY", "ak-3"),
        ("WEARSIM_TOKEN", "wt-4"),
        ("OPENAI_API_KEY", "ok-5"),
    ):
        monkeypatch.setenv(name, value)
    text = scrub("gk-1 gg-2 ak-3 wt-4 ok-5 server-tok", ServerSettings(token="server-tok"))
    assert text == " ".join(["[redacted]"] * 6)
    monkeypatch.setenv("OPENAI_API_KEY", "")
    assert scrub("nothing to hide", ServerSettings()) == "nothing to hide"
