"""`RUN_DIR/labels/NAME.jsonl`: one file per annotator, one JSON line per label.

A line is `{"trial_key", "what", "label", "annotator", "note", "time",
"sample"}`, `sample` saying how the item was drawn (`random`, or
`disagreements`: `wearsim annotate --sample disagreements`; a line without
it is `random`, as every sample was before there were two); a later line for
the same key replaces an earlier one. Files are written whole,
to a temp file renamed over the old one (`core.safe_files.write_atomic`), so
a label given in the browser is on disk before the next item shows, a
closed tab loses nothing, and a crash leaves the old file or the new one.
Every read-modify-rename holds an OS lock (`fcntl.flock` on
`RUN_DIR/labels/.lock`, opened without following a link), so two pages of
one annotator, a Turn 2 tab and a Turn 3 tab, and `wearsim labels import`,
in any processes, never write over each other's labels: a label the page
answered "saved" is in the file. A hidden temp file a killed save left
behind (`.NAME.jsonl.PID.HEX.tmp`) is removed when the folder is next
written (`sweep_temp_files`).

A run dir may come from someone else, so reading is strict and bounded: a
label file that is a link, lies outside the run dir, is over
`MAX_LABEL_FILE_BYTES`, has a line over `MAX_LABEL_LINE_BYTES`, a line that
is not a JSON object, a key that is no item of the run, or a label outside
the item's allowed ones is refused with one `LabelError` line naming the
file and the line. A refused file is never written over: a save or an import
into it stops before anything is written, so nothing already saved is lost.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import stat
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from benchmark.labels import SAMPLES
from benchmark.labels.items import LabelError, labels_for
from core.safe_files import UnsafePathError, inside, make_dirs, write_atomic

LABELS_DIR = "labels"
LOCK_NAME = ".lock"
TEMP_FILE = re.compile(r"\.[A-Za-z0-9][A-Za-z0-9._-]{0,39}\.jsonl\.[0-9]+\.[0-9a-f]{12}\.tmp")
MAX_LABEL_LINE_BYTES = 16 * 1024
MAX_LABEL_FILE_BYTES = 16 * 2**20
MAX_NOTE_CHARS = 2000
# annotators one run's labels/ may hold: a lab's crowd is tens, and every command reading labels reads each file
MAX_ANNOTATORS = 1000
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")


def check_annotator(name: str) -> str:
    """`name` when it can name a label file (letters, digits, `.`, `_`, `-`, at most 40, not starting with
    a dot or a dash: no path, no hidden file), else `LabelError`."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise LabelError(
            f"annotator name {str(name)[:60]!r}: use 1 to 40 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


@dataclass(frozen=True, kw_only=True)
class Label:
    key: str
    what: str
    label: str
    annotator: str
    note: str = ""
    time: str = ""
    sample: str = "random"  # how the item was drawn: one of SAMPLES

    def to_json(self) -> dict:
        return {
            "trial_key": self.key,
            "what": self.what,
            "label": self.label,
            "annotator": self.annotator,
            "note": self.note,
            "time": self.time,
            "sample": self.sample,
        }


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def moment(text: str) -> datetime | None:
    """An ISO 8601 time (`Z` or an offset; none is UTC) as an aware datetime; None when it is not one."""
    try:
        when = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def check_sample(sample: object, where: str) -> str:
    """`sample` when it names how an item was drawn (one of SAMPLES), else `LabelError`."""
    if sample not in SAMPLES:
        raise LabelError(f"{where}: field 'sample' is {str(sample)[:40]!r}, not one of {', '.join(SAMPLES)}")
    return str(sample)


def label_path(run_dir: Path, annotator: str) -> Path:
    return Path(run_dir) / LABELS_DIR / f"{check_annotator(annotator)}.jsonl"


def make_label(
    key: object,
    label: object,
    annotator: str,
    known: dict[str, str],
    where: str,
    note: str = "",
    time: str = "",
    sample: object = "random",
) -> Label:
    """A checked `Label`: `known` maps every item key of the run to its kind; `where` names the source."""
    if not isinstance(key, str) or key not in known:
        raise LabelError(f"{where}: unknown trial key {str(key)[:80]!r} (not an item of this run)")
    what = known[key]
    if not isinstance(label, str) or label not in labels_for(what):
        raise LabelError(f"{where}: label {str(label)[:40]!r} is not one of {', '.join(labels_for(what))}")
    if not isinstance(note, str) or len(note) > MAX_NOTE_CHARS:
        raise LabelError(f"{where}: field 'note' must be text of at most {MAX_NOTE_CHARS} characters")
    check_sample(sample, where)
    check_annotator(annotator)
    return Label(
        key=key,
        what=what,
        label=label,
        annotator=annotator,
        note=note,
        time=time if isinstance(time, str) else "",
        sample=str(sample),
    )


def _checked_file(path: Path, run_dir: Path) -> Path:
    if path.is_symlink():
        raise LabelError(f"{path}: is a symbolic link; refusing a label file through a link")
    if not inside(path, run_dir):
        raise LabelError(f"{path}: not a regular file inside {run_dir}; refusing it")
    size = path.stat().st_size
    if size > MAX_LABEL_FILE_BYTES:
        raise LabelError(f"{path}: {size:,} bytes, over the {MAX_LABEL_FILE_BYTES:,} a label file may hold")
    return path


def json_object(raw: bytes, where: str) -> dict:
    """One line of a JSON Lines file as a JSON object, or one `LabelError` naming `where` (the file and line)."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason
        raise LabelError(f"{where}: not a JSON line ({reason})") from None
    except RecursionError:
        raise LabelError(f"{where}: not a JSON line (nested too deeply)") from None
    if not isinstance(data, dict):
        raise LabelError(f"{where}: expected a JSON object")
    return data


def read_label_file(path: Path, run_dir: Path, known: dict[str, str]) -> dict[str, Label]:
    """The labels of one annotator's file by key (a later line for a key replaces an earlier one)."""
    from benchmark.scoring.trials import bounded_lines

    path = _checked_file(Path(path), Path(run_dir))
    annotator = check_annotator(path.stem)
    labels: dict[str, Label] = {}
    for number, _, raw, size in bounded_lines(path, MAX_LABEL_LINE_BYTES):
        where = f"{path}: line {number}"
        if raw is None:
            raise LabelError(f"{where}: {size:,} bytes, over the {MAX_LABEL_LINE_BYTES:,} a label line may hold")
        if not raw.strip():
            continue
        data = json_object(raw, where)
        if data.get("annotator", annotator) != annotator:
            raise LabelError(
                f"{where}: field 'annotator' is {str(data.get('annotator'))[:40]!r}, but the file is {annotator}'s"
            )
        label = make_label(
            data.get("trial_key"),
            data.get("label"),
            annotator,
            known,
            where,
            data.get("note") or "",
            data.get("time") or "",
            data.get("sample", "random"),
        )
        labels[label.key] = label
    return labels


def annotator_files(run_dir: Path) -> list[Path]:
    """The label files in `RUN_DIR/labels/` (temp files aside); a labels folder that is a link is refused."""
    folder = Path(run_dir) / LABELS_DIR
    if folder.is_symlink():
        raise LabelError(f"{folder}: is a symbolic link; refusing a labels folder through a link")
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name.endswith(".jsonl") and not p.name.startswith("."))


def read_all_labels(run_dir: Path, known: dict[str, str]) -> dict[str, dict[str, Label]]:
    """Every annotator's labels: annotator -> key -> label."""
    return {path.stem: read_label_file(path, run_dir, known) for path in annotator_files(run_dir)}


@contextlib.contextmanager
def labels_locked(run_dir: Path):
    """Hold the run's label lock (an exclusive `flock` on `RUN_DIR/labels/.lock`, made when missing) for
    the block: every writer of label files takes it, in any process. The lock file is opened with
    O_NOFOLLOW and must be a regular file, so a link or a FIFO put in its place is refused, never followed."""
    run_dir = Path(run_dir)
    folder = run_dir / LABELS_DIR
    try:
        make_dirs(folder, run_dir)
    except UnsafePathError as exc:
        raise LabelError(str(exc)) from None
    path = folder / LOCK_NAME
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        why = "is a symbolic link" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        raise LabelError(f"{path}: {why}; refusing the label lock") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise LabelError(f"{path}: not a regular file; refusing the label lock")
        fcntl.flock(fd, fcntl.LOCK_EX)
        sweep_temp_files(run_dir)
        yield
    finally:
        os.close(fd)  # closing the only descriptor releases the lock


def sweep_temp_files(run_dir: Path) -> list[str]:
    """Remove the hidden temp files a killed save left in `RUN_DIR/labels/` (only names of our own
    pattern, only regular files or links themselves, never what a link points to); returns their names.
    Called with the lock held, so no live save's temp file is taken."""
    folder = Path(run_dir) / LABELS_DIR
    if folder.is_symlink() or not folder.is_dir():
        return []
    removed = []
    for entry in sorted(folder.iterdir()):
        if not TEMP_FILE.fullmatch(entry.name):
            continue
        facts = entry.lstat()
        if stat.S_ISREG(facts.st_mode) or stat.S_ISLNK(facts.st_mode):
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()  # unlink removes the name (a link itself), never its target
                removed.append(entry.name)
    return removed


def write_labels(run_dir: Path, annotator: str, new: list[Label], known: dict[str, str]) -> int:
    """Add `new` to the annotator's file (a label for a key already there replaces it) and write the file
    whole by temp file and rename, under the label lock; returns how many labels the file holds. The file
    as it is must read cleanly first: a hostile one is refused and left as it was."""
    with labels_locked(run_dir):
        return _write_labels(Path(run_dir), annotator, new, known)


def _write_labels(run_dir: Path, annotator: str, new: list[Label], known: dict[str, str]) -> int:
    path = label_path(run_dir, annotator)
    labels = read_label_file(path, run_dir, known) if path.exists() or path.is_symlink() else {}
    for label in new:
        labels[label.key] = label
    text = "".join(json.dumps(label.to_json(), ensure_ascii=False) + "\n" for label in labels.values())
    try:
        write_atomic(path, text, run_dir, sync=True)
    except UnsafePathError as exc:
        raise LabelError(str(exc)) from None
    return len(labels)


def import_labels(run_dir: Path, labels: list[Label], known: dict[str, str]) -> dict[str, tuple[int, int, int]]:
    """Add imported labels to each annotator's file, each with the time of the import; returns annotator ->
    (labels written, labels already there with the same label, note and sample, labels kept because the one
    in labels/ is newer than the file's). A label whose file does not say its sample (`sample` "") takes
    the sample of the label there, else `random`. A label already there unchanged is left as it is (its time too), and
    one changed in labels/ after the file was written (the file's label carries an older time) is kept: so
    two exports of one moment, each edited and both imported, change only what was edited. Every
    annotator's file as it is is read first, so a refused one stops the import before anything is written.
    The whole import holds the label lock, so a page saving meanwhile waits and loses nothing."""
    with labels_locked(run_dir):
        return _import_labels(Path(run_dir), labels, known)


def _import_labels(run_dir: Path, labels: list[Label], known: dict[str, str]) -> dict[str, tuple[int, int, int]]:
    by_annotator: dict[str, list[Label]] = {}
    for label in labels:
        by_annotator.setdefault(label.annotator, []).append(label)
    present = {path.stem for path in annotator_files(run_dir)}
    if len(present | set(by_annotator)) > MAX_ANNOTATORS:
        raise LabelError(
            f"the import names {len(set(by_annotator) - present):,} new annotators; with the {len(present):,} in "
            f"{Path(run_dir) / LABELS_DIR} that is over the {MAX_ANNOTATORS:,} a run may hold (nothing written)"
        )
    counts: dict[str, tuple[int, int, int]] = {}
    changed: dict[str, list[Label]] = {}
    stamp = now()
    for annotator, given in by_annotator.items():
        path = label_path(run_dir, annotator)
        there = read_label_file(path, run_dir, known) if path.exists() or path.is_symlink() else {}
        latest = {label.key: label for label in given}  # a later row for a key replaces an earlier one
        new, same, kept = [], 0, 0
        for key, label in latest.items():
            old = there.get(key)
            if not label.sample:  # the file does not say which sample: the label's there, else random
                label = replace(label, sample=old.sample if old is not None else "random")
            if old is not None and (old.label, old.note, old.sample) == (label.label, label.note, label.sample):
                same += 1
            elif old is not None and _newer(old.time, label.time):
                kept += 1
            else:
                new.append(replace(label, time=stamp))
        changed[annotator] = new
        counts[annotator] = (len(new), same, kept)
    for annotator, new in changed.items():
        if new:
            _write_labels(run_dir, annotator, new, known)
    return counts


def _newer(saved: str, given: str) -> bool:
    """Whether a saved label's time is later than an imported one's (a label without a time is never older)."""
    saved_at, given_at = moment(saved), moment(given)
    return saved_at is not None and given_at is not None and saved_at > given_at
