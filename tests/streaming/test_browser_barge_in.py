"""Talking over a spoken reply on the live page, in real headless Chromium against the local OpenAI
Realtime conformance server: the page cuts the reply short, and each cut reaches the API as a
truncation at what was heard, on a busy page too."""

from __future__ import annotations

import shutil
import time

import pytest

from tests.fake_realtime import OPENAI_RATE
from tests.paths import ARTIFACTS
from tests.streaming.test_browser import REPLY, make_fake_devices, realtime_page, spoken_reply, write_mic


@pytest.fixture(scope="module")
def fake_devices(tmp_path_factory):
    return make_fake_devices(tmp_path_factory.mktemp("devices"))


@pytest.mark.clock
def test_talking_over_a_reply_cuts_it_short_on_the_live_page(fake_devices, tmp_path, monkeypatch):
    """The fake microphone asks again 1.8 s after each question; the API takes 8 s to
    answer, so the next question starts during the reply and (barge-in is on) stops it."""
    long_reply = " ".join(f"word{i}" for i in range(40))
    with realtime_page(fake_devices, tmp_path, monkeypatch, reply=long_reply, word_delay_s=0.2) as (api, page):
        assert page.is_checked("#barge-in")  # on by default for a live user
        page.click("#connect")
        page.wait_for_function(
            "document.querySelector('li[data-turn=\"1\"] .latency')?.textContent.includes('reply done')",
            timeout=120_000,
        )
        reply = page.inner_text('li[data-turn="1"] .reply')
        assert reply.endswith("[cut short: you spoke]"), reply
        said = reply.removesuffix("[cut short: you spoke]").split()
        assert 0 < len(said) < 40 and long_reply.startswith(" ".join(said))
        page.wait_for_selector('li[data-turn="2"] .heard', timeout=60_000)  # the interrupting question is turn 2
        assert page.is_hidden("#error")
        page.screenshot(path=str(tmp_path / "barge-in.png"), full_page=True)
        ARTIFACTS.mkdir(exist_ok=True)
        shutil.copy(tmp_path / "barge-in.png", ARTIFACTS / "barge-in.png")
        page.click("#disconnect")
    assert api.problems == []
    assert "response.cancel" in api.sessions[0]["events"]


@pytest.fixture(scope="module")
def unhurried_devices(fake_devices):
    """The same camera; the sentence, then 4.2 s of silence: the next question starts 6 s after
    the last one ended, room for a slow decode on a busy machine before the reply plays."""
    camera, mic = fake_devices
    return camera, write_mic(mic.with_name("mic-unhurried.wav"), mic.with_name("speech.wav"), 4.2)


def until_truncated(api, count: int, timeout_s: float = 120.0) -> list:
    """The API's truncations once it holds `count` (the page keeps its session meanwhile)."""
    deadline = time.monotonic() + timeout_s
    while len(api.sessions[0]["truncations"]) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    return list(api.sessions[0]["truncations"])


def mute(page) -> None:
    """The page stops sending the microphone (push to talk, nobody pressing): no new turn starts, and
    a server that fell behind (a busy machine) catches up on the audio, cuts and replies it holds."""
    page.select_option("#mode", "push-to-talk")


def settled(page, api, quiet_s: float = 8.0, timeout_s: float = 300.0) -> tuple[list, list, list]:
    """(the page's cuts, the turns it shows cut short, the API's truncations) once every cut sent has
    reached the API and nothing changed for `quiet_s` (or `timeout_s` passed: the asserts then say what)."""
    deadline, last, since = time.monotonic() + timeout_s, None, time.monotonic()
    while True:
        cuts, shown = page.evaluate("""() => [window.wearsimPlayback.cuts.slice(),
            Array.from(document.querySelectorAll('#turns li .voice.interrupted'),
                       (v) => Number(v.parentNode.dataset.turn))]""")
        now = (cuts, shown, list(api.sessions[0]["truncations"]))
        if now != last:
            last, since = now, time.monotonic()
        elif len(now[2]) >= len(cuts) and time.monotonic() - since >= quiet_s:
            return now
        if time.monotonic() > deadline:
            return now
        time.sleep(0.5)


@pytest.mark.clock
def test_a_spoken_reply_cut_short_is_truncated_at_the_api_to_what_was_heard(unhurried_devices, tmp_path, monkeypatch):
    """The fake microphone asks again 6 s after each question, before the 12 s spoken reply
    is over: the page stops the reply (the user speaks), says how much of it was heard, and
    the server has OpenAI Realtime truncate it there."""
    speech = spoken_reply(tmp_path) * 3  # the sentence and 2 s of quiet, three times
    reply_ms = len(speech) * 1000 // (2 * OPENAI_RATE)
    with realtime_page(unhurried_devices, tmp_path, monkeypatch, reply=REPLY, speech=speech) as (api, page):
        page.check("#spoken")
        page.click("#connect")
        page.wait_for_selector('li[data-turn="1"] .voice.interrupted', timeout=120_000)
        page.wait_for_selector('li[data-turn="2"] .heard', timeout=60_000)
        assert page.inner_text('li[data-turn="1"] .voice') == "spoken reply, cut short"
        [first_cut, *_] = page.evaluate("window.wearsimPlayback.cuts")  # sent before the card showed it
        mute(page)  # turn 2 was heard: the server catches up on whatever it still holds
        truncations = until_truncated(api, 1)
        page.wait_for_function(
            "document.querySelector('li[data-turn=\"2\"] .latency')?.textContent.includes('reply done')", timeout=60_000
        )
        page.click("#disconnect")
    assert api.problems == []
    [(item, content, heard_ms), *_] = truncations
    assert (item, content) == ("item_reply_1", 0)
    assert first_cut == [1, heard_ms]  # what the page heard is what the API keeps
    assert 0 < heard_ms < reply_ms, (heard_ms, reply_ms)


CUTS = 8  # replies the stress test cuts short
THROTTLE = 6  # the page's main thread runs this many times slower (Chromium's CPU throttling)


@pytest.mark.clock
def test_every_reply_cut_short_on_a_busy_page_reaches_the_api(fake_devices, tmp_path, monkeypatch):
    """The page's main thread slowed sixfold (DevTools `Emulation.setCPUThrottlingRate`): the
    microphone asks every 6 s and each 8 s spoken reply (generated a word every 0.15 s, so a
    question can cancel it mid-way) is cut short by the next question, `CUTS` times; then the
    microphone stops and the server catches up. Every cut the page sent reaches the API as a
    truncation of that turn's reply, at what was heard, in order; every reply shown cut short
    is one of them, each cut once."""
    speech = spoken_reply(tmp_path) * 2
    reply_ms = len(speech) * 1000 // (2 * OPENAI_RATE)
    with realtime_page(fake_devices, tmp_path, monkeypatch, reply=REPLY, speech=speech, word_delay_s=0.15) as (
        api,
        page,
    ):
        page.context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": THROTTLE})
        page.check("#spoken")
        page.click("#connect")
        page.wait_for_function(f"window.wearsimPlayback.cuts.length >= {CUTS}", timeout=300_000, polling=500)
        mute(page)  # no more questions; what the server still holds reaches the API
        cuts, shown, truncations = settled(page, api)
        page.screenshot(path=str(tmp_path / "barge-in-busy.png"), full_page=True)
        ARTIFACTS.mkdir(exist_ok=True)
        shutil.copy(tmp_path / "barge-in-busy.png", ARTIFACTS / "barge-in-busy.png")
        assert page.is_hidden("#error")
        # the player alone: a question before the reply's first piece ends that reply too, heard for 0 ms
        alone = page.evaluate("""async () => {
            const { ReplyPlayer } = await import('/web/playback.js');
            const said = [], sent = [];
            const player = new ReplyPlayer((turn, status) => said.push(`${turn}:${status}`),
                                           (turn, ms) => sent.push([turn, ms, said.length]));
            const piece = (turn) => ({ turn, rate: 24000, audio: btoa('\\0'.repeat(4800)) });
            player.bargeIn(1);  // turn 1 was asked, and the user speaks again before its reply comes
            player.play(piece(1));
            player.play(piece(1));
            player.play(piece(2));
            return { sent, said, queued: player.sources.length };
        }""")
        page.click("#disconnect")
    assert api.problems == []
    assert len(cuts) >= CUTS and len({turn for turn, _ in cuts}) == len(cuts), cuts  # each turn cut once
    assert sorted(shown) == sorted(turn for turn, _ in cuts), (shown, cuts)  # shown cut short: a cut was sent
    assert [(item, content) for item, content, _ in truncations] == [(f"item_reply_{turn}", 0) for turn, _ in cuts], (
        truncations,
        cuts,
    )  # one session: response N is turn N
    for (turn, played_ms), (_, _, heard_ms) in zip(cuts, truncations):
        assert 0 <= heard_ms <= played_ms <= heard_ms + 1 and heard_ms < reply_ms, (turn, played_ms, heard_ms)
    assert alone["sent"] == [[1, 0, 0]]  # sent once, before the page showed it
    assert alone["said"] == ["1:interrupted", "2:speaking"] and alone["queued"] == 1
