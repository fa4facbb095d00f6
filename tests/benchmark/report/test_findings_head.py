"""Issue 60, item 4: findings.md's head uses one set of counts. The balanced accuracy says how many of the
labelled trials it is over and which ones it leaves out (the clarify and abstain ones, shown only in the
Per class table); the Conditions table says it too; the Manifest table says a stream run's defaults in
words (tiny.en, as captured) instead of `None` and `0`."""

from __future__ import annotations

import dataclasses

from benchmark.report.findings import headline, render_findings
from benchmark.scoring.summary_view import RunSummary
from core.judge import Verdict
from tests.benchmark.report.test_honest_headline import manifest, outcomes, summary_of, trial


def with_clarify(extra: int) -> list:
    """40 current/prior trials (30 pass, 10 miss), then `extra` clarify trials the judge labelled."""
    trials = [trial(i, o) for i, o in enumerate(outcomes(30, 10, 0, 0))]
    for i in range(40, 40 + extra):
        asked = Verdict(label="clarify", rationale="asks which one", judge="lexical")
        trials.append(dataclasses.replace(trial(i, "pass"), target_context="clarify", turn_2_judge=asked))
    return trials


def test_the_head_says_which_labelled_trials_leave_the_balanced_accuracy():
    summary = summary_of(with_clarify(3), manifest())
    findings = render_findings(RunSummary.from_json(summary))
    head = next(p for p in findings.split("\n\n") if p.startswith("**Balanced Turn 2 accuracy"))
    assert "over 40 of the 43 labelled trials (40 scenarios;" in head
    assert "the 3 whose right answer is to ask which (clarify) or to decline (abstain) are not in it" in head
    assert "Per class table" in head
    line = headline(RunSummary.from_json(summary))
    assert "(40 trials of 40 scenarios; 43 of 50 scored; the 3 whose right answer is" in line
    assert "n=40" not in line
    conditions = findings[findings.index("## Conditions") : findings.index("## Per class")]
    assert "of them in the balanced accuracy" in conditions
    row = next(line for line in conditions.splitlines() if line.startswith("| baseline"))
    assert row.rstrip(" |").endswith("| 43 | 40")


def test_no_aside_when_every_labelled_trial_is_in_it():
    summary = summary_of(with_clarify(0), manifest())
    head = next(
        p
        for p in render_findings(RunSummary.from_json(summary)).split("\n\n")
        if p.startswith("**Balanced Turn 2 accuracy")
    )
    assert "over 40 of the 40 labelled trials" in head and "not in it" not in head
    assert headline(RunSummary.from_json(summary)).endswith("40 of 50 scored)")


def test_the_manifest_table_says_a_stream_runs_defaults_in_words():
    stream = {**manifest(), "via": "stream", "asr_model": None, "frame_size": 0, "frame_quality": 0}
    table = render_findings(RunSummary.from_json(summary_of(with_clarify(0), stream))).split("## Manifest")[1]
    assert "| `asr_model` | tiny.en (the bundled Whisper model) |" in table
    assert "| `frame_size` | as captured |" in table and "| `frame_quality` | as captured |" in table
    assert "`None`" not in table.split("`asr_model`")[1].splitlines()[0]
    chosen = {**stream, "asr_model": "small.en", "frame_size": 512, "frame_quality": 70}
    table = render_findings(RunSummary.from_json(summary_of(with_clarify(0), chosen))).split("## Manifest")[1]
    assert "| `asr_model` | `small.en` |" in table and "| `frame_size` | `512` |" in table
    direct = {**manifest(), "via": "direct", "frame_size": 0}
    assert "| `frame_size` | `0` |" in render_findings(RunSummary.from_json(summary_of(with_clarify(0), direct)))
