"""The bank's lockfile, MANIFEST.lock.json: the SHA-256 of each bank file and of the judge prompt, under
the benchmark version. A bank's content may change only with a version bump."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from benchmark import BENCHMARK_VERSION

LOCK_FILES = {
    "scenarios_sha256": "scenarios.json",
    "expected_answers_sha256": "expected_answers.json",
    "interventions_sha256": "interventions.json",
    "proactive_sha256": "proactive.json",  # the proactive subset (core.proactive_scenario)
}
JUDGE_TEMPLATE = Path(__file__).parent / "judges" / "judge_prompt.md"


def lock_hashes(directory: Path) -> dict:
    hashes = {}
    for key, name in LOCK_FILES.items():
        path = directory / name
        hashes[key] = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None
    hashes["judge_prompt_sha256"] = (hashlib.sha256(JUDGE_TEMPLATE.read_bytes()).hexdigest()
                                     if JUDGE_TEMPLATE.exists() else None)
    return hashes


def write_lock(directory: Path) -> Path:
    path = directory / "MANIFEST.lock.json"
    data = {"benchmark_version": BENCHMARK_VERSION, **lock_hashes(directory)}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def lock_drift(directory: Path) -> list[str] | None:
    """The computed hashes against MANIFEST.lock.json: what drifted (nothing when the version was bumped,
    which re-baselines them), or None when the bank has no lockfile."""
    problems: list[str] = []
    path = directory / "MANIFEST.lock.json"
    if not path.exists():
        return None
    try:
        lock = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return [f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}"]
    computed = lock_hashes(directory)
    if computed["judge_prompt_sha256"] is None:
        problems.append(f"{JUDGE_TEMPLATE}: judge prompt template missing")
    if lock.get("benchmark_version") != BENCHMARK_VERSION:
        return problems  # a version bump re-baselines the hashes
    for key, value in computed.items():
        if value is not None and lock.get(key) != value:
            problems.append(
                f"{path}: {key} drifted (bank content changed without a BENCHMARK_VERSION bump; "
                "bump it or run `wearsim validate --write-lock` for an intended change)")
    return problems
