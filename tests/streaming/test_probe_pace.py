"""Issue 48: probes paced by the server's wall clock. A session that advances its stream time 10 s a
chunk gets no probe per chunk: at most one in flight, at least the minimum gap of wall time between
its probes, a server-wide rate shared equally among the proactive sessions; a due probe the pace
refuses is skipped and counted (never queued), and the client is told once (`probe.paced`). A
real-time stream keeps its strategy's meaning."""

from __future__ import annotations

import asyncio

import pytest

from core.candidate import Reply
from streaming import wire
from streaming.backends import MediaBackend
from streaming.proactive import ProbeSchedule, parse_strategy
from streaming.probe_pace import ProbePace
from streaming.session import Session
from tests.streaming.quiet import Quiet


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Watcher(MediaBackend):
    def __init__(self, hold: asyncio.Event | None = None):
        self.probes = 0
        self.in_flight = self.most_in_flight = 0
        self.hold = hold

    async def audio(self, pcm16):
        return None

    async def frame(self, t_ms, jpeg):
        return None

    async def probe(self, on_delta, on_audio):
        self.probes += 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        if self.hold is not None:
            await self.hold.wait()
        self.in_flight -= 1
        return Reply(text="[silent]", model="watcher")

    async def aclose(self):
        return None


async def _play(session: Session, chunks: int, step_ms: int, clock: Clock | None, wall_step_s: float) -> None:
    """`chunks` chunks of audio (a frame just before each), each `step_ms` of stream time after the last,
    `wall_step_s` of the pace's clock apart."""
    for n in range(chunks):
        t = n * step_ms
        await session.on_media(wire.Media(kind=wire.KIND_FRAME, t_ms=t, payload=b"\xff\xd8frame"))
        await session.on_media(wire.Media(kind=wire.KIND_AUDIO, t_ms=t, payload=bytes(640)))
        while session.busy:
            await asyncio.sleep(0.001)
        if clock is not None:
            clock.now += wall_step_s


def _session(pace: ProbePace, backend: Watcher, events: list, strategy: str = "every:1") -> Session:
    async def send(event):
        events.append(event)

    return Session(wire.SessionConfig(camera=True, proactive=strategy), Quiet(), backend, send, pace=pace)


def test_a_session_racing_its_stream_gets_a_probe_per_gap_not_per_chunk_and_is_told_once():
    async def go():
        clock = Clock()
        pace = ProbePace(rate=4.0, min_gap_s=1.0, clock=clock)
        backend, events = Watcher(), []
        session = _session(pace, backend, events)
        worker = asyncio.create_task(session.run())
        await _play(session, 40, 10_000, clock, 0.25)  # 10 s of stream a chunk, four chunks a wall second
        await session.on_watch_end()
        while session.busy:
            await asyncio.sleep(0.001)
        worker.cancel()
        await session.aclose()
        return backend, events, pace

    backend, events, pace = asyncio.run(go())
    # 40 chunks over 10 s of the server's clock, each making a probe due: one a second, the rest skipped
    asked = [e for e in events if isinstance(e, wire.ProbeDone)]
    assert len(asked) == backend.probes == 10
    paced = [e for e in events if isinstance(e, wire.ProbePaced)]
    assert len(paced) == 1 and paced[0].gap_s == 1.0 and paced[0].min_gap_s == 1.0 and paced[0].rate == 4.0
    [done] = [e for e in events if isinstance(e, wire.WatchDone)]
    assert done.probes == 10 and done.skipped == 29  # every:1's first slot is 1 s after the first look: 39 due
    assert pace.describe()["sessions"] == 0  # a closed session leaves the shared rate


def test_at_most_one_probe_is_in_flight_per_session():
    async def go():
        clock = Clock()
        hold = asyncio.Event()
        backend, events = Watcher(hold), []
        session = _session(ProbePace(rate=100.0, min_gap_s=0.0, clock=clock), backend, events)
        worker = asyncio.create_task(session.run())
        for n in range(20):
            await session.on_media(wire.Media(kind=wire.KIND_FRAME, t_ms=n * 10_000, payload=b"\xff\xd8frame"))
            await session.on_media(wire.Media(kind=wire.KIND_AUDIO, t_ms=n * 10_000, payload=bytes(640)))
            clock.now += 5
            await asyncio.sleep(0.005)
        started = backend.probes
        hold.set()
        while session.busy:
            await asyncio.sleep(0.001)
        worker.cancel()
        await session.aclose()
        return started, backend

    started, backend = asyncio.run(go())
    assert started == 1 and backend.most_in_flight == 1


def test_the_server_rate_is_shared_equally_and_never_passed():
    clock = Clock()
    pace = ProbePace(rate=4.0, min_gap_s=1.0, clock=clock)
    sessions = [object() for _ in range(8)]
    for s in sessions:
        pace.join(s)
    assert pace.gap_s == 2.0  # eight sessions at four a second: one every 2 s each
    last: dict[int, float | None] = {id(s): None for s in sessions}
    got = {id(s): 0 for s in sessions}
    starts = []
    for _ in range(300):  # 30 s, every session asking every 0.1 s
        for s in sessions:
            if pace.allow(s, last[id(s)]):
                last[id(s)] = clock.now
                got[id(s)] += 1
                starts.append(clock.now)
        clock.now += 0.1
    per_second = [sum(1 for t in starts if second <= t - 100 < second + 1) for second in range(30)]
    assert max(per_second) <= 4 + 1  # the bucket holds one probe: never past the rate plus that one
    assert 0.8 * 4 * 30 <= sum(got.values()) <= 4 * 30 + 1  # near the rate (the 0.1 s steps lose a little)
    assert max(got.values()) - min(got.values()) <= 2  # equal shares
    for s in sessions[:6]:
        pace.leave(s)
    assert pace.gap_s == 1.0  # two left: the minimum gap again


def test_a_real_time_stream_keeps_every_n_and_change_in_stream_time():
    async def go(strategy, wall_step_s):
        clock = Clock()
        backend, events = Watcher(), []
        session = _session(ProbePace(rate=4.0, min_gap_s=1.0, clock=clock), backend, events, strategy)
        worker = asyncio.create_task(session.run())
        await _play(session, 30, 1_000, clock, wall_step_s)  # 30 s in real time, a chunk a second
        worker.cancel()
        await session.aclose()
        return backend.probes, [e for e in events if isinstance(e, wire.ProbePaced)]

    probes, paced = asyncio.run(go("every:1", 0.97))  # a client a little early on the wall clock
    assert probes == 29 and not paced  # a slot every stream second, none skipped
    probes, paced = asyncio.run(go("every:5", 1.0))
    assert probes == 5 and not paced


def test_a_skipped_change_is_asked_on_the_next_frame_that_moved():
    schedule = ProbeSchedule(parse_strategy("change"))
    schedule.sent("first")
    assert schedule.due(0)
    schedule.skip(0)
    assert not schedule.due(100)
    every = ProbeSchedule(parse_strategy("every:5"))
    assert not every.due(0) and every.due(5_000)
    every.skip(12_000)  # slots missed are passed over, not queued
    assert not every.due(14_000) and every.due(15_000)


def test_a_spoken_turn_anywhere_holds_every_sessions_probes_until_its_reply_is_done():
    clock = Clock()
    pace = ProbePace(rate=4.0, min_gap_s=1.0, clock=clock)
    watcher, speaker = object(), object()
    pace.join(watcher)
    assert pace.allow(watcher, None)
    clock.now += 5
    pace.hold(speaker)  # the other session's user starts to speak
    assert not pace.allow(watcher, 100.0)
    clock.now += 3
    assert not pace.allow(watcher, 100.0)
    pace.release(speaker)  # its reply is done
    assert pace.allow(watcher, 100.0)
    pace.hold(speaker)
    clock.now += 36  # a hold never outlives the longest utterance by much
    assert pace.allow(watcher, 108.0)


@pytest.mark.clock
def test_a_user_who_starts_to_speak_cuts_the_probes_running_elsewhere_short():
    from streaming.probes import Probes

    class Slow(Watcher):
        async def probe(self, on_delta, on_audio):
            self.probes += 1
            self.stopped = asyncio.Event()
            await self.stopped.wait()
            return Reply(text="", model="watcher", interrupted=True)

        async def interrupt(self):
            self.stopped.set()

    async def go(hold_turns: bool):
        clock = Clock()
        pace = ProbePace(rate=4.0, min_gap_s=1.0, hold_turns=hold_turns, clock=clock)
        backend, events = Slow(), []

        async def send(event):
            events.append(event)

        probes = Probes(parse_strategy("every:1"), backend, send, pace)
        await probes.watched(0, b"\xff\xd8frame")
        await probes.due(0)
        task = asyncio.create_task(await probes.due(2_000))
        await asyncio.sleep(0.01)
        pace.hold(object())  # another session's user starts to speak
        done, _ = await asyncio.wait({task}, timeout=1.0)
        if not done:
            backend.stopped.set()
            await task
        return bool(done), [e for e in events if isinstance(e, wire.ProbeDone)]

    cut, [probe] = asyncio.run(go(True))
    assert cut and probe.incomplete == "cut short: a user started speaking" and probe.silent
    cut, [probe] = asyncio.run(go(False))  # the benchmark's own server: trials stay independent
    assert not cut and probe.incomplete is None
