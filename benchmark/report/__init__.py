"""Reports: summary.json, findings.md and plots/ of a run dir."""

from __future__ import annotations

import json
from pathlib import Path

from benchmark.report.findings import render_findings


def read_manifest(directory: Path) -> dict:
    path = directory / "manifest.json"
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def write_report(run_dir: Path, *, transcripts: Path | None = None, output_dir: Path | None = None) -> dict:
    """Score a run and write summary.json, findings.md and plots/; return the summary.

    `run_dir` holds transcripts.jsonl and manifest.json. With `transcripts`
    given (a file from any implementation of the benchmark), that file is read
    instead and the manifest is taken from `run_dir` when it has one.
    Outputs go to `output_dir` (default `run_dir`).
    """
    from benchmark.report.plots import draw_plots
    from benchmark.scoring import build_summary, load_trials

    run_dir = Path(run_dir)
    source = Path(transcripts) if transcripts is not None else run_dir / "transcripts.jsonl"
    trial_set = load_trials(source)
    manifest = read_manifest(run_dir) if run_dir.is_dir() else {}
    if not manifest:
        manifest = {"source_transcripts": str(source)}
    summary = build_summary(trial_set, manifest)
    out = Path(output_dir) if output_dir is not None else run_dir
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out / "findings.md").write_text(render_findings(summary), encoding="utf-8")
    draw_plots(summary, out / "plots")
    return summary


__all__ = ["render_findings", "write_report", "read_manifest"]
