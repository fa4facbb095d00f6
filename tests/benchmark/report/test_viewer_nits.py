"""Issue 60, item 7: the viewer says what it shows. No "the replies:" followed by nothing; findings' code
spans as <code>, never raw backticks; the judge named once when its family and model are the same word;
each latency says what it counts from; `wearsim agreement`'s report and plot linked when the run has them."""

from __future__ import annotations

import dataclasses
import shutil

from benchmark.report import write_report
from benchmark.report.timeline import RunFiles, timeline_html
from benchmark.report.viewer import code_spans, figures_html, write_viewer
from benchmark.report.viewer_trials import messages_html, turn_facts
from benchmark.scoring import load_trials
from benchmark.scoring.summary_view import RunSummary
from core.records import TurnResult
from tests.paths import FIXTURES

STREAM = FIXTURES / "transcripts" / "schema1_stream"


def test_a_trial_with_no_messages_and_no_replies_says_so_instead_of_announcing_replies():
    trial = load_trials(STREAM).trials[0]
    bare = dataclasses.replace(trial, messages=(), turn_1_response="", turn_2_response="", turn_3_response="")
    html = messages_html(bare)
    assert "the replies:" not in html and "No messages and no replies were recorded" in html
    with_replies = dataclasses.replace(bare, turn_2_response="the blue one")
    html = messages_html(with_replies)
    assert "No messages recorded; the replies:" in html and "the blue one" in html


def test_code_spans_become_code_and_markup_stays_escaped():
    assert code_spans("The `opencv` describer <b>") == "The <code>opencv</code> describer &lt;b&gt;"
    assert code_spans("a `<script>` here") == "a <code>&lt;script&gt;</code> here"


def test_the_judge_row_names_a_lexical_judge_once():
    summary = {"manifest": {"judge_family": "lexical", "judge_model": "lexical"}, "conditions": {}}
    page = figures_html(RunSummary.from_json(summary))
    assert "<th>judge</th><td>lexical</td>" in page and "lexical (lexical)" not in page
    summary["manifest"] = {"judge_family": "openai", "judge_model": "openai:gpt-4o-mini"}
    assert "<th>judge</th><td>openai (openai:gpt-4o-mini)</td>" in figures_html(RunSummary.from_json(summary))


def test_every_latency_says_what_it_counts_from():
    trial = next(t for t in load_trials(STREAM).trials if t.turns and t.turns[0].metrics.measured)
    turn: TurnResult = trial.turns[0]
    facts = turn_facts(turn)
    assert "first token (from the request to the model)" in facts
    assert "reply latency (from the request to the model)" in facts
    assert "first token" not in facts  # the bare label, which read as the strip's "first reply text"
    assert any(key.startswith("speech_end_to_") for key in facts)
    timed = dataclasses.replace(turn, glasses=dataclasses.replace(turn.glasses, start_ms=0, speech_end_ms=3000))
    strip = timeline_html(timed, RunFiles(STREAM, STREAM))
    assert "first reply text at " in strip and "not latencies" in strip and "from the request to the model" in strip


def test_agreement_report_and_plot_are_linked_when_they_exist(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(STREAM, run)
    summary = write_report(run)
    page = write_viewer(run, summary=RunSummary.from_json(summary)).read_text(encoding="utf-8")
    assert 'id="agreement"' not in page
    (run / "agreement.md").write_text("# Agreement\n", encoding="utf-8")
    (run / "agreement.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (run / "agreement_turn3.md").write_text("# Turn 3\n", encoding="utf-8")
    page = write_viewer(run, summary=RunSummary.from_json(summary)).read_text(encoding="utf-8")
    assert '<a href="agreement.md">agreement.md</a>, <a href="agreement.png">agreement.png</a>' in page
    assert 'Turn 3: <a href="agreement_turn3.md">agreement_turn3.md</a>' in page
    assert "proactive remarks:" not in page
