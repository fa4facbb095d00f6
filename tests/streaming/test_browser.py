"""The browser page in real headless Chromium (Debian's, driven by Playwright)
with a fake camera (a .y4m written here) and a fake microphone (an espeak-ng
WAV): the live assistant against the real server, Whisper and the local
model; spoken replies from a realtime API (the local OpenAI Realtime
conformance server) played by the page; and the recording studio writing a
scenario's turn into the media layout. Talking over a reply:
test_browser_barge_in.py."""

from __future__ import annotations

import contextlib
import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import cv2
import numpy as np
import pytest

from media_effects.media_library import load_index, verify
from media_effects.tts import synthesize, write_wav
from perception.quality import word_error_rate
from streaming import wire
from streaming.local_server import running_server
from streaming.server_settings import ServerSettings
from tests.fake_realtime import OPENAI_RATE, FakeOpenAIRealtime
from tests.paths import ARTIFACTS

CHROMIUM = "/usr/bin/chromium"
SENTENCE = "Is this blue cup clean enough to drink from?"
REPLY = "It is the one in your hand now."


def write_y4m(path: Path, seconds: float = 6.0, fps: int = 10) -> None:
    """A 320x240 camera: a blue disc on a grey table, drifting right."""
    with path.open("wb") as out:
        out.write(f"YUV4MPEG2 W320 H240 F{fps}:1 Ip A1:1 C420jpeg\n".encode())
        for i in range(int(seconds * fps)):
            image = np.full((240, 320, 3), (150, 150, 150), np.uint8)
            cv2.circle(image, (100 + i, 120), 50, (200, 60, 20), -1)
            out.write(b"FRAME\n" + cv2.cvtColor(image, cv2.COLOR_BGR2YUV_I420).tobytes())


def write_mic(path: Path, speech: Path, after_s: float) -> Path:
    """The microphone: a pause, the sentence, `after_s` of silence (the file loops)."""
    from media_effects.audio import decode_audio, float_to_pcm16

    before, after = np.zeros(int(1.8 * 16000), np.float32), np.zeros(int(after_s * 16000), np.float32)
    write_wav(path, float_to_pcm16(np.concatenate([before, decode_audio(speech), after])))
    return path


def make_fake_devices(folder: Path) -> tuple[Path, Path]:
    """The camera and the microphone, written into `folder`: (camera.y4m, mic.wav)."""
    write_y4m(folder / "camera.y4m")
    speech = synthesize(SENTENCE, folder / "speech.wav")
    return folder / "camera.y4m", write_mic(folder / "mic.wav", speech, 1.8)  # a pause ends each utterance


@pytest.fixture(scope="module")
def fake_devices(tmp_path_factory):
    return make_fake_devices(tmp_path_factory.mktemp("devices"))


@pytest.fixture(scope="module")
def one_question_devices(fake_devices):
    """The same camera; the sentence once, then long enough a silence that the
    spoken reply plays out before the loop asks again (which would barge in)."""
    camera, mic = fake_devices
    return camera, write_mic(mic.with_name("mic-once.wav"), mic.with_name("speech.wav"), 30.0)


def spoken_reply(folder: Path) -> bytes:
    """What the fake API says: the reply sentence, then 2 s of quiet (the reply
    plays long enough to be seen playing), PCM16 mono at 24 kHz."""
    from media_effects.audio import decode_audio, float_to_pcm16, resample_pcm16

    speech = np.concatenate([decode_audio(synthesize(REPLY, folder / "reply.wav")), np.zeros(2 * 16000, np.float32)])
    return resample_pcm16(float_to_pcm16(speech), 16000, OPENAI_RATE)


def browser(playwright, devices, tmp_path):
    camera, mic = devices
    return playwright.chromium.launch(
        executable_path=CHROMIUM,
        args=[
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--use-fake-ui-for-media-stream",
            "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-video-capture={camera}",
            f"--use-file-for-fake-audio-capture={mic}",
            "--autoplay-policy=no-user-gesture-required",
        ],
    )


REALTIME_BACKEND = "openai-realtime:gpt-realtime"


@contextlib.contextmanager
def realtime_page(devices, tmp_path, monkeypatch, **fake):
    """The live page in headless Chromium on `devices`, its server offering one backend: the
    OpenAI Realtime conformance server, made with `fake`. Yields (api, page), the backend chosen."""
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    with (
        FakeOpenAIRealtime(**fake) as api,
        running_server(ServerSettings(backend_base_url=api.base_url, allowed_backends=(REALTIME_BACKEND,))) as url,
        sync_playwright() as p,
    ):
        chrome = browser(p, devices, tmp_path)
        page = chrome.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url.replace("ws://", "http://") + "/")
        page.wait_for_function("document.querySelector('#backend').options.length > 0")
        page.select_option("#backend", REALTIME_BACKEND)
        yield api, page
        chrome.close()


@pytest.mark.browser
def test_the_live_page_hears_sees_and_answers(fake_devices, tmp_path):
    from playwright.sync_api import sync_playwright

    with running_server(ServerSettings()) as url, sync_playwright() as p:
        page_url = url.replace("ws://", "http://") + "/"
        chrome = browser(p, fake_devices, tmp_path)
        page = chrome.new_page(viewport={"width": 1280, "height": 900})
        page.goto(page_url)
        page.wait_for_function("document.querySelector('#backend').options.length > 0")
        # the browser codec writes the same bytes as streaming/wire.py
        encoded = page.evaluate("""async () => {
            const wire = await import('/web/wire.js');
            const encoded = wire.encodeMedia(wire.KIND_FRAME, 1234567, new Uint8Array([255, 216, 7]));
            return Array.from(new Uint8Array(encoded));
        }""")
        assert bytes(encoded) == wire.encode_media(wire.KIND_FRAME, 1234567, b"\xff\xd8\x07")
        page.select_option("#fps", "2")
        assert page.is_disabled("#spoken")  # the local model cannot speak its replies
        page.uncheck("#barge-in")  # the fake microphone asks again every 4 s: let the reply finish
        page.click("#connect")
        # turn 1's card throughout: the microphone asks again, and a newer turn's card goes on top
        first = 'li[data-turn="1"]'
        page.wait_for_selector(f"{first} .heard", timeout=120_000)
        heard = page.inner_text(f"{first} .heard").split("heard: ", 1)[1]
        assert word_error_rate(SENTENCE, heard) <= 0.7, heard
        page.wait_for_function(
            f"document.querySelector('{first} .latency').textContent.includes('reply done')", timeout=240_000
        )
        camera_block = page.inner_text(f"{first} .camera-block")
        assert camera_block.startswith("[Camera: ") and "perceived" in camera_block  # described from the camera
        reply = page.inner_text(f"{first} .reply").strip()
        assert reply and "cut short" not in reply  # the local model answered, to the end
        assert page.inner_text("#status").startswith("connected: local")
        assert page.is_hidden("#error")
        page.screenshot(path=str(tmp_path / "live.png"), full_page=True)
        ARTIFACTS.mkdir(exist_ok=True)
        shutil.copy(tmp_path / "live.png", ARTIFACTS / "live.png")
        page.click("#disconnect")
        page.wait_for_function("document.querySelector('#status').textContent.startsWith('not connected')")
        chrome.close()


LINES_OF = """(selector) => {  // how many lines an element's text takes
    const range = document.createRange();
    range.selectNodeContents(document.querySelector(selector));
    return new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size;
}"""


@pytest.mark.browser
def test_the_live_page_says_what_it_is_doing_before_connect_while_connecting_and_while_talking(fake_devices, tmp_path):
    """Before Connect it says it is not connected (not "waiting for speech"); Connect shows its steps
    as they pass (the first session waits for the server to start the local model); the push-to-talk
    button fits on one line and shows that it is held while it is."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with running_server(ServerSettings()) as url, sync_playwright() as p:
        chrome = browser(p, fake_devices, tmp_path)
        page = chrome.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url.replace("ws://", "http://") + "/")
        page.wait_for_function("document.querySelector('#backend').options.length > 0")
        assert "waiting for speech" not in page.inner_text("#speech")
        assert "not connected" in page.inner_text("#speech").lower()
        page.select_option("#mode", "push-to-talk")
        assert page.is_visible("#talk") and page.evaluate(LINES_OF, "#talk") == 1
        page.evaluate("""() => {
            window.seenSteps = [];
            const progress = document.querySelector('#progress');
            new MutationObserver(() => window.seenSteps.push(progress.hidden ? '' : progress.textContent))
                .observe(progress, { childList: true, characterData: true, subtree: true, attributes: true });
        }""")
        page.click("#connect")
        # while the server loads, the talk button waits for the session to be ready
        page.wait_for_function(
            "document.querySelector('#progress').textContent.includes('loading') && "
            "document.querySelector('#talk').disabled",
            timeout=60_000,
        )
        page.screenshot(path=str(ARTIFACTS / "connecting.png"), full_page=True)
        page.wait_for_function(
            "document.querySelector('#status').textContent.startsWith('connected: local')", timeout=120_000
        )
        steps = page.evaluate("window.seenSteps")
        assert any("connecting to the server" in s for s in steps), steps
        assert any("loading" in s for s in steps), steps
        assert page.is_hidden("#progress")
        assert "hold" in page.inner_text("#speech").lower()
        assert page.evaluate(LINES_OF, "#talk") == 1
        box = page.locator("#talk").bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        assert page.get_attribute("#talk", "aria-pressed") == "true"
        assert "release" in page.inner_text("#talk").lower() and page.evaluate(LINES_OF, "#talk") == 1
        assert "listening" in page.inner_text("#speech").lower()
        page.screenshot(path=str(ARTIFACTS / "push-to-talk-held.png"), full_page=True)
        page.mouse.up()
        assert page.get_attribute("#talk", "aria-pressed") == "false"
        assert page.inner_text("#talk") == "Hold to talk"
        page.click("#disconnect")
        page.wait_for_function("document.querySelector('#status').textContent.startsWith('not connected')")
        assert "not connected" in page.inner_text("#speech").lower()
        chrome.close()


@pytest.mark.whisper
def test_the_live_page_plays_a_spoken_reply_from_a_realtime_api(one_question_devices, tmp_path, monkeypatch):
    speech = spoken_reply(tmp_path)
    sent_s = len(speech) / 2 / OPENAI_RATE
    with realtime_page(one_question_devices, tmp_path, monkeypatch, reply=REPLY, speech=speech) as (api, page):
        # the page knows every event the server sends (an unknown one would be refused as unreadable)
        known = page.evaluate("async () => Object.keys((await import('/web/wire.js')).SERVER_EVENTS)")
        assert set(known) == set(wire.SERVER_TYPES)
        page.check("#spoken")  # enabled: a realtime backend
        page.select_option("#fps", "2")
        page.click("#connect")
        # the reply is being spoken: the speaker line shows while the pieces play
        page.wait_for_selector("#turns li .voice.speaking", timeout=120_000)
        page.screenshot(path=str(tmp_path / "spoken.png"), full_page=True)
        # every piece scheduled, and played to its end on the audio clock
        page.wait_for_selector("#turns li .voice.spoken", timeout=60_000)
        played = page.evaluate("window.wearsimPlayback")
        page.wait_for_function(
            "document.querySelector('#turns li .latency').textContent.includes('reply done')", timeout=60_000
        )
        assert page.inner_text("#turns li .reply").strip() == REPLY  # the API's transcript of its speech
        assert "first audio" in page.inner_text("#turns li .latency")
        assert "media" in page.inner_text("#turns li .camera-block")  # the frame went to the API as an image
        assert page.inner_text("#turns li .heard").split("heard: ", 1)[1].strip()  # Whisper, for the record
        assert page.is_hidden("#error")
        ARTIFACTS.mkdir(exist_ok=True)
        shutil.copy(tmp_path / "spoken.png", ARTIFACTS / "spoken.png")
        page.click("#disconnect")
        page.wait_for_function("document.querySelector('#status').textContent.startsWith('not connected')")
        # the player alone: pieces back to back on the clock, and barge-in (a new turn, or stop()) silences the rest
        checked = page.evaluate("""async () => {
            const { ReplyPlayer } = await import('/web/playback.js');
            const statuses = [];
            const player = new ReplyPlayer((turn, status) => statuses.push(`${turn}:${status}`));
            const piece = (turn, samples) => ({ turn, rate: 24000,
                audio: btoa(String.fromCharCode(...new Uint8Array(new Int16Array(samples).buffer))) });
            player.play(piece(1, 24000));  // 1 s
            const start = player.endAt - 1;
            player.play(piece(1, 12000));  // 0.5 s, right after
            const queued = [player.sources.length, Math.round((player.endAt - start) * 1000) / 1000];
            player.play(piece(2, 2400));  // turn 2 cuts turn 1 short
            const afterNewTurn = player.sources.length;
            player.stop();  // the user speaks
            return { queued, afterNewTurn, left: player.sources.length, statuses };
        }""")
        assert checked["queued"] == [2, 1.5]
        assert checked["afterNewTurn"] == 1 and checked["left"] == 0
        assert checked["statuses"] == ["1:speaking", "1:speaking", "1:interrupted", "2:speaking", "2:interrupted"]
    assert api.problems == []
    [session] = api.sessions
    assert session["session"]["output_modalities"] == ["audio"]
    assert len(session["commits"]) == 1  # one question, one turn
    assert played["pieces"] == len(REPLY.split(" "))  # the fake sends one piece per word
    assert abs(played["seconds"] - sent_s) < 0.02, (played, sent_s)
    assert abs(played["samples"] - len(speech) // 2) <= 1


def _post(url: str, body: bytes, headers: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, method="POST", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.browser
def test_the_studio_records_a_turn_into_the_media_layout(fake_devices, tmp_path):
    from playwright.sync_api import sync_playwright

    record_dir = tmp_path / "media"
    with running_server(ServerSettings(record_dir=record_dir)) as url, sync_playwright() as p:
        http = url.replace("ws://", "http://")
        chrome = browser(p, fake_devices, tmp_path)
        page = chrome.new_page(viewport={"width": 1280, "height": 900})
        page.goto(http + "/")
        page.wait_for_selector("#tab-studio:not([hidden])")
        page.click("#tab-studio")
        page.select_option("#scenario", "sc-01")
        step = page.locator("#steps li[data-step='turn_1']")
        assert "Say:" in step.inner_text()
        page.wait_for_function("document.querySelector('#preview').readyState >= 2")
        step.locator(".record").click()
        page.wait_for_timeout(3500)  # a take of a few seconds
        step.locator(".record").click()
        step.locator(".save:not([disabled])").click()
        page.wait_for_function("document.querySelector(\"#steps li[data-step='turn_1'] .saved\").textContent")
        page.screenshot(path=str(tmp_path / "studio.png"), full_page=True)
        ARTIFACTS.mkdir(exist_ok=True)
        shutil.copy(tmp_path / "studio.png", ARTIFACTS / "studio.png")
        chrome.close()
        # refused: an unknown scenario (no path can leave the record dir), an empty body
        status, answer = _post(f"{http}/v1/record?scenario=../../etc&step=turn_1", b"x")
        assert status == 400 and "unknown scenario" in answer["error"]
        status, answer = _post(f"{http}/v1/record?scenario=sc-01&step=turn_2", b"")
        assert status == 400 and "empty" in answer["error"]
        status, answer = _post(f"{http}/v1/record?scenario=sc-01&step=turn_2", b"not a video at all")
        assert status == 400 and "cannot be used" in answer["error"]
    index = load_index(record_dir)["files"]
    assert set(index) == {"sc-01/turn_1.mp4", "sc-01/turn_1.wav"}
    assert all(entry["source"] == "recorded" for entry in index.values())
    assert index["sc-01/turn_1.wav"]["duration_s"] > 1.0
    assert verify(record_dir) == []  # hashes match; nothing half-written or stray
    assert not any((record_dir / ".incoming").iterdir())


@pytest.mark.clock
@pytest.mark.parametrize("says", [REPLY, "[silent]"])
def test_speak_up_on_the_live_page_shows_a_remark_nobody_asked_for_and_nothing_of_a_silent_look(
    one_question_devices, tmp_path, monkeypatch, says
):
    with realtime_page(one_question_devices, tmp_path, monkeypatch, reply=says) as (api, page):
        page.check("#speak-up")
        page.click("#connect")
        # the first frame sent is a change: the assistant is asked, unprompted, before any question
        page.wait_for_function("document.querySelector('#watching').textContent.includes('looked')", timeout=60_000)
        looks = page.inner_text("#watching")
        remarks = page.locator("li.remark")
        if says == REPLY:
            page.wait_for_selector("li.remark .reply", timeout=30_000)
            assert remarks.first.inner_text().startswith("unasked") and REPLY in remarks.first.inner_text()
            assert "spoke up 1" in looks or "spoke up 2" in looks
            # the counter counts the cards, the one whose words are still coming too (issue 48)
            counted = page.evaluate(
                "() => [Number(document.querySelector('#watching').textContent"
                ".match(/spoke up (\\d+)/)[1]), document.querySelectorAll('li.remark').length]"
            )
            assert counted[0] == counted[1], counted
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "live_speak_up.png"), full_page=True)
        else:
            assert remarks.count() == 0 and "spoke up 0" in looks  # the marker is never shown
            # a look never shows the marker; the question the microphone asks may be answered with it too
            # (this server says nothing else), and that card is the question's own, shown as it was said
            cards = page.locator("#turns li").all_inner_texts()
            assert all(card.startswith("Turn ") for card in cards if "[silent]" in card), cards
        assert api.sessions and all("[silent]" in (s["session"].get("instructions") or "") for s in api.sessions)
        page.click("#disconnect")
