"""Labels made elsewhere: the sample out as a Label Studio task file, a Label Studio JSON
export (written to the documented shape: a list of tasks, each with `data` and `annotations`,
an annotation's `result` holding a `choices` region and a `textarea` region) back into
labels/, and the plain CSV import."""

from __future__ import annotations

import csv
import json

import pytest

from benchmark.cli import main
from benchmark.labels.run import open_label_run
from benchmark.report import write_report
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


def one_line(err: str, *parts: str) -> None:
    assert err.count("\n") == 1 and err.startswith("wearsim labels: "), err
    assert all(part in err for part in parts), err


def test_a_label_studio_export_read_back(run_dir, tmp_path, capsys):
    tasks_path = tmp_path / "tasks.json"
    assert main(["labels", "export", str(run_dir), "--output", str(tasks_path), "--sample", "6"]) == 0
    tasks = json.loads(tasks_path.read_text(encoding="utf-8"))
    assert len(tasks) == 6 and all(set(t) == {"id", "data", "annotations"} for t in tasks)  # no prediction
    assert all(t["annotations"] == [] for t in tasks)  # nobody has labelled yet
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
    # a user object with a name and no e-mail goes by the name
    export.write_text(
        json.dumps(as_label_studio_export(tasks, CHOSEN, {"id": 4, "first_name": "Dana", "last_name": "Ruiz"})),
        encoding="utf-8",
    )
    assert main(["labels", "import", str(run_dir), str(export)]) == 0
    assert saved(run_dir, "Dana-Ruiz") == expected
    # completed_by as a bare user id (Label Studio's default export): refused, never a made-up name
    export.write_text(json.dumps(as_label_studio_export(tasks, CHOSEN, 7)), encoding="utf-8")
    before = sorted(p.name for p in (run_dir / "labels").iterdir())
    capsys.readouterr()
    assert main(["labels", "import", str(run_dir), str(export)]) == 2
    one_line(
        capsys.readouterr().err,
        f"{export}: task 1, annotation 1: completed_by is Label Studio user 7",
        "--annotator-map",
    )
    assert sorted(p.name for p in (run_dir / "labels").iterdir()) == before
    users = tmp_path / "users.json"
    users.write_text('{"7": "erin", "8": "finn"}', encoding="utf-8")
    assert main(["labels", "import", str(run_dir), str(export), "--annotator-map", str(users)]) == 0
    assert saved(run_dir, "erin") == expected
    users.write_text('{"7": "../erin"}', encoding="utf-8")
    capsys.readouterr()
    assert main(["labels", "import", str(run_dir), str(export), "--annotator-map", str(users)]) == 2
    one_line(capsys.readouterr().err, f"{users}: user 7: annotator name '../erin'")
    users.write_text('{"ana": "erin"}', encoding="utf-8")
    assert main(["labels", "import", str(run_dir), str(export), "--annotator-map", str(users)]) == 2
    one_line(capsys.readouterr().err, f"{users}: key 'ana': a Label Studio user id is a whole number")
    assert main(["labels", "import", str(run_dir), str(export), "--annotator", "dev"]) == 0
    assert saved(run_dir, "dev") == expected
    assert sorted(p.name for p in (run_dir / "labels").iterdir() if p.name != ".lock") == [
        "Dana-Ruiz.jsonl",
        "carla.jsonl",
        "dev.jsonl",
        "erin.jsonl",
    ]
    assert main(["agreement", str(run_dir)]) == 0  # the imported labels are measured like any others


def test_two_users_read_as_one_name_are_refused(run_dir, tmp_path, capsys):
    tasks = [{"data": {"trial_key": "sc-01|baseline|0"}}, {"data": {"trial_key": "sc-02|baseline|0"}}]
    first = as_label_studio_export(tasks[:1], ["prior"], {"id": 1, "email": "ana@one.org"})
    second = as_label_studio_export(tasks[1:], ["prior"], {"id": 2, "email": "ana@two.org"})
    export = tmp_path / "export.json"
    export.write_text(json.dumps(first + second), encoding="utf-8")
    assert main(["labels", "import", str(run_dir), str(export)]) == 2
    one_line(capsys.readouterr().err, "task 2, annotation 1: two Label Studio users", "both read as annotator 'ana'")
    assert not (run_dir / "labels").exists()


def test_a_label_studio_export_with_a_label_outside_the_choices_writes_nothing(run_dir, tmp_path, capsys):
    tasks = [{"data": {"trial_key": "sc-01|baseline|0"}}, {"data": {"trial_key": "sc-02|baseline|0"}}]
    export = tmp_path / "export.json"
    export.write_text(json.dumps(as_label_studio_export(tasks, ["prior", "Positive"], 3)), encoding="utf-8")
    assert main(["labels", "import", str(run_dir), str(export), "--annotator", "ana"]) == 2
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
    assert main(["labels", "import", str(run_dir), str(path), "--annotator", "ana"]) == 2
    one_line(capsys.readouterr().err, "a CSV names its annotator on every row")


def labelled_by_two(run_dir, tmp_path) -> list[str]:
    """ana and ben label the first six items of the sample (ana with notes, one holding a comma and a
    line break); returns the six keys."""
    keys = [item.key for item in open_label_run(run_dir).sample("turn2", 6, 47)]
    rows = ["trial_key,label,annotator,note"]
    rows += [f'{k},{label},ana,"note {n}, on\ntwo lines"' for n, (k, label) in enumerate(zip(keys, CHOSEN))]
    rows += [f"{k},{label},ben," for k, label in zip(keys, reversed(CHOSEN))]
    given = tmp_path / "given.csv"
    given.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert main(["labels", "import", str(run_dir), str(given)]) == 0
    return keys


def edit_json(path, key: str, annotator: str, label: str) -> None:
    tasks = json.loads(path.read_text(encoding="utf-8"))
    task = next(t for t in tasks if t["data"]["trial_key"] == key)
    annotation = next(a for a in task["annotations"] if a["completed_by"]["first_name"] == annotator)
    annotation["result"][0]["value"]["choices"] = [label]
    path.write_text(json.dumps(tasks), encoding="utf-8")


def edit_csv(path, key: str, annotator: str, label: str) -> None:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    for row in rows:
        if row[0] == key and row[2] == annotator:
            row[1] = label
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


@pytest.mark.parametrize(("name", "edit"), [("labels.json", edit_json), ("labels.csv", edit_csv)])
def test_export_edit_import_changes_only_the_edited_label(run_dir, tmp_path, capsys, name, edit):
    keys = labelled_by_two(run_dir, tmp_path)
    files = {who: (run_dir / "labels" / f"{who}.jsonl").read_bytes() for who in ("ana", "ben")}
    before = {who: saved(run_dir, who) for who in ("ana", "ben")}
    out = tmp_path / name
    capsys.readouterr()
    assert main(["labels", "export", str(run_dir), "--output", str(out), "--sample", "8"]) == 0
    assert f"wrote 8 items and 12 labels to {out}" in capsys.readouterr().out
    assert out.with_suffix(".xml").is_file() == name.endswith(".json")
    assert before["ana"][keys[2]][0] == "clarify"
    edit(out, keys[2], "ana", "abstain")
    assert main(["labels", "import", str(run_dir), str(out)]) == 0
    out_text = capsys.readouterr().out
    assert "ana: 1 labels imported" in out_text and "(5 already there unchanged)" in out_text
    assert "ben: 0 labels imported" in out_text
    after = {who: saved(run_dir, who) for who in ("ana", "ben")}
    assert after["ben"] == before["ben"] and (run_dir / "labels" / "ben.jsonl").read_bytes() == files["ben"]
    assert after["ana"] == {**before["ana"], keys[2]: ("abstain", before["ana"][keys[2]][1])}
    old_lines = files["ana"].decode().splitlines()
    new_lines = (run_dir / "labels" / "ana.jsonl").read_text().splitlines()
    assert len(old_lines) == len(new_lines) and sum(a != b for a, b in zip(old_lines, new_lines)) == 1


def test_export_refuses_an_unknown_suffix_and_an_existing_file(run_dir, tmp_path, capsys):
    for name in ("tasks.xml", "tasks.txt", "tasks"):
        out = tmp_path / name
        assert main(["labels", "export", str(run_dir), "--output", str(out)]) == 2
        one_line(capsys.readouterr().err, str(out), "names no export format", "--format json|csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # nothing written
    assert main(["labels", "export", str(run_dir), "--output", str(tmp_path / "tasks.txt"), "--format", "csv"]) == 0
    assert (tmp_path / "tasks.txt").read_text().startswith("trial_key,label,annotator,note,time\n")
    assert main(["labels", "export", str(run_dir), "--output", str(tmp_path / "tasks.xml"), "--format", "json"]) == 2
    one_line(capsys.readouterr().err, "labelling config goes to FILE.xml")

    existing = tmp_path / "tasks.csv"
    existing.write_text("keep me\n", encoding="utf-8")
    assert main(["labels", "export", str(run_dir), "--output", str(existing)]) == 2
    one_line(capsys.readouterr().err, f"{existing}: already exists; give --force")
    assert existing.read_text() == "keep me\n"
    config = tmp_path / "out.xml"  # a JSON export's config beside it is kept too
    config.write_text("<mine/>", encoding="utf-8")
    assert main(["labels", "export", str(run_dir), "--output", str(tmp_path / "out.json")]) == 2
    one_line(capsys.readouterr().err, f"{config}: already exists; give --force")
    assert config.read_text() == "<mine/>" and not (tmp_path / "out.json").exists()
    assert main(["labels", "export", str(run_dir), "--output", str(tmp_path / "out.json"), "--force"]) == 0
    assert config.read_text().startswith("<View>") and json.loads((tmp_path / "out.json").read_text())
    assert main(["labels", "export", str(run_dir), "--output", str(existing), "--force"]) == 0
    assert existing.read_text().startswith("trial_key,")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_an_import_measures_the_human_check_again(run_dir, tmp_path, capsys):
    write_report(run_dir)
    assert "has not been checked against people" in (run_dir / "findings.md").read_text()
    capsys.readouterr()
    labelled_by_two(run_dir, tmp_path)
    out = capsys.readouterr().out
    line = "Judge checked against 10 human labels by 2 people:"  # 12 given, 2 'cannot tell'
    assert line in out and line in (run_dir / "findings.md").read_text()
    assert json.loads((run_dir / "agreement.json").read_text())["human_labels"] == 10


def test_two_exports_of_one_moment_each_edited_and_both_imported_keep_both_edits(run_dir, tmp_path, capsys):
    keys = labelled_by_two(run_dir, tmp_path)
    before = {who: saved(run_dir, who) for who in ("ana", "ben")}
    tasks, table = tmp_path / "labels.json", tmp_path / "labels.csv"
    for out in (tasks, table):
        assert main(["labels", "export", str(run_dir), "--output", str(out), "--sample", "6"]) == 0
    edit_json(tasks, keys[0], "ana", "abstain")
    edit_csv(table, keys[1], "ben", "clarify")
    capsys.readouterr()
    assert main(["labels", "import", str(run_dir), str(tasks)]) == 0
    assert main(["labels", "import", str(run_dir), str(table)]) == 0  # its row of ana's keys[0] is older
    out = capsys.readouterr().out
    assert "ana: 0 labels imported" in out and "1 kept as changed in labels/ after the file was written" in out
    assert saved(run_dir, "ana") == {**before["ana"], keys[0]: ("abstain", before["ana"][keys[0]][1])}
    assert saved(run_dir, "ben") == {**before["ben"], keys[1]: ("clarify", "")}
    bad = tmp_path / "bad.csv"
    bad.write_text(f"trial_key,label,annotator,note,time\n{keys[0]},prior,ana,,yesterday\n", encoding="utf-8")
    assert main(["labels", "import", str(run_dir), str(bad)]) == 2
    one_line(capsys.readouterr().err, f"{bad}: line 2: field 'time' 'yesterday' is not an ISO 8601 time")
