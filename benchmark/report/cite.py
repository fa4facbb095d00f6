"""The line a paper pastes to say which software, bank, judge and run made a number: the last line of
every findings.md (and under the viewer's figures), rendered from the manifest in summary.json alone.
CITATION.cff cites the software and the bank; this line pins the run. A judge or candidate asked at a
custom endpoint is cited with the endpoint's host (`judge_endpoint`, `candidate_endpoint`) and the model
the run recorded: the one the user named, else the one the endpoint named (`wearsim bench`, `wearsim
rescore`), never a family's default."""

from __future__ import annotations

from benchmark.judges.kinds import is_offline
from benchmark.scoring.summary_view import RunManifest


def _text(value) -> str:
    return " ".join(str(value).split())  # a value from the run dir never starts a line of its own


def _at(endpoint) -> str:
    """` at HOST` for a model asked at a custom endpoint (the manifest keeps its host and port only)."""
    return f" at {_text(endpoint)}" if isinstance(endpoint, str) and endpoint.strip() else ""


def _said(value: str | None, missing: str = "not recorded") -> str:
    return _text(value) if value else missing


def cite_line(manifest: RunManifest) -> str:
    """ "Cite as: wearsim 0.1.0, bank v1.1 (lock sha256 ...), judge ..., run ..."; what the manifest does
    not record (a run made before it did) is said to be unrecorded, never guessed."""
    lock = manifest.bank_lock_sha256
    bank = (
        f"bank {_said(manifest.benchmark_version, 'version not recorded')} ("
        + (f"lock sha256 {_text(lock)}" if lock else "lock sha256 not recorded")
        + ")"
    )
    family, model = manifest.judge_family, manifest.judge_model
    judge = f"judge {_text(family or 'not recorded')}" + (f" `{_text(model)}`" if model and model != family else "")
    if not is_offline(family):
        judge += _at(manifest.judge_endpoint)
    if manifest.judge_prompt_version and not is_offline(family):
        judge += f" (prompt {_text(manifest.judge_prompt_version)})"
    commit = _said(manifest.runner_git_commit, "")
    run = (
        f"run {_said(manifest.timestamp_utc)}"
        + (f" at commit {commit[:12]}" if commit and commit != "unknown" else "")
        + f", candidate `{_said(manifest.candidate_model)}`{_at(manifest.candidate_endpoint)} via {_said(manifest.via)}"
    )
    return f"Cite as: wearsim {_said(manifest.wearsim_version)}, {bank}, {judge}, {run}."
