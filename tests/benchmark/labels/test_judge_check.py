"""`wearsim judge-check`: a judge measured against reference labels of each of the four shapes (careful
labels, a run's labels, a Label Studio export, a CSV), the figures against numbers worked out by hand, an
LLM judge through the fake OpenAI server (its verdicts scripted per reply, the judge prompt in every
request), and every kind of hostile file refused with one line, exit 2 and nothing written."""

from __future__ import annotations

import csv
import json
import os
import shutil

import pytest

from benchmark.cli import main
from benchmark.judges.prompt import judge_system_prompt, render_judge_prompt
from benchmark.labels import reference
from benchmark.labels.figures import figures
from benchmark.labels.reference import DISAGREED, NOT_TURN_2, ONLY_CANNOT_TELL, TIE, read_references
from benchmark.labels.run import open_label_run
from benchmark.labels.store import make_label, write_labels
from core.records import build_user_turn
from tests.fake_openai import FakeOpenAI
from tests.label_runs import build_run
from tests.paths import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "judge_check"
KEYS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "ANTHROPIC_API_KEY")
# the scripted judge: the verdict for the reply whose marker the request holds (R4: unreadable twice)
VERDICTS = {
    "R1:": "current",  # reference current
    "R2:": "current",  # reference prior
    "R3:": "prior",  # reference prior
    "R4:": None,  # reference abstain: unscored
    "R5:": "clarify",  # reference clarify
    "reply 0:": "current",
    "reply 3:": "prior",
}


@pytest.fixture(autouse=True)
def no_keys(monkeypatch, tmp_path):
    for name in (*KEYS, "WEARSIM_JUDGE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no .env of the checkout is read


def scripted(body: dict) -> str:
    text = json.dumps(body["messages"])
    for marker, label in VERDICTS.items():
        if marker in text:
            return json.dumps({"label": label, "rationale": f"scripted {marker}"}) if label else "no verdict here"
    return json.dumps({"label": "abstain", "rationale": "no marker"})


def check(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["judge-check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error(err: str, *needles: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def careful_copy(tmp_path):
    folder = tmp_path / "careful"
    shutil.copytree(FIXTURE, folder)
    return folder


def rewrite(path, edit) -> None:
    """Rewrite a JSON Lines file line by line: `edit(n, object)` returns the new line's text."""
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("".join(edit(n, json.loads(line)) + "\n" for n, line in enumerate(lines, 1)), encoding="utf-8")


def labelled_run(tmp_path):
    """A run of four Turn 2 trials (trial 0 with a Turn 3) and two annotators: trial 0 current by both,
    trial 1 a tie, trial 2 'cannot tell' only, trial 3 abstain by one; trial 0's Turn 3 is labelled too."""
    run_dir = build_run(tmp_path / "run", ["current", "prior", "clarify", None], repaired=(0,))
    known = open_label_run(run_dir).known
    keys = [k for k in known if known[k] == "turn2"]
    given = {
        "ana": [(keys[0], "current"), (keys[1], "prior"), (keys[2], "cannot_tell"), (keys[3], "abstain")],
        "bo": [(keys[0], "current"), (keys[1], "clarify"), (keys[2], "cannot_tell"), (keys[0] + "|turn3", "current")],
    }
    for who, labels in given.items():
        write_labels(run_dir, who, [make_label(k, label, who, known, "test") for k, label in labels], known)
    return run_dir, given


# ---- the figures, by hand -------------------------------------------------------------------------------


def test_the_figures_match_numbers_worked_out_by_hand():
    truth = ["current", "current", "prior", "prior", "clarify", "abstain"]
    guess = ["current", "prior", "prior", None, "clarify", "current"]
    fig = figures(truth, guess)
    assert (fig.total, fig.labelled, fig.agreed) == (6, 5, 3)
    assert fig.coverage == pytest.approx(5 / 6) and fig.agreement == pytest.approx(0.6)
    # observed 3/5; chance (2*2 + 1*2 + 1*1 + 1*0) / 25 = 0.28
    assert fig.kappa == pytest.approx((0.6 - 0.28) / (1 - 0.28))
    assert fig.precision == {"current": 0.5, "prior": 0.5, "clarify": 1.0, "abstain": None}
    assert fig.recall == {"current": 0.5, "prior": 1.0, "clarify": 1.0, "abstain": 0.0}
    assert fig.confusion["prior"] == {"current": 0, "prior": 1, "clarify": 0, "abstain": 0, "unscored": 1}
    assert fig.confusion["abstain"]["current"] == 1
    assert (fig.said("current"), fig.found("prior")) == (2, 1)
    assert figures([], []).kappa == 0.0 and figures(["prior"], [None]).coverage == 0.0


# ---- the four shapes ------------------------------------------------------------------------------------


def test_careful_labels_are_read_with_their_replies_and_bank():
    refs = read_references(FIXTURE / "careful_labels.jsonl")
    assert refs.shape == "careful" and refs.read == 6 and refs.skipped == {DISAGREED: 1}
    assert [item.reference for item in refs.items] == ["current", "prior", "prior", "abstain", "clarify"]
    first = refs.items[0]
    assert first.key == "replies_fixture.jsonl|jc-01|baseline|0" and first.case.response.startswith("R1:")
    scenario = first.case.scenario
    assert first.case.user_message == build_user_turn(scenario.turn_2_image, scenario.turn_2_user)
    assert first.case.turn == 2 and scenario.answers.current_answers[0] == "screwdriver"


def test_careful_labels_with_no_key_and_no_family_check_the_lexical_judge(capsys, tmp_path):
    out_file = tmp_path / "lexical.json"
    code, out, err = check(capsys, str(FIXTURE / "careful_labels.jsonl"), "--output", str(out_file))
    assert code == 0, err
    assert "shape: careful labels" in out and "judge: lexical (the offline judge: no model, no endpoint)" in out
    assert "items: 5 with a reference label, of 6 read; skipped 1: 1 the readers disagreed (label null)" in out
    assert "confusion (rows: reference; columns: the judge's label)" in out and "judged" not in err
    report = json.loads(out_file.read_text())
    assert report["judge"] == {"name": "lexical", "family": "lexical", "endpoint": None}
    assert report["items"] == 5 and report["coverage"]["items"] == 5
    assert sum(sum(row.values()) for row in report["confusion"].values()) == 5
    assert report["coverage"]["labelled"] == 5 - sum(row["unscored"] for row in report["confusion"].values())
    assert f"coverage: {report['coverage']['labelled']}/5 labelled by the judge" in out


def test_a_judge_key_without_a_family_asks_which_judge_and_a_family_without_its_key_names_it(capsys, monkeypatch):
    labels = str(FIXTURE / "careful_labels.jsonl")
    code, out, err = check(capsys, labels, "--judge-family", "openai")
    assert (code, out) == (2, "")
    one_error(err, "OPENAI_API_KEY", "--judge-base-url")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    code, out, err = check(capsys, labels)
    assert (code, out) == (2, "")
    assert "sk-test-not-real" not in err
    one_error(err, "--judge-family", "lexical")


def test_the_llm_judge_through_the_fake_server_is_measured_and_gets_the_judge_prompt(capsys, tmp_path):
    refs = read_references(FIXTURE / "careful_labels.jsonl")
    out_file = tmp_path / "llm.json"
    with FakeOpenAI(reply=scripted) as server:
        code, out, err = check(
            capsys,
            str(FIXTURE / "careful_labels.jsonl"),
            *("--judge-family", "openai", "--judge-model", "openai:judge-under-test"),
            *("--judge-base-url", server.base_url, "--concurrency", "2", "--output", str(out_file)),
        )
    assert code == 0, err
    assert "judged 5/5" in err
    report = json.loads(out_file.read_text())
    host = server.base_url.split("//")[1].split("/")[0]
    assert report["judge"]["name"] == "openai:judge-under-test" and report["judge"]["endpoint"] == host
    assert f"judge: openai:judge-under-test (family openai) at {host}, judge prompt" in out
    # R1 current/current, R2 prior/current, R3 prior/prior, R4 abstain/unscored, R5 clarify/clarify
    assert report["coverage"] == {"labelled": 4, "items": 5, "rate": 0.8}
    assert (report["agreement"]["k"], report["agreement"]["n"]) == (3, 4)
    # observed 3/4; chance (reference c1 p2 cl1, judge c2 p1 cl1): (2 + 2 + 1) / 16
    assert report["kappa"]["value"] == pytest.approx((0.75 - 5 / 16) / (1 - 5 / 16))
    assert report["kappa"]["ci_method"] == "wilson" and report["kappa"]["scenarios"] == 3
    assert report["kappa"]["ci_low"] < report["kappa"]["value"] < report["kappa"]["ci_high"]
    assert report["per_label"]["current"] == {
        "precision": 0.5,
        "precision_n": 2,
        "recall": 1.0,
        "recall_n": 1,
        "hits": 1,
    }
    assert report["per_label"]["prior"]["recall"] == 0.5 and report["per_label"]["abstain"]["recall"] is None
    assert report["confusion"]["abstain"]["unscored"] == 1 and report["confusion"]["prior"]["current"] == 1
    assert "  current         0.50 (1/2)      1.00 (1/1)" in out
    assert "(Wilson: 3 scenarios, under 10)" in out
    # every item asked once with the judge prompt (R4 once more: its reply was unreadable)
    assert len(server.requests) == 6
    prompts = {item.key: render_judge_prompt(item.case) for item in refs.items}
    firsts = [r for r in server.requests if len(r["messages"]) == 2]
    assert len(firsts) == 5
    for request in firsts:
        system, user = request["messages"]
        assert system == {"role": "system", "content": judge_system_prompt()}
        assert user["content"] in prompts.values()
    assert {r["messages"][1]["content"] for r in firsts} == set(prompts.values())


def test_a_runs_own_labels_are_the_annotators_majority(capsys, tmp_path):
    run_dir, _ = labelled_run(tmp_path)
    for path in (run_dir, run_dir / "labels"):
        refs = read_references(path)
        assert refs.shape == "run" and refs.read == 8
        assert [item.reference for item in refs.items] == ["current", "abstain"]
        assert refs.skipped == {TIE: 1, ONLY_CANNOT_TELL: 1, NOT_TURN_2: 1}
    with FakeOpenAI(reply=scripted, model="judge-served") as server:
        code, out, err = check(
            capsys, str(run_dir / "labels"), "--judge-family", "openai", "--judge-base-url", server.base_url
        )
    assert code == 0, err
    assert "shape: a run's own labels" in out and "items: 2 with a reference label, of 8 read; skipped 3" in out
    # reply 0 current/current, reply 3 abstain/prior: observed 1/2, chance 1/4
    assert "Cohen's kappa over the labelled: 0.333" in out and "agreement: 1/2 (50.0%)" in out


def write_label_studio(path, given) -> None:
    tasks = {}
    for who, labels in given.items():
        for key, label in labels:
            task = tasks.setdefault(key, {"data": {"trial_key": key}, "annotations": []})
            result = [{"from_name": "label", "type": "choices", "value": {"choices": [label]}}]
            task["annotations"].append({"result": result, "completed_by": {"email": f"{who}@example.org"}})
    path.write_text(json.dumps(list(tasks.values())), encoding="utf-8")


def write_csv(path, given) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        rows = csv.writer(handle)
        rows.writerow(["trial_key", "label", "annotator", "note"])
        for who, labels in given.items():
            rows.writerows([key, label, who, ""] for key, label in labels)


@pytest.mark.parametrize(
    ("name", "write", "shape"), [("export.json", write_label_studio, "label-studio"), ("labels.csv", write_csv, "csv")]
)
def test_a_label_studio_export_and_a_csv_read_against_their_run(capsys, tmp_path, name, write, shape):
    run_dir, given = labelled_run(tmp_path)
    shutil.rmtree(run_dir / "labels")  # the labels come from the file only
    path = tmp_path / name
    write(path, given)
    refs = read_references(path, run_dir)
    assert refs.shape == shape and refs.read == 8 and refs.run_dir == run_dir
    assert [item.reference for item in refs.items] == ["current", "abstain"]
    assert refs.skipped == {TIE: 1, ONLY_CANNOT_TELL: 1, NOT_TURN_2: 1}
    with FakeOpenAI(reply=scripted, model="judge-served") as server:
        code, out, err = check(
            capsys, str(path), "--run", str(run_dir), "--judge-family", "openai", "--judge-base-url", server.base_url
        )
    assert code == 0, err
    assert f"replies from {run_dir}" in out and "agreement: 1/2 (50.0%)" in out
    code, out, err = check(capsys, str(path))  # without the run: refused
    assert code == 2 and out == ""
    one_error(err, str(path), "needs --run RUN_DIR")


# ---- hostile files: one line, exit 2, nothing written ---------------------------------------------------


def _edit_line(n_target, edit):
    return lambda n, data: json.dumps(edit(data) if n == n_target else data)


HOSTILE = {
    "not json": (
        "careful_labels.jsonl",
        lambda n, d: "{not json" if n == 2 else json.dumps(d),
        "line 2: not a JSON line",
    ),
    "missing field": (
        "careful_labels.jsonl",
        _edit_line(1, lambda d: {k: v for k, v in d.items() if k != "condition"}),
        "line 1: missing field 'condition'",
    ),
    "unknown label": (
        "careful_labels.jsonl",
        _edit_line(3, lambda d: {**d, "label": "maybe"}),
        "line 3: label 'maybe' is not one of current, prior, clarify, abstain",
    ),
    "unknown scenario": (
        "careful_labels.jsonl",
        _edit_line(1, lambda d: {**d, "scenario_id": "sc-99"}),
        "line 1: scenario 'sc-99' is not in the bank",
    ),
    "reply file missing": (
        "careful_labels.jsonl",
        _edit_line(2, lambda d: {**d, "file": "replies_gone.jsonl"}),
        "line 2: replies file 'replies_gone.jsonl' not found",
    ),
    "file outside": (
        "careful_labels.jsonl",
        _edit_line(1, lambda d: {**d, "file": "../careful_labels.jsonl"}),
        "line 1: field 'file' must name a file beside the labels",
    ),
    "no such trial": (
        "careful_labels.jsonl",
        _edit_line(1, lambda d: {**d, "trials": [7]}),
        "line 1: replies_fixture.jsonl holds no reply of jc-01 baseline trial 7",
    ),
    "trials not a list": (
        "careful_labels.jsonl",
        _edit_line(4, lambda d: {**d, "trials": "0"}),
        "line 4: field 'trials' must be a list",
    ),
    "reply line not json": (
        "replies_fixture.jsonl",
        lambda n, d: "[1, 2" if n == 3 else json.dumps(d),
        "replies_fixture.jsonl: line 3: not a JSON line",
    ),
    "reply without its text": (
        "replies_fixture.jsonl",
        _edit_line(1, lambda d: {**d, "turn_2_response": None}),
        "replies_fixture.jsonl: line 1: no Turn 2 reply (its turn_2_response must be text)",
    ),
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_careful_labels_file_is_one_line_and_writes_nothing(capsys, tmp_path, kind):
    folder = careful_copy(tmp_path)
    name, edit, needle = HOSTILE[kind]
    rewrite(folder / name, edit)
    out_file = tmp_path / "out.json"
    code, out, err = check(capsys, str(folder / "careful_labels.jsonl"), "--output", str(out_file))
    assert (code, out) == (2, "")
    one_error(err, needle)
    assert not out_file.exists()


def test_a_path_that_is_no_regular_file_or_too_big_is_refused_before_it_is_read(capsys, tmp_path):
    out_file = tmp_path / "out.json"
    fifo = tmp_path / "labels.jsonl"
    os.mkfifo(fifo)  # reading it would block: only stat is done
    code, out, err = check(capsys, str(fifo), "--output", str(out_file))
    assert (code, out) == (2, "")
    one_error(err, f"{fifo}: not a regular file")
    big = careful_copy(tmp_path) / "big.jsonl"
    with big.open("wb") as handle:  # sparse: 64 MB and one byte of holes
        handle.write(b"{")
        handle.truncate(reference.MAX_LABELS_BYTES + 1)
    code, out, err = check(capsys, str(big), "--output", str(out_file))
    assert (code, out) == (2, "")
    one_error(err, str(big), "64.0 MB", "over the 64.0 MB a labels file may hold")
    code, _, err = check(capsys, str(tmp_path / "absent.jsonl"))
    assert code == 2
    one_error(err, "absent.jsonl: no such file")
    code, _, err = check(capsys, str(tmp_path))  # a folder that is no run
    assert code == 2
    one_error(err, "neither a run dir nor its labels/")
    assert not out_file.exists()


def test_a_csv_with_an_unknown_label_and_an_output_that_exists(capsys, tmp_path):
    run_dir, given = labelled_run(tmp_path)
    path = tmp_path / "labels.csv"
    write_csv(path, {"ana": [(given["ana"][0][0], "maybe")]})
    code, out, err = check(capsys, str(path), "--run", str(run_dir), "--output", str(tmp_path / "out.json"))
    assert (code, out) == (2, "")
    one_error(err, f"{path}: line 2: label 'maybe' is not one of")
    assert not (tmp_path / "out.json").exists()
    existing = tmp_path / "kept.json"
    existing.write_text("{}")
    careful = str(FIXTURE / "careful_labels.jsonl")
    code, _, err = check(capsys, careful, "--output", str(existing))
    assert code == 2 and existing.read_text() == "{}"
    one_error(err, "already exists (--force writes over it)")
    code, _, err = check(capsys, careful, "--output", str(existing), "--force")
    assert code == 0 and json.loads(existing.read_text())["items"] == 5


# the fixture's reference labels, by reply marker
REFERENCE = {"R1:": "current", "R2:": "prior", "R3:": "prior", "R4:": "abstain", "R5:": "clarify"}
SCENE_NOT_RIGHTNESS = "never whether the answer is right"


def reads_right_as_current(body: dict) -> str:
    """A scripted judge with the commonest error of small LLM judges: it calls a correct answer from the
    earlier scene "current", unless its prompt says the labels name the scene, not the rightness."""
    text = json.dumps(body["messages"])
    label = next(label for marker, label in REFERENCE.items() if marker in text)
    if label == "prior" and SCENE_NOT_RIGHTNESS not in text:
        label = "current"
    return json.dumps({"label": label, "rationale": "scripted"})


def test_the_judge_prompt_says_current_and_prior_name_the_scene_and_judge_check_shows_it(capsys, tmp_path, monkeypatch):
    from benchmark.judges import prompt

    argv = ("--judge-family", "openai", "--judge-model", "openai:judge-under-test")
    assert SCENE_NOT_RIGHTNESS in render_judge_prompt(read_references(FIXTURE / "careful_labels.jsonl").items[0].case)
    with FakeOpenAI(reply=reads_right_as_current) as server:
        code, out, err = check(
            capsys, str(FIXTURE / "careful_labels.jsonl"), *argv, "--judge-base-url", server.base_url
        )
        assert code == 0, err
        assert "agreement: 5/5" in out  # the shipped prompt: every label right
        template = prompt.TEMPLATE_PATH.read_text(encoding="utf-8")
        old = tmp_path / "judge_prompt.md"
        old.write_text(template.replace(SCENE_NOT_RIGHTNESS, "whether the reply is good"), encoding="utf-8")
        monkeypatch.setattr(prompt, "TEMPLATE_PATH", old)
        code, out, err = check(
            capsys, str(FIXTURE / "careful_labels.jsonl"), *argv, "--judge-base-url", server.base_url
        )
    assert code == 0, err
    assert "agreement: 3/5" in out  # without the sentence, both prior replies come back current


def test_a_judge_at_a_custom_endpoint_without_a_model_is_named_by_the_endpoint(capsys, tmp_path):
    out_file = tmp_path / "named.json"
    with FakeOpenAI(reply=scripted, model="qwen2.5-7b-instruct") as server:
        code, out, err = check(
            capsys,
            str(FIXTURE / "careful_labels.jsonl"),
            *("--judge-family", "openai", "--judge-base-url", server.base_url, "--output", str(out_file)),
        )
    assert code == 0, err
    assert json.loads(out_file.read_text())["judge"]["name"] == "openai:qwen2.5-7b-instruct"
    assert "gpt-4o-mini" not in out
