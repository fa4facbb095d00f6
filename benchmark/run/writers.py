"""The run's line-at-a-time files: `transcripts.jsonl` (one record per trial, fsync'd) and
`cache_log.jsonl` (per cell, which replies came from the response cache)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from benchmark.run.errors import write_failed
from core.records import SweepPoint, TrialRecord
from core.safe_files import check_target, open_append


class TranscriptWriter:
    """Appends one JSON line per trial to a file opened once (refused if it is a
    link); each write is flushed and fsync'd. A write that fails (a full disk)
    is cut back off, so the file never ends in half a line, and raises
    `TranscriptWriteError`."""

    def __init__(self, path: Path):
        self.path = check_target(path)
        self._lock = asyncio.Lock()
        self.handle = open_append(self.path)
        if self.handle.tell():  # a last record written without its newline
            with path.open("rb") as existing:
                existing.seek(-1, os.SEEK_END)
                if existing.read(1) != b"\n":
                    self.handle.write(b"\n")

    def close(self) -> None:
        self.handle.close()

    async def append(self, record: TrialRecord) -> None:
        line = record.to_line().encode("utf-8")
        async with self._lock:
            size = self.handle.tell()
            try:
                self.handle.write(line)
                self.handle.flush()
                os.fsync(self.handle.fileno())
            except OSError as exc:
                try:
                    self.handle.truncate(size)
                except OSError:
                    pass  # load_trials and --resume both skip a torn last line
                raise write_failed(self.path, exc) from None


class CacheLogWriter:
    """`cache_log.jsonl`: one line per cell that used the response cache,
    `{"cell": [condition, scenario, trial, staleness_ms, frame_policy, impairment], "replies": {role:
    {"from_cache": n, "requested": n}}}`; a resumed run appends (a later line
    for the same cell replaces an earlier one)."""

    def __init__(self, path: Path):
        self.handle = open_append(path, text=True)

    def append(self, condition: str, scenario_id: str, trial: int, point: SweepPoint, replies: dict) -> None:
        self.handle.write(json.dumps({"cell": [condition, scenario_id, trial, *point], "replies": replies}) + "\n")
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()
