"""The live page held for minutes against Gemini Live (the conformance server,
tests/fake_gemini_live.py) with its limits scaled down: the audio+video
session limit at 20 s of audio and a connection that ends (after a goAway)
every 15 s. The fake microphone asks a question every few seconds and the
camera streams; the assistant must answer throughout, never showing an error.
Real headless Chromium with a fake camera and microphone, the real server."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from streaming.local_server import running_server
from streaming.server_settings import ServerSettings
from tests.streaming.test_browser import ARTIFACTS, SENTENCE, browser, write_mic, write_y4m

BACKEND = "gemini-live:gemini-3.8-live"
HOLD_S = float(os.environ.get("WEARSIM_LONG_SESSION_S", "75"))  # how long the page is held
RESET_S = 15.0  # each connection ends this long after it opened (a goAway, then the close)
ANSWERED = "document.querySelectorAll('#turns li .latency')"


@pytest.fixture(scope="module")
def devices(tmp_path_factory):
    from media_effects.tts import synthesize

    folder = tmp_path_factory.mktemp("long-devices")
    write_y4m(folder / "camera.y4m")
    return folder / "camera.y4m", write_mic(folder / "mic.wav", synthesize(SENTENCE, folder / "speech.wav"), 1.8)


def _answered(page) -> int:
    return page.evaluate(f"Array.from({ANSWERED}).filter(e => e.textContent.includes('reply done')).length")


@pytest.mark.browser
def test_the_live_page_holds_a_gemini_session_past_its_limits(devices, gemini_env, tmp_path, monkeypatch):
    from playwright.sync_api import sync_playwright

    with gemini_env(
        models=("gemini-3.8-live",), session_limit_s=20.0, reset_after_s=RESET_S, go_away_left_s=3.0
    ) as api:
        with (
            running_server(ServerSettings(backend_base_url=api.base_url, allowed_backends=(BACKEND,))) as url,
            sync_playwright() as p,
        ):
            chrome = browser(p, devices, tmp_path)
            page = chrome.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url.replace("ws://", "http://") + "/")
            page.wait_for_function("document.querySelector('#backend').options.length > 0")
            page.select_option("#backend", BACKEND)
            page.uncheck("#barge-in")  # the fake microphone asks again every few seconds: let replies finish
            page.click("#connect")
            page.wait_for_function(f"{ANSWERED}.length > 0", timeout=120_000)
            started, counts = time.monotonic(), []
            while time.monotonic() - started < HOLD_S:  # answers keep coming, minute after minute
                time.sleep(15)
                counts.append(_answered(page))
                assert page.is_hidden("#error"), page.inner_text("#error")
            page.screenshot(path=str(tmp_path / "long-session.png"), full_page=False)
            ARTIFACTS.mkdir(exist_ok=True)
            shutil.copy(tmp_path / "long-session.png", ARTIFACTS / "long-session.png")
            status = page.inner_text("#status")
            page.click("#disconnect")
            chrome.close()
    assert status.startswith(f"connected: {BACKEND}"), status
    grew = [later > earlier for earlier, later in zip(counts, counts[1:])]
    assert all(grew), counts  # a turn answered in every 15 s of the hold
    held_audio_s = max(s["held_audio"] for s in api.sessions) / (2 * 16000)
    assert held_audio_s > 20.0 and api.limit_closes == 0  # past the scaled limit, and never cut off by it
    assert all(s["frames"] > 0 for s in api.sessions)  # audio and video: the limit applied
    assert api.resets >= int(HOLD_S // RESET_S) - 1 and len(api.sessions) >= 2  # moved to new connections
    assert all({"slidingWindow", "sliding_window"} & set(s["setup"]["contextWindowCompression"]) for s in api.sessions)
    assert api.problems == []
