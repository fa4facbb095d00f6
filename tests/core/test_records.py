"""The records module: one trial record, read and written in one place.

Run dirs written before schema 2 (tests/fixtures/transcripts/schema1_*,
made by `wearsim bench` at commit 622c5ac: the text proxy on sc-01..06, the
simulated glasses on sc-01..05) still load, report, rescore and compare."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys

import pytest

from benchmark.judges.prompt import render_judge_prompt
from benchmark.rescore import rejudge_record, rescore
from benchmark.scoring.trials import TranscriptError, load_trials
from core.judge import Verdict
from core.records import SCHEMA_VERSION, RecordError, TrialRecord
from core.scenario import load_bank
from tests.fake_openai import FakeOpenAI
from tests.paths import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
OLD_DIRECT = FIXTURES / "transcripts" / "schema1_direct"
OLD_STREAM = FIXTURES / "transcripts" / "schema1_stream"
BANK = load_bank()


def quiet(_text: str) -> None:
    pass


class CapturingJudge:
    name, family = "capturing", "capturing"

    def __init__(self):
        self.prompts = []

    async def label(self, case):
        self.prompts.append(render_judge_prompt(case))
        return Verdict(label="current", rationale="captured", judge=self.name, prompt=self.prompts[-1])


def test_schema_1_records_load_with_their_turn_inputs():
    trials = {t.scenario_id: t for t in load_trials(OLD_STREAM).trials}
    assert set(trials) == {"sc-01", "sc-02", "sc-03", "sc-04", "sc-05"}
    raw = {
        json.loads(line)["scenario_id"]: json.loads(line)
        for line in (OLD_STREAM / "transcripts.jsonl").read_text().splitlines()
    }
    for scenario_id, trial in trials.items():
        assert trial.schema_version == 1 and trial.via == "stream"
        first = trial.turn_input(1)
        assert first.speech == raw[scenario_id]["turns"][0]["transcript"]
        assert first.speech_source == "perceived"
        assert trial.turns[1].reply.text == raw[scenario_id]["turn_2_response"]
    assert trials["sc-05"].turn_input(1).camera_source == "perceived"  # sc-05 has rendered stills


def test_a_rescore_of_a_stream_run_judges_the_perceived_conversation():
    record = next(t for t in load_trials(OLD_STREAM).trials if t.scenario_id == "sc-05")
    scenario = BANK.get("sc-05")
    judge = CapturingJudge()
    new = asyncio.run(rejudge_record(record, scenario, judge))
    prompt = judge.prompts[0]
    perceived = record.turn_input(1).speech
    assert perceived != scenario.turn_1_user  # Whisper heard it differently
    assert f"<turn_1_speech>\n{perceived}\n</turn_1_speech>" in prompt
    assert record.turn_input(2).camera_block in prompt  # the perceived camera block, as sent
    assert f"[Camera: {scenario.turn_2_image}]" not in prompt
    assert new.schema_version == SCHEMA_VERSION and new.turn_2_previous_judge_label == record.turn_2_label


@pytest.mark.parametrize("old", [OLD_DIRECT, OLD_STREAM], ids=["direct", "stream"])
def test_report_rescore_and_compare_work_on_schema_1_run_dirs(old, tmp_path):
    from benchmark.comparison.runs import compare_runs
    from benchmark.report import write_report

    summary = write_report(old, output_dir=tmp_path / "report")
    assert summary["counts"]["trials"] == len(load_trials(old).trials)
    assert (tmp_path / "report" / "findings.md").exists()
    rescored = tmp_path / "rescored"
    rescore(old, judge_family="lexical", output_dir=rescored, progress=quiet)
    lines = [json.loads(line) for line in (rescored / "transcripts.jsonl").read_text().splitlines()]
    assert all(r["schema_version"] == SCHEMA_VERSION and r["turns"][0]["input"]["speech"] for r in lines)
    result = compare_runs(old, rescored)
    assert result["unpaired_cells"] == 0


def test_a_record_names_its_file_line_and_field(tmp_path):
    good = (OLD_DIRECT / "transcripts.jsonl").read_text().splitlines()[0]
    bad = json.loads(good)
    bad["turn_2_judge_label"] = "sideways"
    bad["turns"][0]["camera_source"] = "imagined"
    path = tmp_path / "t.jsonl"
    path.write_text(good + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(TranscriptError) as info:
        load_trials(path)
    problems = info.value.problems
    assert any(f"{path}: line 2: field 'turn_2_judge_label'" in p and "sideways" in p for p in problems)
    assert any("line 2: field 'turns[0]'" in p and "camera_source" in p for p in problems)
    with pytest.raises(RecordError, match="field 'trial' must be an integer"):
        TrialRecord.from_json({**json.loads(good), "trial": "first"})


def test_turn_metrics_and_glasses_of_the_wrong_type_name_their_file_line_and_field(tmp_path):
    good = json.loads((OLD_DIRECT / "transcripts.jsonl").read_text().splitlines()[0])
    good["schema_version"] = SCHEMA_VERSION
    good["turns"] = [
        {
            "turn": 1,
            "input": {
                "turn": 1,
                "camera_block": None,
                "speech": "hi",
                "camera_source": None,
                "speech_source": "perceived",
            },
            "reply": {"text": "hello"},
            "metrics": {"speech_end_to_first_token": "abc"},
            "glasses": {"lead_ms": "soon"},
        }
    ]
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(good) + "\n")
    with pytest.raises(TranscriptError) as info:
        load_trials(path)
    text = "\n".join(info.value.problems)
    assert f"{path}: line 1" in text and "field 'speech_end_to_first_token'" in text and "'abc'" in text
    assert "field 'lead_ms'" in text


PACKAGES = ("core", "candidates", "media_effects", "perception", "streaming", "simulator", "benchmark")
RECORD_TYPES = ROOT / "core" / "records"  # the record types: the one place their keys are spelled


def test_metric_keys_are_spelled_only_in_the_records_module():
    """Scoring, findings, the session and the stream conversation read the typed `TurnMetrics`."""
    from core.records import TurnMetrics

    alternatives = "|".join(k for k in TurnMetrics.KEYS.values() if k.startswith(("speech_end_to", "turn_end_to")))
    pattern = re.compile(rf"""["']({alternatives})["']""")
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if RECORD_TYPES not in path.parents
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.search(line)
    ]
    assert offenders == []


def test_external_aliases_read_into_the_same_record():
    record = TrialRecord.from_json(
        {
            "scenario_id": "x1",
            "condition": "baseline",
            "trial": 0,
            "target_context": "prior",
            "change_type": "cross_session_reference",
            "turn_2_response": "r",
            "turn_2_judge_policy": "current",
            "turn_3_response": "fixed",
            "turn_3_judge_policy": "prior",
        }
    )
    assert record.cue_type == "pre_conversation_recall" and record.turn_2_label == "current"
    assert record.turn_3_repair_attempted and record.repair_passed is True and record.passed is False
    written = record.to_json()
    assert written["turn_2_judge_label"] == "current" and "turn_2_judge_policy" not in written


def test_record_field_names_are_spelled_only_in_the_records_module():
    """No module outside core/records/ writes a trial record's keys as strings."""
    keys = {
        k
        for k in TrialRecord(
            scenario_id="s", condition="c", trial=0, target_context="current", cue_type="location"
        ).to_json()
        if k.startswith("turn_") or k in ("schema_version", "wall_s")
    }
    alternatives = "|".join(sorted(keys))
    pattern = re.compile(rf"""["']({alternatives})["']""")
    offenders = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if RECORD_TYPES in path.parents:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if pattern.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


@pytest.mark.clock
@pytest.mark.parametrize("bank", ["banks/trio_spec_shapes", "banks/spec_vocab.jsonl"])
def test_bench_and_rescore_on_a_bank_in_a_published_shape(bank, tmp_path):
    bank_path = FIXTURES / bank
    with FakeOpenAI(reply="That one in your hand now is fine.") as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "bench",
                "--scenarios",
                str(bank_path),
                "--model",
                "openai:fake",
                "--base-url",
                server.base_url,
                "--judge-family",
                "lexical",
                "--conditions",
                "baseline",
                "--output-dir",
                str(tmp_path / "run"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
            env={**os.environ, "OPENAI_API_KEY": ""},
        )
    assert done.returncode == 0, done.stderr
    scenarios = load_bank(bank_path).select("bank").scenarios  # the default: the bank subset
    assert len(load_trials(tmp_path / "run").trials) == len(scenarios)
    summary = rescore(
        tmp_path / "run", judge_family="lexical", scenarios=bank_path, output_dir=tmp_path / "rescored", progress=quiet
    )
    assert summary["counts"]["trials"] == len(scenarios) and summary["counts"]["errored"] == 0


def test_huge_names_and_wrong_reply_types_are_refused_with_file_line_and_field(tmp_path):
    """A 20,000-character condition once took `wearsim report` to 23.5 GB; `latency_s: "abc"`, a list for
    `usage` and an integer rationale crashed without saying where."""
    good = json.loads((OLD_DIRECT / "transcripts.jsonl").read_text().splitlines()[0])
    huge = {**good, "condition": "c" * 20_000, "cue_type": "x" * 50_000}
    typed = {
        **good,
        "schema_version": SCHEMA_VERSION,
        "turn_2_judge_rationale": 7,
        "turns": [
            {
                "turn": 1,
                "input": {
                    "turn": 1,
                    "camera_block": None,
                    "speech": "hi",
                    "camera_source": None,
                    "speech_source": "authored",
                },
                "reply": {"text": "r", "latency_s": "abc", "usage": [1, 2], "first_token_s": "0.5"},
            }
        ],
    }
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(huge) + "\n" + json.dumps(typed) + "\n")
    with pytest.raises(TranscriptError) as info:
        load_trials(path)
    text = "\n".join(info.value.problems)
    assert f"{path}: line 1: field 'condition' is 20,000 characters long" in text
    assert "line 1: field 'cue_type' is 50,000 characters long" in text
    for field in ("reply.latency_s", "reply.usage", "reply.first_token_s", "turn_2_judge_rationale"):
        assert "line 2" in text and f"field '{field}'" in text, field
    assert len(text) < 5_000  # the error names the values, it does not repeat them
