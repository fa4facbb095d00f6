"""The streaming server under load and under attack, against a real server
(uvicorn on loopback, real Whisper and VAD): a busy CPU and slow replies do
not drop sessions, a client cannot make the server open its files or more
backends than it offers, and frame memory is capped. Malformed input, rates,
idle sessions and secrets: test_server_hardening_input.py. No test times
anything."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import httpx
import numpy as np
import pytest
import websockets

from benchmark.conversations.stream import StreamConversation, session_config
from core.scenario import load_bank
from media_effects.frames import FrameBudget, FrameBuffer, encode_jpeg
from simulator.client import GlassesClient
from simulator.pacing import Pacer
from simulator.settings import GlassesSettings
from simulator.timeline import plan_turn
from streaming import wire
from streaming.local_server import running_server
from streaming.server_settings import ServerSettings, backend_refusal
from streaming.wire import SessionConfig
from tests.fake_openai import FakeOpenAI

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


@pytest.mark.whisper
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
                await client.connect(session_config(scenario, BASELINE, SessionConfig(backend="openai:fake")))
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

            async def go(describer=describer):
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


@pytest.mark.whisper
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
            conversation = StreamConversation(
                scenario, BASELINE, GlassesSettings(url=url, hello=SessionConfig(backend="openai:fake"))
            )
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
