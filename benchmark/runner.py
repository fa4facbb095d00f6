"""The resumable async runner behind `wearsim bench`.

Cells are (condition, scenario, trial). Each finished trial is appended to
`transcripts.jsonl` and flushed to disk at once, so a killed run loses only
the cells in flight; rerunning into the same directory skips finished cells
and refuses a directory made with a different bank, model or settings.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from benchmark import BENCHMARK_VERSION, SCHEMA_REVISION
from benchmark.protocol import Conversation, run_trial
from benchmark.records import RecordError, TrialRecord
from benchmark.scenario import Bank, Condition, Scenario

# (scenario, condition, staleness_ms or None) -> the `Conversation` of one trial; `wearsim bench` makes it
ConversationFactory = Callable[[Scenario, Condition, "int | None"], Conversation]

# manifest fields that must match for a run dir to be resumed
RESUME_KEYS = (
    "benchmark_version", "scenarios_sha256", "expected_answers_sha256", "interventions_sha256",
    "judge_prompt_sha256", "candidate_model", "judge_family", "judge_model", "ranking_judge_model",
    "temperature", "camera_injection", "repair_style", "via", "conditions", "trials", "scenario_ids",
    "staleness_ms", "synthetic_frames", "describer",
)


class RunDirError(RuntimeError):
    """The output directory cannot be used for this run."""


@dataclass(frozen=True)
class RunSettings:
    model_id: str
    judge_family: str  # resolved family ("lexical", "openai", ...)
    judge_family_resolution: str
    judge_model: str | None
    conditions: tuple[str, ...]
    ranking_condition: str = "baseline"
    trials: int = 1
    temperature: float = 0.0
    concurrency: int = 4
    camera: bool = True
    repair_style: str = "named"
    ranking_judge_family: str | None = None
    ranking_judge_model: str | None = None
    via: str = "direct"
    max_tokens: int = 300
    staleness_ms: tuple[int, ...] = ()  # the staleness sweep: one cell per Turn 2 gap
    synthetic_frames: bool = False
    describer: str | None = None  # the streaming server's scene describer (stream runs)


def sha256_file(path: Path | None) -> str | None:
    if path is None or not Path(path).exists():
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def build_manifest(bank: Bank, settings: RunSettings) -> dict:
    from benchmark.judges.prompt import JUDGE_PROMPT_VERSION, judge_prompt_sha256

    return {
        "benchmark_version": BENCHMARK_VERSION,
        "schema_revision": SCHEMA_REVISION,
        "camera_injection": settings.camera,
        "scenarios_sha256": sha256_file(bank.files.get("scenarios")),
        "expected_answers_sha256": sha256_file(bank.files.get("expected_answers")),
        "interventions_sha256": sha256_file(bank.files.get("interventions")),
        "judge_prompt_version": JUDGE_PROMPT_VERSION,
        "judge_prompt_sha256": judge_prompt_sha256(),
        "candidate_model": settings.model_id,
        "judge_model": settings.judge_model or settings.judge_family,
        "judge_family": settings.judge_family,
        "judge_family_resolution": settings.judge_family_resolution,
        "ranking_judge_model": settings.ranking_judge_model,
        "ranking_judge_family": settings.ranking_judge_family,
        "trials": settings.trials,
        "temperature": settings.temperature,
        "ranking_condition": settings.ranking_condition,
        "conditions": list(settings.conditions),
        "repair_style": settings.repair_style,
        "via": settings.via,
        "staleness_ms": list(settings.staleness_ms),
        "synthetic_frames": settings.synthetic_frames,
        "describer": settings.describer,
        "bank_source": str(bank.source),
        "bank_format": bank.format,
        "scenario_ids": [s.scenario_id for s in bank.scenarios],
        "timestamp_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runner_git_commit": git_commit(),
    }


def prepare_run_dir(run_dir: Path, manifest: dict, resume: bool) -> set[tuple[str, str, int]]:
    """Create or check the run dir; return the finished cells."""
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = run_dir / "manifest.json"
    transcripts = run_dir / "transcripts.jsonl"
    if manifest_path.exists():
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
        differing = [key for key in RESUME_KEYS if old.get(key) != manifest.get(key)]
        if differing:
            raise RunDirError(
                f"{run_dir} holds a run made with different {', '.join(differing)}; "
                "choose another --output-dir (nothing was changed)")
        if not resume and transcripts.exists() and transcripts.stat().st_size:
            print(f"resuming the run in {run_dir} (same bank, model and settings)", file=sys.stderr)
        manifest["timestamp_utc"] = old.get("timestamp_utc", manifest["timestamp_utc"])
    elif transcripts.exists() and transcripts.stat().st_size:
        raise RunDirError(f"{run_dir} has transcripts.jsonl but no manifest.json; choose another --output-dir")
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return finished_cells(transcripts)


def finished_cells(transcripts: Path) -> set[tuple]:
    """(condition, scenario_id, trial, staleness_ms) of every trial that finished without an error."""
    done: set[tuple] = set()
    if not transcripts.exists():
        return done
    with transcripts.open("r", encoding="utf-8") as handle:
        for line in handle:
            try:
                record = TrialRecord.from_json(json.loads(line))
            except (json.JSONDecodeError, RecordError):
                continue  # a line cut by a kill: that cell runs again
            if not record.errored:
                done.add((record.condition, record.scenario_id, record.trial, record.staleness_ms))
    return done


class TranscriptWriter:
    """Appends one JSON line per trial; each write is flushed and fsync'd."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = asyncio.Lock()
        if path.exists() and path.stat().st_size:
            with path.open("rb+") as handle:  # end a line a kill left unfinished
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    handle.write(b"\n")

    async def append(self, record: TrialRecord) -> None:
        line = record.to_line()
        async with self._lock:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())


class Progress:
    def __init__(self, total: int):
        self.total, self.done = total, 0
        self.counts = {"pass": 0, "miss": 0, "unscored": 0, "error": 0}
        self.started = time.monotonic()

    def update(self, record: TrialRecord) -> None:
        self.done += 1
        if record.errored:
            self.counts["error"] += 1
        elif record.passed is None:
            self.counts["unscored"] += 1
        else:
            self.counts["pass" if record.passed else "miss"] += 1
        elapsed = time.monotonic() - self.started
        eta = elapsed / self.done * (self.total - self.done)
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        summary = " ".join(f"{k} {v}" for k, v in self.counts.items())
        print(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
              f"{record.scenario_id} {record.condition}  {summary}  eta {eta:4.0f}s",
              end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        print(file=sys.stderr)


async def run_bench(bank: Bank, settings: RunSettings, run_dir: Path, conversation: ConversationFactory,
                    *, resume: bool = False) -> dict:
    """Run every unfinished cell, each trial through `conversation(scenario, condition)`;
    return counts. Reports are written by the caller."""
    from benchmark.judges import open_judge

    for name in settings.conditions:
        bank.condition(name)  # unknown names fail before anything starts
    manifest = build_manifest(bank, settings)
    done = prepare_run_dir(run_dir, manifest, resume)
    gaps = settings.staleness_ms or (None,)
    cells = [(c, s, t, g) for c in settings.conditions for s in bank.scenarios for t in range(settings.trials)
             for g in gaps if (c, s.scenario_id, t, g) not in done]
    total = len(settings.conditions) * len(bank.scenarios) * settings.trials * len(gaps)
    print(f"{len(cells)} cells to run ({total - len(cells)} already finished) -> {run_dir}", file=sys.stderr)
    if not cells:
        return {"ran": 0, "skipped": total}
    writer = TranscriptWriter(run_dir / "transcripts.jsonl")
    progress = Progress(len(cells))
    semaphore = asyncio.Semaphore(max(1, settings.concurrency))

    async with open_judge(settings.judge_family, settings.judge_model) as judge:
        ranking_ctx = (open_judge(settings.ranking_judge_family, settings.ranking_judge_model)
                       if settings.ranking_judge_family else None)
        ranking_judge = await ranking_ctx.__aenter__() if ranking_ctx else None
        try:
            async def run_cell(condition_name: str, scenario: Scenario, trial: int, gap: int | None) -> None:
                condition = bank.condition(condition_name)
                cell = dict(scenario_id=scenario.scenario_id, condition=condition_name, trial=trial,
                            staleness_ms=gap, via=settings.via, candidate_model=settings.model_id,
                            system_prompt=condition.system_prompt)
                async with semaphore:
                    started = time.monotonic()
                    talk = None
                    try:
                        talk = conversation(scenario, condition, gap)
                        record = (await run_trial(talk, scenario, judge, ranking_judge)).replace(**cell)
                    except Exception as exc:  # recorded, excluded from metrics, counted
                        record = TrialRecord(
                            target_context=scenario.target_context, cue_type=scenario.cue_type,
                            difficulty_tier=scenario.difficulty_tier, activity_domain=scenario.activity_domain,
                            error=f"{type(exc).__name__}: {exc}"[:500], **cell)
                    finally:
                        if talk is not None and hasattr(talk, "aclose"):
                            await talk.aclose()
                    record = record.replace(wall_s=round(time.monotonic() - started, 3))
                await writer.append(record)
                progress.update(record)

            await asyncio.gather(*(run_cell(*cell) for cell in cells))
        finally:
            progress.close()
            if ranking_ctx is not None:
                await ranking_ctx.__aexit__(None, None, None)
    return {"ran": len(cells), "skipped": total - len(cells), **progress.counts}
