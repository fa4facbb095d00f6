"""Issue 58, part B: `wearsim annotate --sample disagreements` puts first the replies the run's judge
and the offline judge label differently, or the offline judge is unsure of; the labels of such a sample
are recorded as its own and never pooled with a random sample's; the page shows the assistant's Turn 1
reply (folded: the judges do not see it) and the rubric says how to label a reply naming neither scene.

The run: twelve Turn 2 replies, sc-01 ... sc-12. The offline judge reads every fixture reply ("the
<current answer> is what I would use here") as `current`, and the seventh ("I am not sure.") as nothing:
unsure. So the flagged items are those the run's judge did not call `current` (sc-02 prior, sc-03
unscored, sc-04 clarify, sc-06 abstain, sc-08 prior, sc-11 prior) and sc-07 (the offline judge unsure):
seven items, first; the five others after them.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import pytest

from benchmark.cli import main
from benchmark.labels.items import LabelError
from benchmark.labels.run import AnnotatorDesk, open_label_run
from benchmark.labels.sample import SampleChoice, parse_sample
from tests.label_runs import build_run

RUN_JUDGE = ["current", "prior", None, "clarify", "current", "abstain", "current", "prior", "current", "current"]
RUN_JUDGE += ["prior", "current"]
UNSURE = {6: "I am not sure."}
FLAGGED = {f"sc-{n:02d}|baseline|0" for n in (2, 3, 4, 6, 7, 8, 11)}


@pytest.fixture
def run(tmp_path):
    return open_label_run(build_run(tmp_path / "run", RUN_JUDGE, replies=UNSURE))


def test_the_sample_option_reads_a_number_or_disagreements():
    assert parse_sample("60") == SampleChoice(kind="random", n=60)
    assert parse_sample(0) == SampleChoice(kind="random", n=None)
    assert parse_sample("disagreements") == SampleChoice(kind="disagreements", n=100)
    assert parse_sample("disagreements:5") == SampleChoice(kind="disagreements", n=5)
    assert parse_sample("disagreements:0") == SampleChoice(kind="disagreements", n=None)
    for bad in ("-1", "some", "disagreements:x", "random"):
        with pytest.raises(ValueError, match="--sample"):
            parse_sample(bad)


def test_disagreements_come_first_in_a_fixed_order(run):
    offline = run.offline_labels("turn2")
    assert {k for k, v in offline.items() if v != "current"} == {"sc-07|baseline|0"}  # the one it is unsure of
    every = run.sample_of("turn2", parse_sample("disagreements:0"), 47)
    keys = [item.key for item in every]
    assert len(keys) == 12 == len(set(keys))
    assert set(keys[:7]) == FLAGGED and not FLAGGED & set(keys[7:])
    # their scenarios in turn, the same order every time and for everyone with the seed
    assert keys == [item.key for item in run.sample_of("turn2", parse_sample("disagreements:0"), 47)]
    other = [item.key for item in run.sample_of("turn2", parse_sample("disagreements:0"), 11)]
    assert set(other[:7]) == FLAGGED and other != keys
    # a smaller sample: disagreements only, then the rest fills what is left
    assert [i.key for i in run.sample_of("turn2", parse_sample("disagreements:4"), 47)] == keys[:4]
    nine = [i.key for i in run.sample_of("turn2", parse_sample("disagreements:9"), 47)]
    assert nine[:7] == keys[:7] and len(set(nine[7:]) - FLAGGED) == 2
    # the random sample is as it was: no order by the judges
    assert [i.key for i in run.sample_of("turn2", parse_sample("12"), 47)] == [
        i.key for i in run.sample("turn2", 12, 47)
    ]


def test_remarks_have_no_disagreement_sample(run):
    with pytest.raises(LabelError, match="offline judge does not label remarks"):
        run.offline_labels("remarks")


def annotate_args(run, **given) -> argparse.Namespace:
    values = dict(run_dir=str(run.run_dir), annotator="ana", sample="disagreements", seed=47, what="turn2")
    return argparse.Namespace(**{**values, "scenarios": None, **given})


def test_a_label_of_the_disagreement_sample_is_saved_as_one(run):
    from benchmark.cli.annotate import open_desk

    desk = open_desk(annotate_args(run))
    assert desk.sample_kind == "disagreements" and {i.key for i in desk.sample[:7]} == FLAGGED
    desk.save(desk.sample[0].key, "prior")
    [line] = (run.run_dir / "labels" / "ana.jsonl").read_text().splitlines()
    assert json.loads(line)["sample"] == "disagreements"
    with pytest.raises(ValueError, match="--sample 'many'"):
        open_desk(annotate_args(run, sample="many"))


def test_the_page_shows_the_turn_1_reply_folded_and_the_rubric_for_replies_naming_neither_scene(run):
    desk = AnnotatorDesk(run=run, annotator="ana", what="turn2", sample=run.sample("turn2", 3, 47))
    page = desk.page()
    for item in page["items"]:
        earlier = [s for s in item["sections"] if s["kind"] == "earlier"]
        assert [s["title"] for s in earlier] == ["Turn 1: the assistant's reply (the judges do not see it)"]
        n = int(item["key"][3:5]) - 1
        assert earlier[0]["text"] == f"turn one answer {n}"
        kinds = [s["kind"] for s in item["sections"]]
        assert kinds.index("earlier") < kinds.index("reply")
    rubric = " ".join(page["rubric"])
    assert "names neither scene" in rubric and "cannot tell (u)" in rubric and "do not see them" in rubric
    assert all(word in rubric for word in ("clarify", "abstain"))


def give(run_dir: Path, name: str, labels: dict[str, str], sample: str) -> None:
    folder = run_dir / "labels"
    folder.mkdir(exist_ok=True)
    lines = [
        json.dumps({"trial_key": k, "what": "turn2", "label": v, "annotator": name, "sample": sample})
        for k, v in labels.items()
    ]
    (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_agreement_never_pools_a_disagreement_sample_with_a_random_one(run, capsys):
    keys = [f"sc-{n:02d}|baseline|0" for n in range(1, 13)]
    give(run.run_dir, "ana", {k: "current" for k in keys[:6]}, "random")
    give(run.run_dir, "ben", {k: "current" for k in keys[:6]}, "random")
    give(run.run_dir, "cat", {k: "prior" for k in keys[:6]}, "disagreements")
    give(run.run_dir, "dan", {k: "prior" for k in keys[:6]}, "disagreements")
    assert main(["agreement", str(run.run_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "labels of two samples" in err and "never pooled" in err
    assert "12 of the random sample, 12 of the disagreements" in err
    assert not (run.run_dir / "agreement.json").exists()  # nothing written

    assert main(["agreement", str(run.run_dir), "--sample", "disagreements"]) == 0
    out = capsys.readouterr().out
    result = json.loads((run.run_dir / "agreement.json").read_text())
    assert result["sample"] == "disagreements" and result["annotators"] == ["cat", "dan"]
    assert result["human_labels"] == 12  # cat's and dan's only
    assert "disagreement sample" in result["verdict"]["text"] and "where the judge errs" in out
    assert "Sample: a disagreement sample" in (run.run_dir / "agreement.md").read_text()
    findings = (run.run_dir / "findings.md").read_text()
    assert "Judge checked against 12 human labels of a disagreement sample" in findings

    assert main(["agreement", str(run.run_dir), "--sample", "random"]) == 0
    result = json.loads((run.run_dir / "agreement.json").read_text())
    assert result["sample"] == "random" and result["annotators"] == ["ana", "ben"]
    assert "Sample: a random sample" in (run.run_dir / "agreement.md").read_text()
    assert "of a disagreement sample" not in (run.run_dir / "findings.md").read_text()


def test_export_and_import_keep_the_disagreement_sample_apart(run, tmp_path, capsys):
    keys = [f"sc-{n:02d}|baseline|0" for n in range(1, 5)]
    give(run.run_dir, "cat", {k: "prior" for k in keys}, "disagreements")
    out = tmp_path / "labels.csv"
    assert main(["labels", "export", str(run.run_dir), "--output", str(out), "--sample", "disagreements:4"]) == 0
    rows = list(csv.reader(out.open(encoding="utf-8")))
    assert rows[0][-1] == "sample" and {r[-1] for r in rows[1:]} == {"disagreements"}
    before = (run.run_dir / "labels" / "cat.jsonl").read_bytes()
    assert main(["labels", "import", str(run.run_dir), str(out)]) == 0
    assert "0 labels imported" in capsys.readouterr().out
    assert (run.run_dir / "labels" / "cat.jsonl").read_bytes() == before  # unchanged, still that sample's

    plain = tmp_path / "plain.csv"  # a file that does not say its sample: --sample says it
    plain.write_text(f"trial_key,label,annotator\n{keys[0]},current,eve\n", encoding="utf-8")
    assert main(["labels", "import", str(run.run_dir), str(plain), "--sample", "disagreements"]) == 0
    [line] = (run.run_dir / "labels" / "eve.jsonl").read_text().splitlines()
    assert json.loads(line)["sample"] == "disagreements"
    bad = tmp_path / "bad.csv"
    bad.write_text(f"trial_key,label,annotator,note,time,sample\n{keys[0]},current,fay,,,hard\n", encoding="utf-8")
    assert main(["labels", "import", str(run.run_dir), str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        len(err.splitlines()) == 1 and "field 'sample'" in err and not (run.run_dir / "labels" / "fay.jsonl").exists()
    )
