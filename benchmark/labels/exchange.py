"""Labels made elsewhere: Label Studio and plain CSV.

- `export_label_studio(sample, what, path)`: the sample as a Label Studio
  task file (a JSON list of tasks, each `{"data": {...}}`: the trial key, the
  scenario, what the page would show as text and the reply) and, beside it,
  `PATH.xml`, a labelling config whose single-choice control `label` holds
  the same labels as `wearsim annotate` and whose text area `note` takes a
  note. No prediction is exported: a judge's label never reaches a person.
- `read_label_studio(path, known, annotator)`: a Label Studio JSON export
  (the list of tasks, each with `data` and `annotations`; an annotation's
  `result` holds `{"from_name": "label", "type": "choices", "value":
  {"choices": [LABEL]}}` and optionally the `note` text area; cancelled
  annotations are skipped). Who labelled is `--annotator`, else the
  annotation's `completed_by` (an e-mail's local part, or `ls-ID`).
- `read_csv(path, known)`: `trial_key,label,annotator` with an optional
  `note` column.

Every row is checked as a label file's line is (`store.make_label`): an
unknown key or a label outside the item's ones is refused with one line
naming the file and the task or line, before anything is written.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from benchmark.labels.items import LabelError, labels_for
from benchmark.labels.store import Label, check_annotator, make_label, now
from core.safe_files import write_atomic

MAX_IMPORT_BYTES = 64 * 2**20
MAX_CSV_FIELD = 4096


def _conversation(item) -> str:
    return "\n\n".join(f"{title}:\n{text}" for kind, title, text in item.view if kind != "reply")


def label_config(what: str) -> str:
    choices = "\n".join(f'    <Choice value="{label}"/>' for label in labels_for(what))
    return (
        '<View>\n  <Header value="$scenario_id"/>\n  <Text name="conversation" value="$conversation"/>\n'
        '  <Header value="The reply to label"/>\n  <Text name="reply" value="$reply"/>\n'
        '  <Choices name="label" toName="reply" choice="single" showInline="true">\n'
        f"{choices}\n  </Choices>\n"
        '  <TextArea name="note" toName="reply" placeholder="note (optional)"/>\n</View>\n'
    )


def export_label_studio(sample, what: str, path: Path) -> tuple[Path, Path]:
    """Write the task file and its labelling config (`PATH` and `PATH` with `.xml`)."""
    tasks = [
        {
            "data": {
                "trial_key": item.key,
                "scenario_id": item.scenario_id,
                "what": what,
                "conversation": _conversation(item),
                "reply": next(text for kind, _, text in item.view if kind == "reply"),
            }
        }
        for item in sample
    ]
    path = Path(path)
    config = path.with_suffix(".xml")
    write_atomic(path, json.dumps(tasks, indent=2, ensure_ascii=False) + "\n")
    write_atomic(config, label_config(what))
    return path, config


def _read_bounded(path: Path) -> bytes:
    path = Path(path)
    if not path.is_file():
        raise LabelError(f"{path}: no such file")
    with path.open("rb") as handle:
        data = handle.read(MAX_IMPORT_BYTES + 1)
    if len(data) > MAX_IMPORT_BYTES:
        raise LabelError(f"{path}: over the {MAX_IMPORT_BYTES:,} bytes an import may hold")
    return data


def _who(completed_by, where: str) -> str:
    if isinstance(completed_by, dict):
        email = completed_by.get("email")
        if isinstance(email, str) and "@" in email:
            name = re.sub(r"[^A-Za-z0-9._-]", "-", email.split("@", 1)[0]).lstrip(".-")[:40]
            if name:
                return check_annotator(name)
        completed_by = completed_by.get("id")
    if isinstance(completed_by, int) and not isinstance(completed_by, bool):
        return f"ls-{completed_by}"
    raise LabelError(f"{where}: no annotator (completed_by) to name; give --annotator NAME")


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


def read_label_studio(path: Path, known: dict[str, str], annotator: str | None = None) -> list[Label]:
    try:
        tasks = json.loads(_read_bounded(path))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason
        raise LabelError(f"{path}: not a Label Studio JSON export ({reason})") from None
    if not isinstance(tasks, list):
        raise LabelError(f"{path}: a Label Studio JSON export is a list of tasks")
    if annotator is not None:
        check_annotator(annotator)
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
            who = annotator or _who(annotation.get("completed_by"), here)
            labels.append(make_label(key, label, who, known, here, note[:2000], now()))
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
        raise LabelError(f"{path}: line 1: the header must start trial_key,label,annotator (then optionally note)")
    has_note = len(header) > 3 and header[3] == "note"
    labels = []
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise LabelError(f"{path}: line {reader.line_num}: {exc}") from None
        where = f"{path}: line {reader.line_num}"
        if not any(cell.strip() for cell in row):
            continue
        if any(len(cell) > MAX_CSV_FIELD for cell in row):
            raise LabelError(f"{where}: a field over {MAX_CSV_FIELD} characters")
        if len(row) < 3:
            raise LabelError(f"{where}: expected trial_key,label,annotator")
        note = row[3] if has_note and len(row) > 3 else ""
        labels.append(make_label(row[0].strip(), row[1].strip(), row[2].strip(), known, where, note, now()))
    return labels
