"""The bank's lockfile, MANIFEST.lock.json: the SHA-256 of each bank file, of its scene specs (the
pictographs are drawn from them) and of the judge prompt, under the benchmark version. A bank's content
may change only with a version bump."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from benchmark import BENCHMARK_VERSION

LOCK_FILES = {
    "scenarios_sha256": "scenarios.json",
    "expected_answers_sha256": "expected_answers.json",
    "interventions_sha256": "interventions.json",
    "proactive_sha256": "proactive.json",  # the proactive subset (core.proactive_scenario)
}
SCENES = "scenes"  # core.scenes.SCENE_DIR: one spec per scenario, the proactive timelines in a folder of it
JUDGE_TEMPLATE = Path(__file__).parent.parent / "judges" / "judge_prompt.md"


def scene_specs_sha256(directory: Path) -> str | None:
    """One hash over every `.json` file under the bank's scenes folder, by its path there (None: no
    folder). A link is hashed as its name and the word `link`, never followed."""
    root = directory / SCENES
    if not root.is_dir() or root.is_symlink():
        return None
    digest = hashlib.sha256()
    for folder, folders, files in os.walk(root):  # links to folders are not walked into
        folders.sort()
        for name in sorted(files):
            path = Path(folder) / name
            if name.endswith(".json"):
                content = b"link" if path.is_symlink() else path.read_bytes()
                digest.update(path.relative_to(root).as_posix().encode() + b"\0" + content + b"\0")
    return digest.hexdigest()


def lock_hashes(directory: Path) -> dict:
    hashes = {}
    for key, name in LOCK_FILES.items():
        path = directory / name
        hashes[key] = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None
    hashes["scene_specs_sha256"] = scene_specs_sha256(directory)
    hashes["judge_prompt_sha256"] = (
        hashlib.sha256(JUDGE_TEMPLATE.read_bytes()).hexdigest() if JUDGE_TEMPLATE.exists() else None
    )
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
                "bump it or run `wearsim validate --write-lock` for an intended change)"
            )
    return problems
