"""The server's pace for proactive probes, on its own wall clock.

A session's strategy says when a probe is due in stream time (`streaming.proactive`);
a client that advances its stream faster than real time would otherwise get a probe
per chunk, each a model request (on a paid backend, a paid one with an image) asked
with nobody speaking. So the server also paces them:

- at most one probe in flight per session (the session starts one only when nothing
  is being answered);
- at least `min_gap_s` of wall time between the starts of one session's probes
  (`wearsim serve --probe-min-gap`, default 1 s);
- at most `rate` probes a second over the whole server (`--probe-rate`), shared
  fairly: with N proactive sessions open, each may start one every N / rate seconds
  at most (and never sooner than its minimum gap), and every start takes a token from
  one server-wide bucket (`core.token_bucket`) holding one probe. When sessions
  contend for that token, the one refused longest ago gets the next (a claim lapses
  after one gap: a session that stopped asking holds no one up for longer).

- while any session's user speaks or waits for an answer (from the start of speech to
  the reply's first text, or its end: `hold`, `release`), no probe starts anywhere: a
  spoken question goes first, and a probe still running is cut short (`running`: the
  session's backend is told to stop, as for a barge-in; its `probe.done` says
  `incomplete`). The benchmark's own in-process server neither holds nor cuts
  (`hold_turns` False): there a trial's opening line would change when another trial
  is probed.

A due probe the pace refuses is skipped, never queued: the schedule moves on as if it
had been asked (`ProbeSchedule.skip`), and the session counts it and, the first time,
tells the client (`probe.paced`). Real-time streams keep their strategies' meaning in
stream time: `SLACK_S` of a client's pacing jitter is forgiven.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from core.token_bucket import TokenBucket

DEFAULT_MIN_GAP_S = 1.0
DEFAULT_RATE = 1.0  # probes a second over the whole server
TURN_HOLD_S = 35.0  # a spoken turn holds probes back at most this long (an utterance is cut at 30 s)
SLACK_S = 0.1  # a real-time client's pacing jitter: a probe due this much early in wall time still starts


class ProbePace:
    """Shared by every session of one server."""

    def __init__(
        self,
        rate: float = DEFAULT_RATE,
        min_gap_s: float = DEFAULT_MIN_GAP_S,
        *,
        hold_turns: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ):
        if not rate > 0 or not min_gap_s >= 0:
            raise ValueError(f"probe pace: the rate must be above 0 and the gap at least 0, got {rate}, {min_gap_s}")
        self.rate, self.min_gap_s, self.clock = float(rate), float(min_gap_s), clock
        self.hold_turns = hold_turns
        self.bucket = TokenBucket(self.rate, 1.0, clock=clock)
        self._sessions: set[int] = set()
        self._claims: dict[int, float] = {}  # session -> when the bucket first refused it, while it waits
        self._holds: dict[int, float] = {}  # session -> when its turn's hold lapses
        self._running: dict[int, Callable[[], None]] = {}  # session -> how to cut its running probe short

    def join(self, session: object) -> None:
        self._sessions.add(id(session))

    def leave(self, session: object) -> None:
        self._sessions.discard(id(session))
        self._claims.pop(id(session), None)
        self._holds.pop(id(session), None)
        self._running.pop(id(session), None)

    def running(self, session: object, cut: Callable[[], None] | None) -> None:
        """`session` started a probe that `cut` stops early (None: its probe is over)."""
        if cut is None:
            self._running.pop(id(session), None)
        else:
            self._running[id(session)] = cut

    def hold(self, session: object) -> None:
        """`session`'s user started speaking: no probe starts until its reply comes (`release`), and the
        probes running elsewhere are cut short."""
        if self.hold_turns:
            self._holds[id(session)] = self.clock() + TURN_HOLD_S
            for key, cut in list(self._running.items()):
                if key != id(session):
                    del self._running[key]
                    cut()

    def release(self, session: object) -> None:
        self._holds.pop(id(session), None)

    @property
    def held(self) -> bool:
        now = self.clock()
        self._holds = {k: t for k, t in self._holds.items() if t > now}
        return bool(self._holds)

    @property
    def gap_s(self) -> float:
        """The least wall time between one session's probes now: its minimum gap, or its fair share of
        the server's rate."""
        return max(self.min_gap_s, len(self._sessions) / self.rate)

    def allow(self, session: object, last_start: float | None) -> bool:
        """`session`'s probe may start now (its last one started at `last_start`, on this clock)."""
        now = self.clock()
        if self.held or last_start is not None and now - last_start < self.gap_s - SLACK_S:
            return False
        key = id(session)
        self._claims = {k: t for k, t in self._claims.items() if now - t <= self.gap_s}
        first = min(self._claims, key=self._claims.__getitem__, default=key)
        if first == key and self.bucket.try_take(1.0, now):
            self._claims.pop(key, None)
            return True
        self._claims.setdefault(key, now)
        return False

    def describe(self) -> dict:
        return {
            "min_gap_s": self.min_gap_s,
            "rate": self.rate,
            "sessions": len(self._sessions),
            "gap_s": round(self.gap_s, 3),
            "held": self.held,
        }
