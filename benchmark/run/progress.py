"""The progress line on stderr: cells done, outcomes, requests in flight and waiting, eta.

On a terminal the line is redrawn in place. Anywhere else (output redirected to a file, a CI
log) every redraw would be a line of its own, so there the same facts are written as a plain
line each time another tenth of the work is done, or 30 s after the last line, whichever comes
first: a 50-cell run writes about a dozen lines, not one a second."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from core.records import TrialRecord


def is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Pace:
    """When a progress update is written, and how. On a terminal (`live`): redrawn in place, at
    most `MIN_INTERVAL_S` apart unless forced. Elsewhere: a plain line when `done` reaches another
    `1 / STEPS` of `total`, or when `QUIET_S` have passed since the last line; forcing changes
    nothing there, so a once-a-second tick writes a line only every `QUIET_S`."""

    MIN_INTERVAL_S = 0.1
    STEPS = 10
    QUIET_S = 30.0

    def __init__(self, stream: TextIO | None = None, *, clock: Callable[[], float] = time.monotonic):
        self.stream = stream or sys.stderr
        self.live = is_terminal(self.stream)
        self.clock = clock
        self._written_at = clock()  # the run's start counts as the last line for the quiet rule
        self._step = 0
        self._open = False  # a live line is on the screen without its newline

    def due(self, done: int, total: int, *, force: bool = False) -> bool:
        now = self.clock()
        if self.live:
            if not force and now - self._written_at < self.MIN_INTERVAL_S:
                return False
        else:
            step = done * self.STEPS // max(total, 1)
            if step <= self._step and now - self._written_at < self.QUIET_S:
                return False
            self._step = max(step, self._step)
        self._written_at = now
        return True

    def write(self, text: str) -> None:
        if self.live:
            print(f"\r{text}", end="", file=self.stream, flush=True)
            self._open = True
        else:
            print(text.rstrip(), file=self.stream, flush=True)

    def close(self) -> None:
        if self._open:
            print(file=self.stream, flush=True)
            self._open = False


class Progress:
    """The run's progress on stderr (`Pace` says when and how), written when a cell finishes (always
    for the last one) and by `tick()`: cells done, outcomes, requests in flight and waiting on a rate
    limit, eta."""

    def __init__(self, total: int, *, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic):
        self.total, self.done = total, 0
        self.counts = {"pass": 0, "miss": 0, "unscored": 0, "error": 0}
        self.clock = clock
        self.started = clock()
        self.pace = Pace(stream, clock=clock)
        self._last = ""

    def update(self, record: TrialRecord) -> None:
        self.done += 1
        if record.errored:
            self.counts["error"] += 1
        elif record.watching is not None:
            self.counts["pass" if record.watching.passed else "miss"] += 1
        elif record.passed is None:
            self.counts["unscored"] += 1
        else:
            self.counts["pass" if record.passed else "miss"] += 1
        self._last = f"{record.scenario_id} {record.condition}"
        self.draw(force=self.done == self.total)

    def tick(self) -> None:
        self.draw(force=True)

    def skip(self) -> None:
        """A cell that will not run (the budget is spent)."""
        self.total -= 1
        self.draw(force=self.done == self.total)

    def draw(self, force: bool = False) -> None:
        if not self.pace.due(self.done, self.total, force=force):
            return
        from candidates.ratelimit import REQUESTS

        elapsed = self.clock() - self.started
        # no estimate until a cell has finished: "eta 0s" before then read as "almost done"
        eta = f"{elapsed / self.done * (self.total - self.done):4.0f}s" if self.done else "   ?"
        summary = " ".join(f"{k} {v}" for k, v in self.counts.items())
        requests = f"requests {REQUESTS.in_flight} in flight, {REQUESTS.waiting} waiting"
        if self.pace.live:
            width = 24
            filled = int(width * self.done / max(self.total, 1))
            self.pace.write(
                f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                f"{self._last}  {summary}  {requests}  eta {eta}   "
            )
        else:
            self.pace.write(
                f"cells {self.done}/{self.total} after {elapsed:.0f}s  last {self._last or '-'}  "
                f"{summary}  {requests}  eta {eta.strip()}"
            )

    def close(self) -> None:
        self.pace.close()
