"""`manifest.json`: what a run was made with, written atomically when the run starts, and which of its
fields must match for a run dir to be resumed (`RESUME_KEYS`)."""

from __future__ import annotations

import hashlib
import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from benchmark import BENCHMARK_VERSION, SCHEMA_REVISION, package_version
from benchmark.cost.prices import price_table
from benchmark.judges.family import endpoint_host
from benchmark.run.outputs import CACHE_LOG
from benchmark.run.settings import RunSettings, StreamSettings
from benchmark.shards import shard_text
from core.safe_files import write_atomic
from core.scenario import Bank
from core.scenes import scenes_sha256

# manifest fields that must match for a run dir to be resumed: every setting
# that can change a result (`concurrency` only changes how fast it comes)
RESUME_KEYS = (
    "benchmark_version",
    "scenarios_sha256",
    "expected_answers_sha256",
    "interventions_sha256",
    "judge_prompt_sha256",
    "candidate_model",
    "candidate_model_file",
    "judge_family",
    "judge_model",
    "ranking_judge_family",
    "ranking_judge_model",
    "temperature",
    "max_tokens",
    "camera_injection",
    "repair_style",
    "via",
    "conditions",
    "ranking_condition",
    "trials",
    "scenario_ids",
    "staleness_ms",
    "frame_policies",
    "frame_size",
    "frame_quality",
    "impairments",
    "impairment_seed",
    "synthetic_frames",
    "describer",
    "pictograph_frames",
    "scenes_sha256",
    "speed",
    "end_of_turn",
    "media_root",
    "asr_model",
    "output",
    "shard",
    "proactive",
    "proactive_sha256",
    "glasses",
)
# The manifest's endpoints (candidate_endpoint, judge_endpoint, ...) are recorded but may
# change on resume: a server may move (a local one gets a new port each start) while
# the model ids above stay the same.
_NOT_RECORDED = object()
# keys older runners did not write: the value they used, or _NOT_RECORDED when
# it cannot be known (then a manifest without the key is not compared on it)
LEGACY_RESUME_VALUES = {
    "max_tokens": 300,
    "speed": _NOT_RECORDED,
    "candidate_model_file": _NOT_RECORDED,
    "candidate_endpoint": _NOT_RECORDED,
    "judge_endpoint": _NOT_RECORDED,
    "ranking_judge_endpoint": _NOT_RECORDED,
    "describer_endpoint": _NOT_RECORDED,
    "output": "text",
    "frame_policies": [],
    "frame_size": 0,
    "frame_quality": 0,
    "impairments": [],
    "impairment_seed": None,
    "shard": None,
    "pictograph_frames": False,
    "scenes_sha256": None,
    "proactive": [],
    "proactive_sha256": None,
    "end_of_turn": _NOT_RECORDED,
    "glasses": _NOT_RECORDED,
}


def sha256_file(path: Path | None) -> str | None:
    if path is None or not Path(path).exists():
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, cwd=Path(__file__).resolve().parent
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def build_manifest(bank: Bank, settings: RunSettings) -> dict:
    from benchmark.judges.prompt import JUDGE_PROMPT_VERSION, judge_prompt_sha256
    from candidates.model_ids import transcription_model

    candidate, judge, stream = settings.candidate, settings.judge, settings.stream or StreamSettings()
    glasses = settings.glasses
    played = glasses.record() if glasses is not None else {}  # what the glasses did (none on the text proxy)
    prices = settings.prices or price_table()
    return {
        "benchmark_version": BENCHMARK_VERSION,
        "schema_revision": SCHEMA_REVISION,
        "wearsim_version": package_version(),
        # the bank's MANIFEST.lock.json (its files' and the judge prompt's hashes): what a citation names
        "bank_lock_sha256": sha256_file(Path(bank.files["scenarios"]).with_name("MANIFEST.lock.json"))
        if bank.files.get("scenarios")
        else None,
        "camera_injection": settings.camera,
        "scenarios_sha256": sha256_file(bank.files.get("scenarios")),
        "expected_answers_sha256": sha256_file(bank.files.get("expected_answers")),
        "interventions_sha256": sha256_file(bank.files.get("interventions")),
        "judge_prompt_version": JUDGE_PROMPT_VERSION,
        "judge_prompt_sha256": judge_prompt_sha256(),
        "candidate_model": candidate.model_id,
        "candidate_model_file": candidate.model_file,
        "candidate_endpoint": endpoint_host(candidate.base_url),
        "judge_model": judge.model or judge.family,
        "judge_endpoint": endpoint_host(judge.base_url),
        "ranking_judge_endpoint": endpoint_host(judge.ranking_base_url),
        "describer_endpoint": endpoint_host(stream.describer_base_url),
        "judge_family": judge.family,
        "judge_family_resolution": judge.family_resolution,
        "ranking_judge_model": judge.ranking_model,
        "ranking_judge_family": judge.ranking_family,
        "trials": settings.trials,
        "temperature": candidate.temperature,
        "max_tokens": candidate.max_tokens,
        "ranking_condition": settings.ranking_condition,
        "conditions": list(settings.conditions),
        "repair_style": settings.repair_style,
        "via": settings.via,
        "output": candidate.output,
        "speed": played.get("speed"),
        "staleness_ms": list(stream.staleness_ms),
        "frame_policies": [p.name for p in stream.frame_policies],
        "impairments": list(stream.impairments),
        "impairment_seed": stream.impairment_seed if stream.impairments else None,
        "frame_size": played.get("frame_size", 0),
        "frame_quality": played.get("frame_quality", 0),
        "synthetic_frames": played.get("synthetic_frames", False),
        "pictograph_frames": stream.pictograph_frames,
        "scenes_sha256": scenes_sha256(bank) if stream.pictograph_frames else None,
        "proactive": list(stream.proactive),
        "proactive_sha256": sha256_file(bank.files.get("proactive")) if stream.proactive else None,
        "describer": played.get("describer"),
        "end_of_turn": played.get("end_of_turn"),
        # what the glasses did, as `wearsim simulate`'s session log says it (`GlassesSettings.record`); null: direct
        "glasses": played or None,
        "media_root": str(glasses.media_root) if glasses is not None and glasses.media_root else None,
        "asr_model": stream.asr_model,
        "concurrency": settings.concurrency,
        "response_cache": (
            {"directory": settings.cache_dir, "candidate": candidate.cached, "judges": True, "log": CACHE_LOG}
            if settings.cache_dir
            else None
        ),
        "rate_limits": settings.rate_limits,
        # what each model's tokens cost in this run (null: no price), so a report can be recomputed
        "prices": prices.for_manifest(
            (candidate.model_id, transcription_model(candidate.model_id), judge.model, judge.ranking_model)
        ),
        "price_source": prices.origin,
        "budget_usd": settings.budget_usd,
        "shard": shard_text(settings.shard),
        "keep_frames": glasses.keep_frames if glasses is not None else None,
        # `--config FILE.toml`: the file the flags were read from, {"path", "sha256"} (null: flags only)
        "config": settings.config,
        "bank_source": str(bank.source),
        "bank_format": bank.format,
        "scenario_ids": [s.scenario_id for s in bank.scenarios],
        "timestamp_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "runner_git_commit": git_commit(),
    }


def write_manifest(path: Path, manifest: dict) -> None:
    """Write manifest.json atomically: a temp file beside it, fsync'd, then
    renamed over it, so a kill or a full disk never leaves half a manifest."""
    write_atomic(path, json.dumps(manifest, indent=2, allow_nan=False) + "\n", sync=True)  # NaN is no JSON


def _short(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def resume_differences(old: dict, new: dict) -> list[str]:
    """The RESUME_KEYS on which two manifests differ, each as `key (old there, new now)`."""
    differing = []
    for key in RESUME_KEYS:
        before = old.get(key, LEGACY_RESUME_VALUES.get(key))
        if before is _NOT_RECORDED:
            continue
        if before != new.get(key):
            differing.append(f"{key} ({_short(before)} there, {_short(new.get(key))} now)")
    return differing
