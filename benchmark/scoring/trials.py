"""Load trial records from a run dir or a transcripts file.

One loader reads our own `transcripts.jsonl` (any schema version) and the
transcripts published by other implementations of this benchmark; the
record's fields and their aliases are `core.records.TrialRecord`'s.

Every problem in the file is collected and raised together in a
`TranscriptError`, each line naming the file, the line number and the field.
A later record for the same (scenario, condition, trial) replaces an earlier
one (a resumed run re-runs cells that errored); the number replaced is kept.

A torn last line (a kill or a full disk cut the final write short, or the
file was truncated by hand) is not an error: it is skipped with a warning on
stderr and its cell counts as not run, so `wearsim report` still works and
`wearsim bench --resume` (which truncates it) runs that cell again. An
invalid line anywhere else stays an error.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from core.records import RecordError, TrialRecord
from core.scenario import TARGET_CONTEXTS, InputProblems

LABELS = TARGET_CONTEXTS  # the four judge labels are the four target contexts


class TranscriptError(InputProblems):
    """Unreadable or invalid transcripts."""


@dataclass(frozen=True, kw_only=True)
class TrialSet:
    trials: tuple[TrialRecord, ...]
    source: Path
    superseded: int = 0  # records replaced by a later record of the same cell
    warnings: tuple[str, ...] = ()  # e.g. a torn last line that was skipped


@dataclass(frozen=True, kw_only=True)
class TornTail:
    """The last line of a transcripts file, cut short: not valid JSON (or not UTF-8)."""

    path: Path
    line: int  # 1-based line number
    offset: int  # byte offset where the line starts: truncate the file here
    size: int  # bytes in the torn line

    def describe(self) -> str:
        return (
            f"{self.path}: line {self.line} (the last, {self.size} bytes) is cut off and not valid JSON; "
            "its cell counts as not run"
        )


@dataclass(frozen=True, kw_only=True)
class ScannedTranscripts:
    records: tuple[TrialRecord, ...]  # in file order, duplicates kept
    problems: tuple[str, ...]
    torn_tail: TornTail | None


def transcripts_path(path: str | Path) -> Path:
    """The transcripts file of a run dir, or the file itself."""
    path = Path(path)
    if path.is_dir():
        path = path / "transcripts.jsonl"
    if not path.exists():
        raise TranscriptError([f"{path}: no such file"])
    return path


# A record line longer than this is refused before it is decoded: each text field of a record is read up to
# records.TEXT_LIMIT (1,000,000) characters, and the longest line this benchmark writes is tens of KB. A line
# of text fields costs about four times its size to decode (bytes, text, parsed JSON); one of many tiny values
# costs far more (a 16 MiB line of `[[],[],...]` held 473 MB as 5.6 million lists), so a line's values are
# counted first (its strings taken out, then its brackets and commas: one pass in C) and a line of more than
# MAX_LINE_VALUES is refused undecoded. Decoding stops at the parser's depth limit (RecursionError) and at
# integers of over 4,300 digits (ValueError): both are a problem of the line, named with its number.
MAX_LINE_BYTES = 16 * 2**20
MAX_LINE_VALUES = 1_000_000  # a record holds a few thousand values (at most 20,000 frame times a trial)
JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
SKIP_CHUNK = 2**20  # the rest of a line over the cap is read past this much at a time


def _regular_file(path: Path):
    """`path` open for reading when it is a regular file; a FIFO, a device or a link to one is an
    OSError naming it, raised without waiting on it (a FIFO nobody writes would hang the reader, a link
    to /dev/zero would spin it)."""
    import errno
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    handle = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        handle.close()
        raise OSError(
            errno.EINVAL, "not a regular file (a FIFO, a device, or a link to one); refusing to read it", str(path)
        )
    os.set_blocking(fd, True)
    return handle


def bounded_lines(path: Path, max_bytes: int | None = None):
    """(line number, byte offset, the line without its newline or None when over `max_bytes` (default
    `MAX_LINE_BYTES`, read when called), its size in bytes) for each line, read a line at a time: a line
    over the cap is read past, never kept. The JSON Lines readers of a run dir (transcripts, label
    files) all read through this."""
    max_bytes = MAX_LINE_BYTES if max_bytes is None else max_bytes
    with _regular_file(Path(path)) as handle:
        number, offset = 0, 0
        raw: bytes | None  # None: the line was over the cap
        while True:
            raw = handle.readline(max_bytes + 1)
            if not raw:
                return
            number += 1
            ended = raw.endswith(b"\n")
            size = len(raw) - ended
            if size > max_bytes:
                while not ended:
                    rest = handle.readline(SKIP_CHUNK)
                    if not rest:
                        break
                    ended = rest.endswith(b"\n")
                    size += len(rest) - ended
                raw = None
            elif ended:
                raw = raw[:-1]
            yield number, offset, raw, size
            offset += size + ended


def _values(raw: bytes) -> int:
    """About how many JSON values the line holds (commas, colons and open brackets outside strings)."""
    marks = raw.count(b",") + raw.count(b"[") + raw.count(b"{")
    if marks <= MAX_LINE_VALUES:  # strings can only add marks: no need to look closer
        return marks
    bare = JSON_STRING.sub(b'""', raw)
    return bare.count(b",") + bare.count(b"[") + bare.count(b"{")


def scan_transcripts(path: Path) -> ScannedTranscripts:
    """Parse every line of a transcripts file; a last line that is not valid
    JSON is reported as `torn_tail`, not as a problem. A line over
    `MAX_LINE_BYTES` is a problem, read past without being decoded."""
    records: list[TrialRecord] = []
    problems: list[str] = []
    pending: tuple[TornTail, str] | None = None  # the newest line that did not parse: torn if it is the last
    for number, start, raw, size in bounded_lines(path):
        if raw is not None and not raw.strip():
            continue
        if pending is not None:
            problems.append(pending[1])
            pending = None
        where = f"{path}: line {number}"
        if raw is None:
            problems.append(f"{where}: {size:,} bytes, over the {MAX_LINE_BYTES:,} a record line may hold; not read")
            continue
        values = _values(raw)
        if values > MAX_LINE_VALUES:
            problems.append(
                f"{where}: about {values:,} JSON values, over the {MAX_LINE_VALUES:,} a record line "
                "may hold; not decoded"
            )
            continue
        try:
            data_json = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            pending = (
                TornTail(path=path, line=number, offset=start, size=size),
                f"{where}: not UTF-8 text ({exc.reason})",
            )
            continue
        except json.JSONDecodeError as exc:
            pending = (
                TornTail(path=path, line=number, offset=start, size=size),
                f"{where}: invalid JSON: {exc.msg} (column {exc.colno})",
            )
            continue
        except RecursionError:
            pending = (
                TornTail(path=path, line=number, offset=start, size=size),
                f"{where}: JSON nested deeper than the parser reads",
            )
            continue
        except ValueError as exc:  # an integer of more digits than Python converts
            pending = (
                TornTail(path=path, line=number, offset=start, size=size),
                f"{where}: cannot be decoded: {str(exc)[:160]}",
            )
            continue
        try:
            records.append(TrialRecord.from_json(data_json, where))
        except RecordError as exc:
            problems.extend(exc.problems)
    return ScannedTranscripts(
        records=tuple(records), problems=tuple(problems), torn_tail=pending[0] if pending is not None else None
    )


def load_trials(path: str | Path) -> TrialSet:
    """Read every trial from a run dir or a transcripts JSON Lines file."""
    path = transcripts_path(path)
    scanned = scan_transcripts(path)
    problems = list(scanned.problems)
    cells: dict[tuple, TrialRecord] = {}
    superseded = 0
    for trial in scanned.records:
        if trial.cell in cells:
            superseded += 1
        cells[trial.cell] = trial
    if not cells and not problems:
        torn = f" ({scanned.torn_tail.describe()})" if scanned.torn_tail is not None else ""
        problems.append(f"{path}: no trial records{torn}")
    if problems:
        raise TranscriptError(problems)
    warnings: tuple[str, ...] = ()
    if scanned.torn_tail is not None:
        warnings = (f"{scanned.torn_tail.describe()}; skipped it (`wearsim bench --resume` runs that cell again)",)
        print(f"warning: {warnings[0]}", file=sys.stderr)
    return TrialSet(trials=tuple(cells.values()), source=path, superseded=superseded, warnings=warnings)
