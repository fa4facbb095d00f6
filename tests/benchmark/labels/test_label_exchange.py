"""Labels made elsewhere: the sample out as a Label Studio task file, a Label Studio JSON
export (written to the documented shape: a list of tasks, each with `data` and `annotations`,
an annotation's `result` holding a `choices` region and a `textarea` region) back into
labels/, and the plain CSV import."""

from __future__ import annotations

import json

import pytest

from benchmark.cli import main
from benchmark.labels.run import open_label_run
from tests.label_runs import build_run

JUDGE = ["current", "prior", "clarify", "abstain", "current", "prior", None, "current"]
CHOSEN = ["prior", "prior", "clarify", "cannot_tell", "current", "abstain"]


@pytest.fixture
def run_dir(tmp_path):
    return build_run(tmp_path / "run", JUDGE)


def as_label_studio_export(tasks: list[dict], labels: list[str], completed_by) -> list[dict]:
    """What Label Studio's JSON export holds after someone labelled each task (one cancelled
    annotation on the first task too, which the import skips)."""
    exported = []
    for n, (task, label) in enumerate(zip(tasks, labels), start=1):
        result = [
            {"id": f"r{n}", "from_name": "label", "to_name": "reply", "type": "choices", "value": {"choices": [label]}}
        ]
        if n == 2:
            result.append(
                {
                    "id": f"n{n}",
                    "from_name": "note",
                    "to_name": "reply",
                    "type": "textarea",
                    "value": {"text": ["names both tools"]},
                }
            )
        annotations = [
            {
                "id": 1000 + n,
                "result": result,
                "was_cancelled": False,
                "ground_truth": False,
                "created_at": "2026-11-27T07:00:00.000000Z",
                "lead_time": 4.2,
                "task": n,
                "completed_by": completed_by,
            }
        ]
        if n == 1:
            annotations.append(
                {
                    "id": 2000,
                    "result": [
                        {"from_name": "label", "to_name": "reply", "type": "choices", "value": {"choices": ["abstain"]}}
                    ],
                    "was_cancelled": True,
                    "completed_by": completed_by,
                }
            )
        exported.append({"id": n, "data": task["data"], "annotations": annotations, "predictions": [], "project": 1})
    return exported


def saved(run_dir, name: str) -> dict[str, tuple[str, str]]:
    lines = (run_dir / "labels" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["trial_key"]: (r["label"], r["note"]) for r in map(json.loads, lines)}


def test_label_studio_round_trip(run_dir, tmp_path, capsys):
    tasks_path = tmp_path / "tasks.json"
    assert main(["labels", "export", str(run_dir), "--output", str(tasks_path), "--sample", "6"]) == 0
    tasks = json.loads(tasks_path.read_text(encoding="utf-8"))
    assert len(tasks) == 6 and all(set(t) == {"data"} for t in tasks)  # no prediction: no judge label
    same_sample = open_label_run(run_dir).sample("turn2", 6, 47)
    assert [t["data"]["trial_key"] for t in tasks] == [i.key for i in same_sample]  # as wearsim annotate draws
    assert tasks[0]["data"]["reply"].startswith("reply ") and "Answer keys" in tasks[0]["data"]["conversation"]
    config = tasks_path.with_suffix(".xml").read_text(encoding="utf-8")
    assert '<Choices name="label" toName="reply" choice="single"' in config and 'value="cannot_tell"' in config
    assert '<Text name="conversation" value="$conversation"/>' in config

    export = tmp_path / "export.json"
    export.write_text(
        json.dumps(as_label_studio_export(tasks, CHOSEN, {"id": 3, "email": "carla@example.org"})), encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["labels", "import", str(run_dir), str(export)]) == 0
    assert "carla: 6 labels imported" in capsys.readouterr().out
    keys = [t["data"]["trial_key"] for t in tasks]
    expected = {k: (label, "names both tools" if n == 1 else "") for n, (k, label) in enumerate(zip(keys, CHOSEN))}
    assert saved(run_dir, "carla") == expected
    # completed_by as a bare user id, and --annotator over it
    export.write_text(json.dumps(as_label_studio_export(tasks, CHOSEN, 7)), encoding="utf-8")
    assert main(["labels", "import", str(run_dir), str(export)]) == 0
    assert saved(run_dir, "ls-7") == expected
    assert main(["labels", "import", str(run_dir), str(export), "--annotator", "dev"]) == 0
    assert saved(run_dir, "dev") == expected
    assert main(["agreement", str(run_dir)]) == 0  # the imported labels are measured like any others


def test_a_label_studio_export_with_a_label_outside_the_choices_writes_nothing(run_dir, tmp_path, capsys):
    tasks = [{"data": {"trial_key": "sc-01|baseline|0"}}, {"data": {"trial_key": "sc-02|baseline|0"}}]
    export = tmp_path / "export.json"
    export.write_text(json.dumps(as_label_studio_export(tasks, ["prior", "Positive"], 3)), encoding="utf-8")
    assert main(["labels", "import", str(run_dir), str(export)]) == 2
    err = capsys.readouterr().err
    assert f"{export}: task 2, annotation 1: label 'Positive' is not one of" in err and err.count("\n") == 1
    assert not (run_dir / "labels").exists()


def test_csv_import(run_dir, tmp_path, capsys):
    rows = [
        "trial_key,label,annotator,note",
        "sc-01|baseline|0,prior,ana,",
        'sc-02|baseline|0,current,ben,"a, b"',
        "sc-03|baseline|0,cannot_tell,ana,unsure",
        "",
    ]
    path = tmp_path / "labels.csv"
    path.write_text("\n".join(rows), encoding="utf-8")
    assert main(["labels", "import", str(run_dir), str(path)]) == 0
    assert saved(run_dir, "ana") == {"sc-01|baseline|0": ("prior", ""), "sc-03|baseline|0": ("cannot_tell", "unsure")}
    assert saved(run_dir, "ben") == {"sc-02|baseline|0": ("current", "a, b")}
    before = (run_dir / "labels" / "ana.jsonl").read_bytes()
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "trial_key,label,annotator\nsc-04|baseline|0,prior,ana\nsc-77|baseline|0,prior,ana\n", encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["labels", "import", str(run_dir), str(bad)]) == 2
    assert f"{bad}: line 3: unknown trial key 'sc-77|baseline|0'" in capsys.readouterr().err
    assert (run_dir / "labels" / "ana.jsonl").read_bytes() == before  # nothing of the refused file written
    header = tmp_path / "header.csv"
    header.write_text("key,label\nsc-01|baseline|0,prior\n", encoding="utf-8")
    assert main(["labels", "import", str(run_dir), str(header)]) == 2
    assert "line 1: the header must start trial_key,label,annotator" in capsys.readouterr().err
