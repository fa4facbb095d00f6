"""Labels made elsewhere, read back: a Label Studio JSON export and a plain CSV (the writers of both:
`benchmark.labels.export`).

- `read_label_studio(path, known, annotator, annotator_map)`: a Label Studio JSON export (the list
  of tasks, each with `data` and `annotations`; an annotation's `result` holds `{"from_name":
  "label", "type": "choices", "value": {"choices": [LABEL]}}` and optionally the `note` text area;
  cancelled annotations are skipped). Who labelled (`Annotators`): `--annotator` for the whole file,
  else the user's entry in `--annotator-map FILE` (`read_annotator_map`: a JSON object of Label
  Studio user ids, `{"1": "ana", "7": "ben"}`), else the local part of the e-mail or the first and
  last name that `completed_by` carries when it is an object (Label Studio's detailed export and
  `wearsim labels export`). A bare user id (`"completed_by": 1`, Label Studio's default export)
  without a map is refused with one line, never turned into a made-up name.
- `read_csv(path, known)`: `trial_key,label,annotator`, then optionally `note`,
  `time` (an ISO 8601 time, as `wearsim labels export` writes it) and `sample`.

Which sample a label's item was drawn by (`random` or `disagreements`) is
read where the file says it (the CSV's `sample`, an annotation's `sample`,
both written by `wearsim labels export` for a disagreement sample's labels);
where it does not, the label's `sample` is "" and the import decides
(`store.import_labels`, `wearsim labels import --sample`).

A label read keeps the time the file gives it (a Label Studio annotation's
`updated_at`, else `created_at`; a CSV's `time`), so that `store.import_labels`
can keep a label changed in `labels/` after the file was exported.

Every row is checked as a label file's line is (`store.make_label`): an
unknown key or a label outside the item's ones is refused with one line
naming the file and the task or line, before anything is written.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchmark.labels.items import LabelError
from benchmark.labels.store import Label, check_annotator, check_sample, make_label, moment

MAX_IMPORT_BYTES = 64 * 2**20  # what the reference labels' files may hold (benchmark.labels.reference)
MAX_EXPORT_BYTES = 16 * 2**20  # a Label Studio export or CSV of thousands of tasks is a few MB
MAX_IMPORT_ITEMS = 100_000  # tasks of a JSON export, rows of a CSV
MAX_CSV_FIELD = 4096
MAP_EXAMPLE = '{"1": "ana", "7": "ben"}'


def _read_bounded(path: Path) -> bytes:
    """The bytes of an import file: a regular file (a FIFO, a device or a link to one refused without
    waiting on it) of at most MAX_IMPORT_BYTES, its size checked before a byte is read."""
    from core.safe_files import UserFileRefused, read_user_file

    try:
        return read_user_file(Path(path), MAX_EXPORT_BYTES, "label import")
    except UserFileRefused as exc:
        raise LabelError(str(exc)) from None
    except OSError as exc:
        raise LabelError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def _json(path: Path, what: str):
    """The JSON of an import file, or one LabelError naming it (not JSON, nested too deeply, a number
    of more digits than Python reads)."""
    data = _read_bounded(path)
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason
        raise LabelError(f"{path}: not {what} ({reason})") from None
    except RecursionError:
        raise LabelError(f"{path}: not {what} (nested too deeply)") from None
    except ValueError as exc:
        raise LabelError(f"{path}: not {what} ({str(exc)[:80]})") from None


def _clean(text: str) -> str:
    """A name from free text: letters, digits, '.', '_' and '-' kept, anything else a dash, at most 40."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text.strip()).strip(".-")[:40].rstrip(".-")


def read_annotator_map(path: Path) -> dict[int, str]:
    """`--annotator-map FILE`: a JSON object from Label Studio user ids to annotator names,
    `{"1": "ana", "7": "ben"}`; anything else is refused with one line naming the file and the entry."""
    data = _json(path, f"JSON; an annotator map is an object like {MAP_EXAMPLE}")
    if not isinstance(data, dict) or not data:
        raise LabelError(f"{path}: an annotator map is a JSON object like {MAP_EXAMPLE}")
    mapping = {}
    for user, name in data.items():
        if not (isinstance(user, str) and user.isascii() and user.isdigit()):
            raise LabelError(f'{path}: key {user[:40]!r}: a Label Studio user id is a whole number, like "7"')
        try:
            mapping[int(user)] = check_annotator(name)
        except LabelError as exc:
            raise LabelError(f"{path}: user {user}: {exc}") from None
    return mapping


@dataclass(kw_only=True)
class Annotators:
    """Who labelled each annotation of a Label Studio export: one `--annotator` for the whole file, else
    the user's entry in `--annotator-map`, else the e-mail's local part, else the user's first and last
    name. A bare user id with no map (Label Studio's default export) is refused, never made up; two
    users whose e-mails or names read as one annotator name are refused too."""

    fixed: str | None = None
    mapping: dict[int, str] | None = None
    seen: dict[str, object] = field(default_factory=dict)

    def name(self, completed_by, where: str) -> str:
        if self.fixed is not None:
            return self.fixed
        user = completed_by.get("id") if isinstance(completed_by, dict) else completed_by
        number = user if isinstance(user, int) and not isinstance(user, bool) else None
        if number is not None and self.mapping is not None:
            if number not in self.mapping:
                raise LabelError(f"{where}: Label Studio user {number} is not in --annotator-map")
            return self.mapping[number]
        if isinstance(completed_by, dict):
            email, first, last = (completed_by.get(k) for k in ("email", "first_name", "last_name"))
            if isinstance(email, str) and "@" in email and (name := _clean(email.split("@", 1)[0])):
                return self._once(name, email.lower(), where)
            words = " ".join(w for w in (first, last) if isinstance(w, str) and w.strip())
            if name := _clean(words):
                return self._once(name, number if number is not None else words, where)
        if number is not None:
            raise LabelError(
                f"{where}: completed_by is Label Studio user {number}, with no e-mail or name to go by; "
                f"give --annotator-map FILE (a JSON object like {MAP_EXAMPLE}) or --annotator NAME"
            )
        raise LabelError(f"{where}: no annotator (completed_by) to name; give --annotator NAME")

    def _once(self, name: str, who: object, where: str) -> str:
        check_annotator(name)
        if self.seen.setdefault(name, who) != who:
            raise LabelError(
                f"{where}: two Label Studio users ({self.seen[name]} and {who}) both read as annotator {name!r}; "
                "give --annotator-map FILE to tell them apart"
            )
        return name


def _result(result, where: str) -> tuple[str | None, str]:
    """(the chosen label, the note) of an annotation's result list."""
    if not isinstance(result, list):
        raise LabelError(f"{where}: field 'result' must be a list")
    label, note = None, ""
    for region in result:
        if not isinstance(region, dict) or not isinstance(region.get("value"), dict):
            raise LabelError(f"{where}: each result must be an object with a 'value'")
        if region.get("from_name") == "label":
            chosen = region["value"].get("choices")
            if not isinstance(chosen, list) or len(chosen) != 1:
                raise LabelError(f"{where}: the 'label' result must hold one choice")
            label = chosen[0]
        elif region.get("from_name") == "note":
            text = region["value"].get("text")
            note = "\n".join(t for t in text if isinstance(t, str)) if isinstance(text, list) else ""
    return label, note


def read_label_studio(
    path: Path, known: dict[str, str], annotator: str | None = None, annotator_map: dict[int, str] | None = None
) -> list[Label]:
    tasks = _json(path, "a Label Studio JSON export")
    if not isinstance(tasks, list):
        raise LabelError(f"{path}: a Label Studio JSON export is a list of tasks")
    if len(tasks) > MAX_IMPORT_ITEMS:
        raise LabelError(f"{path}: {len(tasks):,} tasks, over the {MAX_IMPORT_ITEMS:,} an import may hold")
    if annotator is not None:
        check_annotator(annotator)
    who = Annotators(fixed=annotator, mapping=annotator_map)
    labels = []
    for n, task in enumerate(tasks, start=1):
        where = f"{path}: task {n}"
        if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
            raise LabelError(f"{where}: each task must be an object with 'data'")
        key = task["data"].get("trial_key")
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            raise LabelError(f"{where}: field 'annotations' must be a list")
        for m, annotation in enumerate(annotations, start=1):
            here = f"{where}, annotation {m}"
            if not isinstance(annotation, dict) or annotation.get("was_cancelled") is True:
                continue
            label, note = _result(annotation.get("result"), here)
            if label is None:
                continue
            name = who.name(annotation.get("completed_by"), here)
            given = annotation.get("updated_at") or annotation.get("created_at")
            time = given if isinstance(given, str) and moment(given) is not None else ""
            sample = annotation.get("sample")
            made = make_label(key, label, name, known, here, note[:2000], time)
            labels.append(replace(made, sample=check_sample(sample, here) if sample is not None else ""))
    return labels


def read_csv(path: Path, known: dict[str, str]) -> list[Label]:
    try:
        text = _read_bounded(path).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LabelError(f"{path}: not UTF-8 text ({exc.reason})") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise LabelError(f"{path}: empty; expected the header trial_key,label,annotator") from None
    except csv.Error as exc:
        raise LabelError(f"{path}: line 1: {exc}") from None
    if header[:3] != ["trial_key", "label", "annotator"]:
        raise LabelError(
            f"{path}: line 1: the header must start trial_key,label,annotator (then optionally note, time, sample)"
        )
    note_at, time_at, sample_at = (
        header.index(name) if name in header else None for name in ("note", "time", "sample")
    )
    labels: list[Label] = []
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise LabelError(f"{path}: line {reader.line_num}: {exc}") from None
        where = f"{path}: line {reader.line_num}"
        if len(labels) >= MAX_IMPORT_ITEMS:
            raise LabelError(f"{where}: over the {MAX_IMPORT_ITEMS:,} rows an import may hold")
        if not any(cell.strip() for cell in row):
            continue
        if any(len(cell) > MAX_CSV_FIELD for cell in row):
            raise LabelError(f"{where}: a field over {MAX_CSV_FIELD} characters")
        if len(row) < 3:
            raise LabelError(f"{where}: expected trial_key,label,annotator")
        note = row[note_at] if note_at is not None and len(row) > note_at else ""
        time = row[time_at].strip() if time_at is not None and len(row) > time_at else ""
        if time and moment(time) is None:
            raise LabelError(f"{where}: field 'time' {time[:40]!r} is not an ISO 8601 time")
        sample = row[sample_at].strip() if sample_at is not None and len(row) > sample_at else ""
        made = make_label(row[0].strip(), row[1].strip(), row[2].strip(), known, where, note, time)
        labels.append(replace(made, sample=check_sample(sample, where) if sample else ""))
    return labels
