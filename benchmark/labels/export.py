"""`wearsim labels export`: a run's sample and the labels given to it, out to Label Studio or a CSV.

- JSON (`--format json`, or an output ending `.json`): Label Studio's JSON export shape, a list of
  tasks, each `{"id", "data", "annotations"}`. `data` holds the trial key, the scenario, what the page
  would show as text (`conversation`) and the reply. Each label given is one annotation:
  `completed_by` names the annotator as Label Studio's detailed export names a user (`{"id",
  "email", "first_name", "last_name"}`: the name in `first_name`, no e-mail), and `result` holds the
  choices region of the `label` control and, when there is a note, the textarea region of `note`.
  Beside it, `PATH.xml`: the labelling config with the same two controls. No prediction is
  written: a judge's label never reaches a person.
- CSV (`--format csv`, or `.csv`): `trial_key,label,annotator,note,time`, one row a label (`time`:
  when it was given, which the import reads to keep a label changed since), and a last column
  `sample` when a label of a disagreement sample is among them (an annotation's `sample` in JSON), so
  the import keeps the two samples apart.

Both read back with `wearsim labels import` (`benchmark.labels.exchange`): the annotators come back
by the name each annotation carries, so export, edit, import changes only what was edited: an
unchanged label is left as it was, and a label changed in `labels/` after the export is kept over the
file's older one (each annotation carries the label's time as `created_at` and `updated_at`; the CSV
as `time`: `store.import_labels`).

The tasks are the sample (`--sample`, `--seed`, as `wearsim annotate` draws it), then any other item
of the kind that someone labelled, so every label of the kind leaves. An output whose suffix names no
format (without `--format`), or that exists already (or, for JSON, whose `.xml` does) without
`--force`, is refused with one `LabelError` line before anything is written; files are written by
temp file and rename.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from benchmark.labels.items import LabelError, LabelItem, labels_for
from benchmark.labels.store import Label, read_all_labels
from core.safe_files import UnsafePathError, check_target, write_atomic

FORMATS = {".json": "json", ".csv": "csv"}
CSV_HEADER = ("trial_key", "label", "annotator", "note", "time")


def export_format(path: Path, fmt: str | None) -> str:
    """`json` or `csv`: `fmt` when given, else what the output's suffix names."""
    if fmt is not None:
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        named = f"suffix {suffix!r}" if suffix else "no suffix"
        raise LabelError(
            f"{path}: {named} names no export format; end it in .json (Label Studio) or .csv, or give --format json|csv"
        )
    return FORMATS[suffix]


def export_paths(path: Path, fmt: str, force: bool) -> list[Path]:
    """The files an export writes (for JSON the labelling config `PATH.xml` too), each checked writable
    and, without `force`, not there yet."""
    path = Path(path)
    paths = [path]
    if fmt == "json":
        if path.suffix.lower() == ".xml":
            raise LabelError(f"{path}: a JSON export's labelling config goes to FILE.xml beside it; name it .json")
        paths.append(path.with_suffix(".xml"))
    for target in paths:
        if not target.parent.is_dir():
            raise LabelError(f"{target}: no folder {target.parent} to write into")
        try:
            check_target(target)
        except UnsafePathError as exc:
            raise LabelError(str(exc)) from None
        if target.exists() and not force:
            raise LabelError(f"{target}: already exists; give --force to overwrite it")
    return paths


def _conversation(item: LabelItem) -> str:
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


def exported_items(run, what: str, sample: list[LabelItem]) -> tuple[list[LabelItem], dict[str, dict[str, Label]]]:
    """The sample, then the other items of kind `what` someone labelled (in the run's order); and the
    labels of those items, annotator -> key -> label."""
    people = read_all_labels(run.run_dir, run.known)
    labelled = {key for given in people.values() for key in given}
    in_sample = {item.key for item in sample}
    items = [*sample, *(item for item in run.items(what) if item.key in labelled and item.key not in in_sample)]
    keys = {item.key for item in items}
    given = {name: {k: v for k, v in labels.items() if k in keys} for name, labels in people.items()}
    return items, {name: labels for name, labels in given.items() if labels}


def label_studio_tasks(items: list[LabelItem], what: str, people: dict[str, dict[str, Label]]) -> list[dict]:
    users = {name: n for n, name in enumerate(sorted(people), start=1)}
    tasks, annotation_id = [], 0
    for task_id, item in enumerate(items, start=1):
        annotations = []
        for name in sorted(people):
            label = people[name].get(item.key)
            if label is None:
                continue
            annotation_id += 1
            result: list[dict] = [
                {
                    "id": f"label-{annotation_id}",
                    "from_name": "label",
                    "to_name": "reply",
                    "type": "choices",
                    "value": {"choices": [label.label]},
                }
            ]
            if label.note:
                result.append(
                    {
                        "id": f"note-{annotation_id}",
                        "from_name": "note",
                        "to_name": "reply",
                        "type": "textarea",
                        "value": {"text": [label.note]},
                    }
                )
            extra: dict = {"created_at": label.time, "updated_at": label.time} if label.time else {}
            if label.sample != "random":
                extra["sample"] = label.sample
            annotations.append(
                {
                    "id": annotation_id,
                    "completed_by": {"id": users[name], "email": "", "first_name": name, "last_name": ""},
                    "result": result,
                    "was_cancelled": False,
                    "ground_truth": False,
                    **extra,
                    "task": task_id,
                }
            )
        data = {
            "trial_key": item.key,
            "scenario_id": item.scenario_id,
            "what": what,
            "conversation": _conversation(item),
            "reply": next(text for kind, _, text in item.view if kind == "reply"),
        }
        tasks.append({"id": task_id, "data": data, "annotations": annotations})
    return tasks


def labels_csv(items: list[LabelItem], people: dict[str, dict[str, Label]]) -> str:
    out = io.StringIO()
    rows = csv.writer(out, lineterminator="\n")
    samples = any(label.sample != "random" for given in people.values() for label in given.values())
    rows.writerow([*CSV_HEADER, "sample"] if samples else CSV_HEADER)
    for item in items:
        for name in sorted(people):
            label = people[name].get(item.key)
            if label is not None:
                rows.writerow([item.key, label.label, name, label.note, label.time, *([label.sample] * samples)])
    return out.getvalue()


def write_export(
    run, what: str, sample: list[LabelItem], path: Path, fmt: str | None = None, force: bool = False
) -> tuple[list[Path], int, int]:
    """Write the export; returns (the files written, items, labels). Everything is checked first."""
    fmt = export_format(path, fmt)
    paths = export_paths(path, fmt, force)
    items, people = exported_items(run, what, sample)
    count = sum(len(given) for given in people.values())
    try:
        if fmt == "csv":
            write_atomic(paths[0], labels_csv(items, people))
        else:
            tasks = label_studio_tasks(items, what, people)
            write_atomic(paths[0], json.dumps(tasks, indent=2, ensure_ascii=False) + "\n")
            write_atomic(paths[1], label_config(what))
    except (OSError, UnsafePathError) as exc:
        raise LabelError(f"{path}: cannot write ({getattr(exc, 'strerror', None) or exc})") from None
    return paths, len(items), count
