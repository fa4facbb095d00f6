"""Re-judge recorded responses with another judge, without calling the candidate.

The answer keys and scene descriptions come from a bank joined by
scenario_id (default: the shipped bank). The result is a new run dir whose
trial records carry the new verdicts and, beside them, the recorded labels as
`turn_2_previous_judge_label` / `turn_3_previous_judge_label`; its summary
reports the agreement between the two as `judge_agreement`.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Generator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from benchmark.scoring.trials import TranscriptError, load_trials, transcripts_path
from core.records import SCHEMA_VERSION, TrialRecord
from core.safe_files import atomic_file, refuse_links, write_atomic
from core.scenario import Scenario, load_bank

if TYPE_CHECKING:
    from core.proactive_scenario import ProactiveScenario


class RescoreError(ValueError):
    pass


# An offline judge's work is all CPU: on Linux, a run of at least `PARALLEL_FROM` records is judged in
# worker processes (at most `MAX_WORKERS`, one a core), each a fork of this one, so the bank, the records
# and the judge are shared, not sent. They take `CHUNK` records at a time and send back each new
# record's line, in order: the same lines, byte for byte, as judging them one by one here.
PARALLEL_FROM = 400
MAX_WORKERS = 4
CHUNK = 32


async def _judge_turn(judge, record: TrialRecord, scenario: Scenario, turn: int):
    from core.judge import Verdict

    response = record.turn_2_response if turn == 2 else record.turn_3_response
    if response is None:
        return Verdict(
            label=None,
            rationale="",
            judge=getattr(judge, "name", "?"),
            unscored_reason=f"no recorded Turn {turn} response",
        )
    return await judge.label(record.judge_case(scenario, turn))


async def rejudge_record(record: TrialRecord, scenario, judge) -> TrialRecord:
    """The record with Turn 2 (and Turn 3, if sent) judged again on the
    conversation as it was sent; the labels before go beside the new ones. The
    repair's target comes from the bank (`Scenario.repair_target`). A proactive
    trial (`scenario` a `ProactiveScenario`) has its remarks judged again and
    their outcomes decided again (`benchmark.scoring.proactive`)."""
    from benchmark.faults import classify, fault_of
    from benchmark.judges.signals import code_signals

    if record.watching is not None:
        from benchmark.scoring.proactive import judge_watching

        if record.errored:
            return record
        return record.replace(
            schema_version=SCHEMA_VERSION,
            watching=await judge_watching(
                scenario,
                record.watching,
                judge,
                heard=tuple(turn.input.speech for turn in record.turns if turn.input.speech),
            ),
            fault=None,
        )
    record = record.replace(
        schema_version=SCHEMA_VERSION,
        activity_domain=record.activity_domain or scenario.activity_domain,
        repair_target_context=scenario.repair_target,
        subset=scenario.subset,
        difficulty_tier=scenario.difficulty_tier if record.difficulty_tier == "unknown" else record.difficulty_tier,
    )
    if record.errored:
        return record.replace(fault=fault_of(record))
    record = record.replace(
        turn_2_previous_judge_label=record.turn_2_label,
        turn_2_judge=await _judge_turn(judge, record, scenario, 2),
        turn_2_code_signals=(
            code_signals(record.turn_2_response, scenario.answers)
            if record.turn_2_response is not None
            else record.turn_2_code_signals
        ),
    )
    if record.turn_3_repair_attempted:
        record = record.replace(
            turn_3_previous_judge_label=record.turn_3_label, turn_3_judge=await _judge_turn(judge, record, scenario, 3)
        )
    return record.replace(fault=classify(record))  # the new judge's label decides judge_unscored


async def _rejudged_lines(trials: Sequence[TrialRecord], known: Mapping, judge) -> list[tuple[str, str | None]]:
    """Each trial judged again: (its new record's line, the outcome its progress line shows)."""
    lines = []
    for trial in trials:
        record = await rejudge_record(trial, known[trial.scenario_id], judge)
        outcome = record.turn_2_label if record.watching is None else record.watching.outcome or "quiet"
        lines.append((record.to_line(), outcome))
    return lines


def _workers(judge, total: int) -> int:
    """How many processes judge the records: more than one only for an offline judge on a long run,
    on Linux (where a fork of this process is safe)."""
    from benchmark.judges.kinds import is_offline

    if not is_offline(getattr(judge, "family", None)) or total < PARALLEL_FROM or not sys.platform.startswith("linux"):
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


_SHARED: tuple = ()  # (trials, known, judge) in a worker: the parent's, inherited through the fork


def _share(*shared) -> None:
    global _SHARED
    _SHARED = shared


def _judge_chunk(start: int) -> list[tuple[str, str | None]]:
    trials, known, judge = _SHARED
    return asyncio.run(_rejudged_lines(trials[start : start + CHUNK], known, judge))


def _judged_in_workers(
    trials: Sequence[TrialRecord], known: Mapping, judge, workers: int
) -> Generator[tuple[str, str | None], None, None]:
    """`_rejudged_lines` of every trial, in order, from `workers` forked processes."""
    context = multiprocessing.get_context("fork")
    with context.Pool(workers, initializer=_share, initargs=(trials, known, judge)) as pool:
        for lines in pool.imap(_judge_chunk, range(0, len(trials), CHUNK)):
            yield from lines


def rescore(
    source: str | Path,
    *,
    judge_family: str,
    judge_model: str | None = None,
    scenarios: str | Path | None = None,
    output_dir: str | Path,
    base_url: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Re-judge every trial of `source` (run dir or transcripts file) into `output_dir`; return the summary.
    The new manifest names the judge as it ran: `judge_model` (the CLI passes the name a custom endpoint
    gives when `--judge-model` is not given) and `judge_endpoint`, the host of `base_url`."""
    from benchmark.report import REPORT_OUTPUTS, read_manifest, write_report

    progress = progress or (lambda text: print(text, file=sys.stderr, flush=True))
    source = Path(source)
    trial_set = load_trials(source)
    bank = load_bank(scenarios)
    known: dict[str, Scenario | ProactiveScenario] = {s.scenario_id: s for s in bank.scenarios}
    if any(t.watching is not None for t in trial_set.trials):  # proactive trials: the bank's proactive.json
        from core.proactive_scenario import PROACTIVE_FILE, load_proactive

        known.update((s.scenario_id, s) for s in load_proactive(Path(bank.source) / PROACTIVE_FILE))
    missing = sorted({t.scenario_id for t in trial_set.trials} - set(known))
    if missing:
        raise RescoreError(
            f"{transcripts_path(source)}: scenario ids not in the bank {bank.source}: " + ", ".join(missing)
        )
    out = Path(output_dir)
    if (out / "transcripts.jsonl").exists():
        raise RescoreError(f"{out / 'transcripts.jsonl'} already exists; choose a new --output-dir")
    out.mkdir(parents=True, exist_ok=True)
    refuse_links(out, ("manifest.json", "transcripts.jsonl", *REPORT_OUTPUTS))
    manifest = read_manifest(source) if source.is_dir() else {}

    async def run() -> dict:
        from benchmark.judges import open_judge
        from benchmark.judges.family import endpoint_host
        from benchmark.judges.kinds import is_offline

        async with open_judge(judge_family, judge_model, base_url=base_url) as judge:
            updated = dict(manifest)
            updated.update(
                {
                    "judge_family": getattr(judge, "family", judge_family),
                    "judge_model": getattr(judge, "name", judge_model),
                    # the new judge's endpoint by host only (null: the provider's own, or no model)
                    "judge_endpoint": None if is_offline(getattr(judge, "family", None)) else endpoint_host(base_url),
                    "judge_family_resolution": "explicit (rescore)",
                    "rescore": {
                        "source": str(transcripts_path(source)),
                        "bank": str(bank.source),
                        "previous_judge_family": manifest.get("judge_family"),
                        "previous_judge_model": manifest.get("judge_model"),
                        "previous_judge_endpoint": manifest.get("judge_endpoint"),
                        "timestamp_utc": datetime.now(UTC).isoformat(timespec="seconds"),
                    },
                }
            )
            name = getattr(judge, "name", None)
            if isinstance(manifest.get("prices"), dict) and name and not is_offline(getattr(judge, "family", None)):
                from benchmark.cost.prices import price_table  # the new judge's price beside the run's own

                updated["prices"] = {**manifest["prices"], **price_table().for_manifest([name])}
            try:
                from benchmark.judges.prompt import JUDGE_PROMPT_VERSION, judge_prompt_sha256

                updated["judge_prompt_version"] = JUDGE_PROMPT_VERSION
                updated["judge_prompt_sha256"] = judge_prompt_sha256()
            except ImportError:
                pass
            write_atomic(out / "manifest.json", json.dumps(updated, indent=2) + "\n", out)
            trials = trial_set.trials
            total = len(trials)
            workers = _workers(judge, total)
            judged = _judged_in_workers(trials, known, judge, workers) if workers > 1 else None
            try:
                with atomic_file(out / "transcripts.jsonl", out) as handle:  # renamed into place when all are done
                    for number, trial in enumerate(trials, start=1):
                        if judged is not None:
                            line, verdict = next(judged)
                        else:
                            [(line, verdict)] = await _rejudged_lines([trial], known, judge)
                        handle.write(line.encode("utf-8"))
                        progress(
                            f"rescored {number}/{total}: {trial.scenario_id} [{trial.condition}] trial {trial.trial}"
                            f" -> {verdict}"
                        )
            finally:
                if judged is not None:
                    judged.close()  # the workers end (also when a record could not be written)
            return updated

    asyncio.run(run())
    return write_report(out)


__all__ = ["RescoreError", "TranscriptError", "rejudge_record", "rescore"]
