"""Memory large frames leave behind (issue 34, item 15): after sessions sending 4096x2160 frames
closed, the idle server kept hundreds of MB that glibc held in its arenas. The figures with the
whole server are benchmarks/memory_load.py's (docs/performance.md); these check the two glibc
calls do their part, and that the server makes them."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest

from streaming import memory
from tests.paths import ROOT

# four threads decode a 4096x2160 JPEG and encode it again at quality 100, twelve times each, as a
# session's frame steps do; prints the RSS growth in MB once they are done
FRAME_WORK = """
import os, sys, threading
import cv2, numpy as np
from media_effects.frames import decode_jpeg
from streaming import memory

def rss_mb():
    for line in open(f"/proc/{os.getpid()}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

picture = np.zeros((2160, 4096, 3), np.uint8)
cv2.circle(picture, (2000, 1000), 600, (20, 200, 90), -1)
jpeg = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
del picture
fixed = sys.argv[1] == "fixed"
if fixed:
    assert memory.fix_mmap_threshold()
before = rss_mb()

def frame_steps():
    for _ in range(12):
        decoded = decode_jpeg(jpeg)
        again = cv2.imencode(".jpg", decoded.copy(), [cv2.IMWRITE_JPEG_QUALITY, 100])[1]
        del decoded, again

threads = [threading.Thread(target=frame_steps) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
if fixed:
    assert memory.trim()
print(round(rss_mb() - before, 1))
"""


def frame_work_growth(mode: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", FRAME_WORK, mode], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return float(done.stdout.strip())


@pytest.mark.slow
@pytest.mark.skipif(memory.MALLOC_TRIM is None, reason="glibc only (malloc_trim, mallopt)")
def test_large_frames_freed_in_threads_go_back_to_the_system():
    kept = frame_work_growth("plain")
    returned = frame_work_growth("fixed")
    assert returned < 30, (returned, kept)
    assert kept > returned + 40, (kept, returned)  # glibc alone keeps them: what this guards against


@pytest.mark.whisper
def test_the_server_trims_once_after_sessions_close(monkeypatch):
    """Two sessions close: one trim, a moment after the later close; the threshold fixed at start."""
    from streaming import wire
    from streaming.local_server import running_server
    from streaming.server_settings import ServerSettings
    from tests.fake_openai import FakeOpenAI

    trims, fixed = [], []
    monkeypatch.setattr(memory, "trim", lambda: trims.append(time.monotonic()) or True)
    monkeypatch.setattr("streaming.app.fix_mmap_threshold", lambda: fixed.append(True) or True)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")

    async def two_sessions(url: str) -> float:
        import websockets

        sockets = []
        for _ in range(2):
            ws = await websockets.connect(url + "/v1/session")
            await ws.send(wire.hello(None, wire.SessionConfig(backend="openai:fake")))
            assert json.loads(await ws.recv())["type"] == "ready"
            sockets.append(ws)
        for ws in sockets:
            await ws.send(wire.encode_message("session.end"))
            await ws.wait_closed()
        closed = time.monotonic()
        await asyncio.sleep(2.5)
        return closed

    with (
        FakeOpenAI(reply="Fine.") as api,
        running_server(ServerSettings(backend_base_url=api.base_url, allowed_backends=("openai:fake",))) as url,
    ):
        closed = asyncio.run(two_sessions(url))
    assert fixed == [True]
    assert len(trims) == 1 and trims[0] - closed > 0.5, (trims, closed)
