"""The progress line on stderr: cells done, outcomes, requests in flight and waiting, eta."""

from __future__ import annotations

import sys
import time

from core.records import TrialRecord


class Progress:
    """One progress line on stderr, redrawn when a cell finishes (at most
    `MIN_INTERVAL_S` apart, and always for the last one) and by `tick()`:
    cells done, outcomes, requests in flight and waiting on a rate limit, eta."""

    MIN_INTERVAL_S = 0.1

    def __init__(self, total: int):
        self.total, self.done = total, 0
        self.counts = {"pass": 0, "miss": 0, "unscored": 0, "error": 0}
        self.started = time.monotonic()
        self._drawn = 0.0
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
        from candidates.ratelimit import REQUESTS

        now = time.monotonic()
        if not force and now - self._drawn < self.MIN_INTERVAL_S:
            return
        self._drawn = now
        elapsed = now - self.started
        # no estimate until a cell has finished: "eta 0s" before then read as "almost done"
        eta = f"{elapsed / self.done * (self.total - self.done):4.0f}s" if self.done else "   ?"
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        summary = " ".join(f"{k} {v}" for k, v in self.counts.items())
        print(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
              f"{self._last}  {summary}  requests {REQUESTS.in_flight} in flight, {REQUESTS.waiting} waiting"
              f"  eta {eta}   ", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        print(file=sys.stderr)
