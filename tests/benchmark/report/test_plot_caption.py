"""Issue 60, item 5: every plot that shows a score names the candidate and the judge under its title (and
that `local` is the stand-in model, the lexical judge not the publication judge), so a bar pasted into a
slide still says whose number it is."""

from __future__ import annotations

import pytest

from benchmark.report import plots, proactive_plot
from benchmark.report.plot_caption import run_caption
from benchmark.scoring.summary_view import RunManifest, RunSummary
from tests.benchmark.report.test_honest_headline import manifest, outcomes, summary_of, trial

LOCAL = "candidate local (stand-in model); judge lexical (not the publication judge)"


def test_the_caption_names_the_candidate_and_the_judge():
    assert run_caption(RunManifest.from_json({"candidate_model": "local", "judge_model": "lexical"})) == LOCAL
    caption = run_caption(RunManifest.from_json({"candidate_model": "openai:gpt-4o-mini", "judge_model": "gemini:g-2"}))
    assert caption == "candidate openai:gpt-4o-mini; judge gemini:g-2"
    assert run_caption(RunManifest.from_json({"judge_family": "claude"})) == "candidate not recorded; judge claude"
    assert run_caption(RunManifest.from_json({})) == "candidate not recorded; judge not recorded"


@pytest.fixture
def titles(monkeypatch):
    """The title of every Figure the plots make, with the figures still drawn and saved."""
    seen: list[str] = []
    real = plots.Figure

    def figure(width, height, title="", **kw):
        seen.append(title)
        return real(width, height, title, **kw)

    monkeypatch.setattr(plots, "Figure", figure)
    monkeypatch.setattr(proactive_plot, "Figure", figure)
    return seen


def test_every_score_plot_carries_it(tmp_path, titles):
    run_manifest = {**manifest(), "candidate_model": "local", "judge_model": "lexical"}
    summary = summary_of([trial(i, o) for i, o in enumerate(outcomes(30, 10, 10, 0))], run_manifest)
    cell = {"rate": 0.5, "k": 5, "n": 10, "ci_low": 0.2, "ci_high": 0.8}
    summary["by_staleness"] = {
        "baseline": {"0": {"accuracy": cell, "earlier_scene": cell, "frame_age_p50_s": None, "trials": 10}}
    }
    summary["by_frame_policy"] = {
        "baseline": {"end": {"accuracy": cell, "stale_frame_rate": cell, "frames_per_minute": 6.0, "by_gap": {}}}
    }
    paths = plots.draw_plots(RunSummary.from_json(summary), tmp_path / "plots")
    assert [p.name for p in paths] == [*plots.PLOT_FILES, "staleness.png", "frame_policy.png"]
    assert len(titles) == len(paths)
    for path, title in zip(paths, titles):
        assert LOCAL in title.splitlines(), (path.name, title)
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_proactive_plot_carries_it_and_the_compare_plot_names_runs_instead(tmp_path, titles):
    recall = {"rate": 0.5, "k": 1, "n": 2, "ci_low": 0.1, "ci_high": 0.9}
    cells = {"baseline": {"change": {"recall": recall, "false_alarms_per_min": 0.5}}}
    summary = {"proactive": cells, "manifest": {"candidate_model": "local", "judge_model": "lexical"}}
    proactive_plot.plot_proactive(RunSummary.from_json(summary), tmp_path / "proactive.png")
    assert titles[-1].splitlines()[-1] == LOCAL
    proactive_plot.plot_recall_false_alarms(cells, tmp_path / "compare.png", "one point per run and cell")
    assert "candidate" not in titles[-1]  # the runs compared are the legend's entries
