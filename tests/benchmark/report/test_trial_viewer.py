"""What the assistant saw and heard, in the viewer: a stream run with spoken replies against the OpenAI
Realtime conformance server, then `wearsim view`, opened from disk in real headless Chromium: the
trial's frame thumbnails on its timeline, the glasses' speech and the spoken reply playable (their
durations those of the WAV files), the timeline's marks, the filters and a plot full size on a click."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import wave
from pathlib import Path

import pytest

from benchmark.kept_media import MediaKeeper
from core.records import TrialRecord
from tests.candidates.test_realtime_spoken import _spoken_reply
from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime
from tests.paths import ARTIFACTS, ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
]


def wearsim(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchmark", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, "OPENAI_API_KEY": TEST_KEY},
    )


def stream_run(server, run_dir: Path, *extra: str) -> list[TrialRecord]:
    done = wearsim(
        "bench",
        "--model",
        "openai-realtime:gpt-realtime",
        "--base-url",
        server.base_url,
        "--judge-family",
        "lexical",
        "--conditions",
        "baseline",
        "--via",
        "stream",
        "--output",
        "audio",
        "--output-dir",
        str(run_dir),
        *extra,
    )
    assert done.returncode == 0, done.stderr
    return [
        TrialRecord.from_json(json.loads(line)) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()
    ]


def wav_seconds(path: Path) -> float:
    with wave.open(str(path)) as saved:
        return saved.getnframes() / saved.getframerate()


@pytest.fixture(scope="module")
def spoken_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    with FakeOpenAIRealtime(speech=_spoken_reply(0.4)) as server:
        kept = stream_run(server, folder / "run", "--ids", "sc-05")  # sc-05 has recorded stills
        bare = stream_run(server, folder / "bare", "--ids", "sc-05", "--no-frames")
    return folder, kept, bare


@pytest.mark.slow
def test_each_stream_turn_keeps_its_sent_frames_and_speech(spoken_runs):
    from PIL import Image

    folder, [record], [bare] = spoken_runs
    run_dir = folder / "run"
    for turn in record.turns[:2]:
        frames, glasses = turn.frames, turn.glasses
        assert frames.sent and [t for t, _ in frames.thumbnails] == list(frames.sent_ms)  # every frame sent, in order
        for _, name in frames.thumbnails:
            with Image.open(run_dir / name) as thumb:
                assert thumb.format == "JPEG" and max(thumb.size) == 160
        # the glasses' speech as played: lead silence, the recorded line, the tail, at 16 kHz
        assert glasses.speech_file.startswith("audio/baseline/") and glasses.speech_file.endswith("-glasses.wav")
        assert wav_seconds(run_dir / glasses.speech_file) > 1.5
        assert glasses.start_ms <= glasses.scene_ms < glasses.speech_end_ms
    assert all(not t.frames.thumbnails and t.glasses.speech_file for t in bare.turns)  # --no-frames: no thumbnails
    assert not (folder / "bare" / "frames").exists()
    manifest = json.loads((folder / "bare" / "manifest.json").read_text())
    assert manifest["keep_frames"] is False


@pytest.mark.slow
def test_the_keeper_holds_to_its_cap_across_a_resume(tmp_path, monkeypatch, spoken_runs):
    import dataclasses

    import benchmark.kept_media as kept_media

    _, [record], _ = spoken_runs
    monkeypatch.setattr(kept_media, "MAX_FRAMES", 5)
    monkeypatch.setattr(kept_media, "MAX_SPEECH", 3)
    pictures = tuple((t, b"\xff\xd8 a jpeg " + str(t).encode()) for t in range(1000, 5000, 1000))
    turns = tuple(
        dataclasses.replace(
            t,
            frames=dataclasses.replace(t.frames, pictures=pictures, thumbnails=()),
            glasses=dataclasses.replace(t.glasses, speech_audio=b"\0\0" * 1600, speech_file=None),
        )
        for t in record.turns[:2]
    )
    fresh = record.replace(turns=turns)
    first = MediaKeeper(tmp_path).keep(fresh)
    assert [len(t.frames.thumbnails) for t in first.turns] == [4, 1]
    assert all(t.glasses.speech_file for t in first.turns)
    again = MediaKeeper(tmp_path).keep(fresh.replace(trial=1))  # a resumed run counts what the dir holds
    assert [len(t.frames.thumbnails) for t in again.turns] == [0, 0]
    assert [t.glasses.speech_file is not None for t in again.turns] == [True, False]
    assert "pictures" not in json.dumps(again.to_json()) and "speech_audio" not in json.dumps(again.to_json())


@pytest.mark.browser
def test_the_viewer_shows_what_the_assistant_saw_and_heard(spoken_runs, tmp_path):
    from playwright.sync_api import sync_playwright

    folder, [record], _ = spoken_runs
    run_dir = tmp_path / "run"
    shutil.copytree(folder / "run", run_dir)  # a run dir moved elsewhere still opens: every link is relative
    done = wearsim("view", str(run_dir))
    assert done.returncode == 0, done.stderr
    page_path = run_dir / "index.html"
    html = page_path.read_text()
    assert "http://" not in html and "https://" not in html and str(folder) not in html
    turn = record.turns[1]  # Turn 2: the scene changed
    end = turn.glasses.speech_end_ms
    expected_marks = {
        "scene": turn.glasses.scene_ms,
        "speech-end": end,
        "first-token": end + round(1000 * turn.metrics.first_token),
        "reply-end": end + round(1000 * turn.metrics.reply_done),
    }
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1400})
            page.on("request", lambda request: requests.append(request.url))
            page.goto(page_path.resolve().as_uri())
            row = page.locator('details.trial:has-text("sc-05")')
            row.locator(":scope > summary").click()
            block = row.locator(".stream-turn").nth(1)
            assert block.locator("h4").inner_text() == "Turn 2"
            # the frames sent, as thumbnails at their stream times, left to right
            thumbs = block.locator(".timeline img.thumb")
            assert thumbs.count() == len(turn.frames.thumbnails) >= 2
            thumbs.last.scroll_into_view_if_needed()
            page.wait_for_function(
                "els => els.every(img => img.complete && img.naturalWidth === 160)", arg=thumbs.element_handles()
            )
            times = [int(thumbs.nth(i).get_attribute("data-t-ms")) for i in range(thumbs.count())]
            assert times == [t for t, _ in turn.frames.thumbnails]
            lefts = [thumbs.nth(i).evaluate("img => img.getBoundingClientRect().left") for i in range(thumbs.count())]
            assert lefts == sorted(lefts) and lefts[0] < lefts[-1]
            # the marks, at the stream times the record gives, in order along the strip
            for key, t_ms in expected_marks.items():
                mark = block.locator(f".timeline .mark-{key}")
                assert mark.count() == 1 and int(mark.get_attribute("data-t-ms")) == t_ms, key
            xs = [
                block.locator(f".mark-{key}").evaluate("m => m.getBoundingClientRect().left") for key in expected_marks
            ]
            assert xs == sorted(xs)
            # two players: the glasses' speech and the spoken reply, as long as their WAV files
            audio = block.locator("audio")
            assert audio.count() == 2
            page.wait_for_function("els => els.every(a => a.readyState >= 1)", arg=audio.element_handles())
            durations = {
                block.locator(f"audio.{kind}-audio").get_attribute("src"): block.locator(
                    f"audio.{kind}-audio"
                ).evaluate("a => a.duration")
                for kind in ("speech", "reply")
            }
            files = {"speech": turn.glasses.speech_file, "reply": turn.reply.audio_file}
            for kind, name in files.items():
                shown = block.locator(f"audio.{kind}-audio").evaluate("a => a.duration")
                assert shown == pytest.approx(wav_seconds(run_dir / name), abs=0.02), (kind, durations)
            # the playhead follows the glasses' speech along the strip
            block.locator("audio.speech-audio").evaluate("a => { a.muted = true; a.currentTime = 1.0; }")
            page.wait_for_function("el => !el.hidden", arg=block.locator(".playhead").element_handle())
            # the transcript against the script, with its word error rate
            transcript = block.locator("table.transcript").inner_text()
            assert turn.glasses.script in transcript and "word error rate" in transcript
            # filters by frame policy, profile, gap and fault, beside outcome and shift type
            for key in ("outcome", "cue", "policy", "profile", "gap", "fault"):
                assert page.locator(f'select[data-filter="{key}"]').count() == 1, key
            page.select_option('select[data-filter="policy"]', "fps:1")
            assert row.is_visible()
            page.select_option('select[data-filter="gap"]', "none")
            assert row.is_visible()
            fault = row.get_attribute("data-fault")
            page.select_option('select[data-filter="fault"]', fault)
            assert row.is_visible() and page.locator("#shown").inner_text() == "1 of 1 trials shown"
            page.select_option('select[data-filter="outcome"]', "error")
            assert not row.is_visible() and page.locator("#shown").inner_text() == "0 of 1 trials shown"
            for key in ("fault", "outcome", "policy", "gap"):
                page.select_option(f'select[data-filter="{key}"]', "")
            # a plot opens full size on a click, and closes on Escape
            page.locator(".plots img").first.click()
            assert page.locator("#zoom").is_visible()
            page.keyboard.press("Escape")
            assert not page.locator("#zoom").is_visible()
            block.scroll_into_view_if_needed()
            ARTIFACTS.mkdir(exist_ok=True)
            row.screenshot(path=str(ARTIFACTS / "trial_viewer.png"))
        finally:
            browser.close()
    assert [url for url in requests if not url.startswith(("file:", "data:"))] == []


@pytest.mark.slow
def test_a_merged_run_dir_brings_the_kept_media_along(spoken_runs, tmp_path):
    folder, [record], _ = spoken_runs
    done = wearsim("merge", str(folder / "run"), "--output-dir", str(tmp_path / "merged"))
    assert done.returncode == 0, done.stderr
    names = [
        name
        for turn in record.turns
        for name in (turn.reply.audio_file, turn.glasses.speech_file, *(n for _, n in turn.frames.thumbnails))
        if name
    ]
    assert len(names) >= 8
    for name in names:
        assert (tmp_path / "merged" / name).read_bytes() == (folder / "run" / name).read_bytes()
