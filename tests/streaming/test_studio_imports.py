"""Issue 34, item 12: studio imports run on a small pool of their own with a bounded queue (503
"busy, try again" past it), never on the default executor that Whisper and the sessions' frame steps
share; and what an import stores is bounded per second of recording."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from media_effects import media_library
from streaming import web_routes
from streaming.local_server import running_server
from streaming.server_settings import ServerSettings


def _webm(path, seconds: float, width: int, height: int, fps: int):
    """A WebM as a browser records it: VP8 frames with a moving square, an Opus tone."""
    import av

    with av.open(str(path), "w") as out:
        video = out.add_stream("libvpx", rate=fps)
        video.width, video.height, video.pix_fmt = width, height, "yuv420p"
        video.options = {"deadline": "realtime", "cpu-used": "8"}  # fast, and it keeps the noise's detail
        audio = out.add_stream("libopus", rate=48000)
        audio.layout = "mono"
        rng = np.random.default_rng(7)
        for _ in range(int(seconds * fps)):
            picture = rng.integers(0, 255, (height, width, 3), np.uint8)  # noise: the hardest to compress
            out.mux(video.encode(av.VideoFrame.from_ndarray(picture, format="rgb24")))
        out.mux(video.encode())
        tone = (np.sin(np.arange(int(48000 * seconds)) * 2 * np.pi * 440 / 48000) * 8000).astype(np.int16)
        for start in range(0, len(tone) - 960, 960):
            frame = av.AudioFrame.from_ndarray(tone[None, start : start + 960], format="s16", layout="mono")
            frame.sample_rate, frame.pts = 48000, start
            out.mux(audio.encode(frame))
        out.mux(audio.encode())
    return path


def _save(http: str, body: bytes, step: str, timeout: float = 60) -> httpx.Response:
    return httpx.post(
        f"{http}/v1/record?scenario=sc-01&step={step}",
        content=body,
        timeout=timeout,
        headers={"Origin": http, "Content-Type": "video/webm"},
    )


@pytest.mark.whisper
def test_imports_run_on_their_own_pool_and_past_its_queue_answer_busy(tmp_path, monkeypatch):
    body = _webm(tmp_path / "take.webm", 1.0, 64, 48, 10).read_bytes()
    monkeypatch.setattr("streaming.web_routes.IMPORT_WAITING", 1)  # one running, one queued
    release, threads = threading.Event(), []
    real = web_routes._import

    def held(*args):
        threads.append(threading.current_thread().name)
        release.wait(60)
        return real(*args)

    monkeypatch.setattr("streaming.web_routes._import", held)
    with running_server(ServerSettings(record_dir=tmp_path / "studio")) as url:
        http = url.replace("ws://", "http://")
        with ThreadPoolExecutor(2) as pool:
            try:
                running = pool.submit(_save, http, body, "turn_1")
                for _ in range(600):
                    if threads:
                        break
                    time.sleep(0.05)
                queued = pool.submit(_save, http, body, "turn_2")
                time.sleep(1.0)  # its body read and its place in the queue taken
                answer = _save(http, body, "turn_3_repair", timeout=10)  # the queue is full
            finally:
                release.set()
            assert running.result().status_code == 200 and queued.result().status_code == 200
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"].startswith("busy, try again") and answer.headers["retry-after"]
    assert len(threads) == 2 and all(name.startswith("studio-import") for name in threads), threads


@pytest.mark.slow
def test_an_imported_video_is_stored_at_a_bounded_size_per_second(tmp_path):
    import cv2

    seconds = 4.0
    source = _webm(tmp_path / "take.webm", seconds, 1280, 720, 30)
    written = media_library.import_recording(tmp_path / "media", "sc-01", "turn_1", source)
    video = next(p for p in written if p.suffix == ".mp4")
    capture = cv2.VideoCapture(str(video))
    width, height = capture.get(cv2.CAP_PROP_FRAME_WIDTH), capture.get(cv2.CAP_PROP_FRAME_HEIGHT)
    fps, frames = capture.get(cv2.CAP_PROP_FPS), capture.get(cv2.CAP_PROP_FRAME_COUNT)
    capture.release()
    assert (width, height) == (640, 360) and fps <= 10 and frames <= seconds * 10 + 1
    stored = sum(p.stat().st_size for p in written)
    assert stored <= media_library.MAX_STORED_BYTES_PER_S * seconds, stored
