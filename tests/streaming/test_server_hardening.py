"""The streaming server under load and under attack, against a real server
(uvicorn on loopback, real Whisper and VAD): a busy CPU and slow replies do
not drop sessions, a client cannot make the server open its files, frame
memory is capped, malformed input gets its documented error and close code,
rates are judged at arrival, idle and surplus sessions are closed, and no
secret leaves in an error. No test times anything."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys

import httpx
import numpy as np
import pytest
import websockets

from benchmark.stream_conversation import StreamConversation, session_config
from core.scenario import load_bank
from media_effects.frames import FrameBudget, FrameBuffer, encode_jpeg
from simulator.client import GlassesClient, ServerError
from simulator.pacing import Pacer
from simulator.settings import GlassesSettings
from simulator.timeline import plan_turn
from streaming import wire
from streaming.local_server import running_server
from streaming.server_settings import ServerSettings, backend_refusal, scrub
from tests.fake_openai import FakeOpenAI
from tests.http_fake import HTTPFake, QuietHandler

BANK = load_bank()
BASELINE = BANK.condition("baseline")
JPEG = encode_jpeg(np.full((48, 64, 3), 128, np.uint8))
SILENCE = bytes(3200)  # 100 ms of PCM16 at 16 kHz
SECRET = "sk-test-echoed-key-0123456789"


async def _connect(url, config=None, token=None, raw_hello=None):
    ws = await websockets.connect(url + "/v1/session", max_size=None)
    await ws.send(
        raw_hello if raw_hello is not None else wire.hello(token, config or wire.SessionConfig(backend="openai:fake"))
    )
    return ws, json.loads(await ws.recv())


async def _closed(ws):
    """The close code once the server has closed, after any events it sent first."""
    events = []
    with pytest.raises(websockets.ConnectionClosed) as info:
        while True:
            events.append(json.loads(await ws.recv()))
    return events, info.value.rcvd.code if info.value.rcvd else None


def _refused(url, *, config=None, token=None, raw_hello=None):
    async def go():
        ws, first = await _connect(url, config, token, raw_hello)
        _, code = await _closed(ws)
        return first, code

    return asyncio.run(go())


def _still_serves(url):
    async def go():
        ws, ready = await _connect(url)
        await ws.send(wire.encode_message("session.end"))
        _, code = await _closed(ws)
        return ready["type"], code

    assert asyncio.run(go()) == ("ready", wire.CLOSE_NORMAL)


# ---- 1. a busy CPU and slow replies ----------------------------------------------------

SPIN = "import time\nend = time.monotonic() + 300\nwhile time.monotonic() < end:\n    pass\n"


@pytest.mark.alone  # one busy core is the spinner's: under xdist another test would make it two
def test_sessions_survive_a_busy_core_and_replies_slower_than_the_keepalive(tmp_path):
    """Each reply takes 6 s while the clients ping every second and give up after 3 s without a
    pong, and another process spins on a core: a server that stops reading during a turn (as
    it did: the turn ran inside the read loop) lets the pings go unanswered and is closed 1011."""
    spinner = subprocess.Popen([sys.executable, "-c", SPIN], stdin=subprocess.DEVNULL)
    try:
        with (
            FakeOpenAI(reply="Still the one in your hand.", delay=6.0) as slow,
            running_server(ServerSettings(backend_base_url=slow.base_url)) as url,
        ):

            async def one(scenario):
                client = GlassesClient(url, ping_interval=1.0, ping_timeout=3.0)
                await client.connect(session_config(scenario, BASELINE, "openai:fake"))
                clock_ms, replies = 0, []
                try:
                    for turn in (1, 2):
                        plan = plan_turn(scenario, turn, clock_ms)
                        clock_ms = plan.end_ms + 200
                        await client.play(plan, Pacer(None, origin_ms=plan.items[0].t_ms))
                        replies.append((await client.wait_turn(turn)).done.text)
                finally:
                    await client.close()
                return replies

            async def all_sessions():
                return await asyncio.gather(
                    *(one(BANK.get(i)) for i in ("sc-01", "sc-02", "sc-03")), return_exceptions=True
                )

            results = asyncio.run(all_sessions())
    finally:
        spinner.kill()
        spinner.wait()
    assert [r for r in results if isinstance(r, BaseException)] == []
    assert all(replies == ["Still the one in your hand."] * 2 for replies in results)


# ---- 2a. backends a client may name ------------------------------------------------------


def test_a_client_cannot_name_a_server_file_as_its_backend(server_url):
    for backend_id in ("replay:/etc", "local:/etc/passwd", " replay:runs/x ", "local:model.gguf"):
        first, code = _refused(server_url, config=wire.SessionConfig(backend=backend_id))
        assert first["type"] == "error" and first["code"] == "backend_not_allowed", backend_id
        assert "never local:PATH or replay:PATH" in first["message"] and code == wire.CLOSE_BAD_HELLO
    assert backend_refusal("local", None) is None and backend_refusal("openai:gpt-x", None) is None
    assert "not a model id" in backend_refusal("mystery", None)
    _still_serves(server_url)


def test_only_the_configured_backends_are_offered_and_ids_are_normalised(backend):
    settings = ServerSettings(backend_base_url=backend.base_url, allowed_backends=(" openai:fake ",))
    assert settings.allowed_backends == ("openai:fake",)
    with running_server(settings) as url:
        first, code = _refused(url, config=wire.SessionConfig(backend="openai:other"))
        assert (first["code"], code) == ("backend_not_allowed", wire.CLOSE_BAD_HELLO)
        assert first["message"].endswith("allowed: openai:fake")
        first, _ = _refused(url, config=wire.SessionConfig(backend="local"))
        assert first["code"] == "backend_not_allowed"

        async def padded():
            ws, ready = await _connect(url, wire.SessionConfig(backend="  openai:fake\n"))
            await ws.close()
            return ready

        assert asyncio.run(padded()) == {"type": "ready", "protocol": 1, "backend": "openai:fake"}


def test_a_client_may_name_only_the_describers_the_server_offers(backend):
    with running_server(ServerSettings(backend_base_url=backend.base_url)) as url:
        for describer in ("openai:gpt-4o", "gemini:gemini-2.5-flash", "mystery"):
            first, code = _refused(url, config=wire.SessionConfig(backend="openai:fake", describer=describer))
            assert (first["code"], code) == ("describer_not_allowed", wire.CLOSE_BAD_HELLO), describer
            assert first["message"].endswith("allowed: opencv, authored")
        for describer in ("opencv", "authored"):

            async def go():
                ws, ready = await _connect(url, wire.SessionConfig(backend="openai:fake", describer=describer))
                await ws.close()
                return ready["type"]

            assert asyncio.run(go()) == "ready", describer
    offered = ServerSettings(allowed_describers=(" openai:gpt-4o-mini ", "opencv"))
    assert offered.allowed_describers == ("openai:gpt-4o-mini", "opencv")


def test_the_server_caps_how_many_backends_it_opens(backend):
    with running_server(ServerSettings(backend_base_url=backend.base_url, max_open_backends=2)) as url:

        async def go():
            opened = []
            for name in ("openai:a", "openai:b", "openai:a"):
                ws, ready = await _connect(url, wire.SessionConfig(backend=name))
                opened.append(ready["type"])
                await ws.close()
            return opened

        assert asyncio.run(go()) == ["ready", "ready", "ready"]
        first, code = _refused(url, config=wire.SessionConfig(backend="openai:c"))
    assert (first["code"], code) == ("backend_not_allowed", wire.CLOSE_BAD_HELLO)
    assert "at most 2 backends" in first["message"]


def test_serve_offers_local_only_unless_told(serve_without_listening, monkeypatch):
    serve, seen = serve_without_listening
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-serve")  # the offered openai backends and describer need one
    assert serve([]) == 0
    assert (
        serve(
            [
                "--backend",
                " openai:m ",
                "--backend",
                "local:/models/x.gguf",
                "--idle-timeout",
                "120",
                "--max-sessions",
                "3",
                "--describer",
                "openai:v",
            ]
        )
        == 0
    )
    settings = [config.app.state.settings for config in seen]
    assert settings[0].allowed_backends == ("local",) and seen[0].ws_max_size == wire.MAX_WIRE_BYTES
    assert settings[0].allowed_describers == ("opencv", "authored")  # no model describer unless offered
    assert settings[1].allowed_backends == ("openai:m", "local:/models/x.gguf")
    assert settings[1].allowed_describers == ("opencv", "authored", "openai:v")
    assert (settings[1].idle_timeout_s, settings[1].max_sessions) == (120, 3)


# ---- 2b. frame memory --------------------------------------------------------------------


def test_frame_buffers_are_capped_per_session_and_in_total_oldest_first():
    frame = b"\xff\xd8" + bytes(99_998)  # 100 kB
    budget = FrameBudget(1_000_000)
    hog, quiet = FrameBuffer(max_bytes=600_000, budget=budget), FrameBuffer(max_bytes=600_000, budget=budget)
    for t in range(3):
        quiet.add(t, frame)
    for t in range(50):
        hog.add(t, frame)
    assert hog.bytes == 600_000 and [f.t_ms for f in hog.frames] == list(range(44, 50))
    hog2 = FrameBuffer(max_bytes=600_000, budget=budget)
    for t in range(6):
        hog2.add(100 + t, frame)
    assert budget.used <= 1_000_000
    assert quiet.bytes == 300_000  # the fullest buffers gave way, not the small one
    counted = FrameBuffer(max_frames=4)
    for t in range(9):
        counted.add(t, frame)
    assert [f.t_ms for f in counted.frames] == [5, 6, 7, 8]


def test_big_fast_frames_stay_within_the_servers_frame_budget_and_audio_still_counts(backend):
    big = b"\xff\xd8" + bytes(450_000)
    settings = ServerSettings(
        backend_base_url=backend.base_url, frame_bytes_per_session=2_000_000, frame_bytes_total=3_000_000
    )
    scenario = BANK.get("sc-01")
    with running_server(settings) as url:

        async def flood():
            ws, ready = await _connect(url)
            for t in range(40):
                await ws.send(wire.encode_media(wire.KIND_FRAME, t * 17, big))
            return ws

        async def go():
            floods = await asyncio.gather(*(flood() for _ in range(3)))
            conversation = StreamConversation(scenario, BASELINE, GlassesSettings(url=url, backend="openai:fake"))
            try:
                result = await conversation.send(1)  # speech still makes a turn beside the floods
            finally:
                await conversation.aclose()
            health = httpx.get(url.replace("ws://", "http://") + "/healthz").json()
            for ws in floods:
                await ws.close()
            return result, health

        result, health = asyncio.run(go())
    assert result.input.speech_source == "perceived" and result.input.speech
    assert 0 < health["frame_bytes"] <= 3_000_000


# ---- 2c. malformed input: an answer, never a dropped connection ----------------------------


def test_malformed_hellos_get_their_error_and_4002(server_url):
    long_number = "1" * 5000
    cases = [
        ('{"type": "hello", "protocol": 1, "config": {"max_tokens": %s}}' % long_number, "bad_json"),
        ('{"type": "hello", "protocol": %s, "token": "x"}' % long_number, "bad_json"),
        ('{"type": "hello", "protocol": 1, "config": %s}' % ("[" * 1000 + "]" * 1000), "bad_json"),
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


def test_a_backend_echoing_the_key_never_puts_it_in_an_event_or_a_log(monkeypatch, caplog):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    caplog.set_level(logging.WARNING, logger="wearsim.server")
    with EchoingBackend() as echo:
        with running_server(ServerSettings(backend_base_url=echo.base_url)) as url:

            async def go():
                conversation = StreamConversation(
                    BANK.get("sc-01"), BASELINE, GlassesSettings(url=url, backend="openai:leaky")
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
