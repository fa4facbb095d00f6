"""A proactive session's probes (when to ask is `streaming.proactive`): the
frames the policy sent that a probe would look at, when one is due, and
asking it.

A probe asks the backend, with nobody speaking, whether something in view
needs saying; the backend has the frames the policy sent (`Backend.frame`)
and looks at the newest. Its remark goes to the client as it comes
(`remark.delta`, `remark.audio`); a silent answer sends nothing
(`SilenceFilter`); `probe.done` closes it. The session starts a probe only
when nobody speaks and nothing is being answered, and only when the server's
pace allows (`streaming.probe_pace`): a due probe it refuses is skipped and
counted, and the first such tells the client (`probe.paced`). `watch.done`
reports every frame sent and the probes skipped.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Awaitable, Callable, Coroutine

from core.candidate import REPLY_AUDIO_RATE
from streaming import wire
from streaming.backends import Backend
from streaming.proactive import ProbeSchedule, SilenceFilter, Strategy
from streaming.probe_pace import ProbePace
from streaming.relay import Relay

MAX_WATCH_FRAMES = 20_000  # stream times of sent frames a proactive session reports at `watch.end`


class Probes:
    def __init__(
        self,
        strategy: Strategy,
        backend: Backend,
        send: Callable[[wire.ServerEvent], Awaitable[None]],
        pace: ProbePace | None = None,
    ):
        self.strategy, self.backend, self.send = strategy, backend, send
        self.schedule = ProbeSchedule(strategy) if strategy.probes else None
        self.pace = pace if self.schedule is not None else None
        self.asked = 0
        self.skipped = 0  # probes due that the server's pace refused
        self._last_start: float | None = None  # wall time (the pace's clock) the last probe started
        if self.pace is not None:
            self.pace.join(self)
        self._newest: tuple[int, object] | None = None  # (t_ms, thumbnail or None) of the newest frame sent
        self._sent_ms: list[int] = []  # stream times of every frame sent, for `watch.done`

    async def watched(self, t_ms: int, jpeg: bytes) -> None:
        """A frame the policy sent (as sent): the newest one a probe would look at."""
        thumb = None
        if self.schedule is not None and self.strategy.kind == "change":
            from perception.frame_policy import thumbnail

            thumb = await asyncio.to_thread(thumbnail, jpeg)
            self.schedule.sent(thumb)
        self._newest = (t_ms, thumb)
        if len(self._sent_ms) < MAX_WATCH_FRAMES:
            self._sent_ms.append(t_ms)

    async def due(self, clock_ms: int) -> Coroutine | None:
        """The probe to run now, at stream time `clock_ms`, if one is due (and a frame was sent) and the
        server's pace allows it; a due probe it refuses is skipped, and the first one said."""
        if self.schedule is None or self._newest is None or not self.schedule.due(clock_ms):
            return None
        t_ms, thumb = self._newest
        if self.pace is not None and not self.pace.allow(self, self._last_start):
            self.schedule.skip(clock_ms)
            self.skipped += 1
            if self.skipped == 1:
                pace = self.pace.describe()
                await self.send(
                    wire.ProbePaced(
                        asked_ms=clock_ms,
                        gap_s=pace["gap_s"],
                        min_gap_s=pace["min_gap_s"],
                        rate=pace["rate"],
                        sessions=pace["sessions"],
                    )
                )
            return None
        self._last_start = self.pace.clock() if self.pace is not None else None
        self.schedule.asked(clock_ms, thumb)
        self.asked += 1
        return self._run(self.asked, clock_ms, t_ms)

    def done(self) -> wire.WatchDone:
        return wire.WatchDone(probes=self.asked, frames={"sent_ms": self._sent_ms}, skipped=self.skipped)

    def close(self) -> None:
        """The session is over: it no longer takes a share of the server's probe rate."""
        if self.pace is not None:
            self.pace.leave(self)

    async def _run(self, n: int, asked_ms: int, frame_ms: int) -> None:
        """Ask the backend whether something needs saying; pass a remark on as it comes, send
        nothing of a silent answer, then `probe.done`."""
        asked_at = time.monotonic()
        quiet = SilenceFilter()
        first: list[float] = []
        async with Relay(self.send) as relay:

            def release(texts: list[str], audio: list[bytes]) -> None:
                for piece in texts:
                    relay.put(wire.RemarkDelta(probe=n, text=piece))
                for pcm in audio:
                    relay.put(
                        wire.RemarkAudio(probe=n, audio=base64.b64encode(pcm).decode("ascii"), rate=REPLY_AUDIO_RATE)
                    )

            def on_delta(piece: str) -> None:
                first[:] = first or [time.monotonic()]
                release(*quiet.on_text(piece))

            def on_audio(pcm16: bytes) -> None:
                first[:] = first or [time.monotonic()]
                release([], quiet.on_audio(pcm16))

            cut: list[bool] = []

            def cut_short() -> None:  # another session's user started speaking (`ProbePace.hold`)
                cut.append(True)
                asyncio.get_running_loop().create_task(self.backend.interrupt())

            if self.pace is not None:
                self.pace.running(self, cut_short)
            try:
                reply = await self.backend.probe(on_delta, on_audio)
            finally:
                if self.pace is not None:
                    self.pace.running(self, None)
            if not quiet.text and reply.text:  # a backend that did not stream its text
                release(*quiet.on_text(reply.text))
            release(*quiet.finish())
        done_s = round(time.monotonic() - asked_at, 3)
        silent = quiet.silent
        first_s = None if silent else round((first[0] if first else time.monotonic()) - asked_at, 3)
        incomplete = reply.incomplete or ("cut short: a user started speaking" if cut else None)
        await self.send(
            wire.ProbeDone(
                probe=n,
                asked_ms=asked_ms,
                frame_ms=frame_ms,
                text=reply.text,
                silent=silent,
                first_s=first_s,
                done_s=done_s,
                usage=reply.usage,
                incomplete=incomplete,
                session_lost=reply.session_lost,
                camera=self.backend.probe_camera,
            )
        )
