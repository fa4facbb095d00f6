"""How long the lexical judge takes to rescore 3,300 trial records (issue 56: goal under 5 s).

Builds a transcripts file of N records over the shipped bank: each record's Turn 2 reply is a
reply of the judge's development set (`tests/fixtures/judging/development/`), on its own or,
with `--joined K`, K replies of the same scenario run together (longer replies, as capable models
write); every fourth record also carries a Turn 3 repair and its reply. Each message holds the
scenario's camera block, as a record of a real run does. Then it times

- `judge`: the lexical judge's `label_now` on every Turn 2 (and Turn 3) case plus the code
  signals stored with each record: the judging work of a rescore, nothing else;
- `rescore`: `benchmark.rescore.rescore` end to end (reading the records, judging, writing the new
  run dir and its report), in a temporary directory; a long run's records are judged in worker
  processes (`benchmark.rescore.PARALLEL_FROM`), one a core,

best of `--repeat` runs each, in wall-clock and in CPU seconds (the machine is shared: CPU time is
what other processes inflate least; the rescore's CPU seconds count its worker processes too), and
writes `benchmarks/results/lexical_rescore.json`.

    .venv/bin/python benchmarks/lexical_rescore.py --records 3300 --joined 8
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# WEARSIM_TREE: time another checkout of the code (e.g. the judge before a change) on the same records
sys.path.insert(0, os.environ.get("WEARSIM_TREE", str(ROOT)))

from benchmark.judges.lexical import LexicalJudge  # noqa: E402
from benchmark.judges.signals import code_signals  # noqa: E402
from benchmark.scoring.trials import load_trials  # noqa: E402
from core.records import build_user_turn  # noqa: E402
from core.scenario import load_bank  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
DEVELOPMENT_DIR = ROOT / "tests" / "fixtures" / "judging" / "development"


def build_records(count: int, joined: int) -> list[dict]:
    bank = load_bank()
    replies = [
        json.loads(line)
        for half in ("tuning", "locked")
        for line in (DEVELOPMENT_DIR / f"{half}.jsonl").read_text(encoding="utf-8").splitlines()
        if line
    ]
    by_scenario: dict[str, list[str]] = {}
    for reply in replies:
        by_scenario.setdefault(reply["bank_scenario"], []).append(reply["response"])
    records = []
    for number in range(count):
        reply = replies[number % len(replies)]
        scenario = bank.get(reply["bank_scenario"])
        pool = by_scenario[scenario.scenario_id]
        start = pool.index(reply["response"])
        # a record number at the end keeps every reply distinct, as in a real run (no cached signals reused)
        text = " ".join(pool[(start + k) % len(pool)] for k in range(joined)) + f" #{number}"
        turn_1 = build_user_turn(scenario.turn_1_image, scenario.turn_1_user)
        turn_2 = build_user_turn(scenario.turn_2_image, scenario.turn_2_user)
        messages = [
            {"role": "user", "text": turn_1},
            {"role": "assistant", "text": "Turn one answer."},
            {"role": "user", "text": turn_2},
            {"role": "assistant", "text": text},
        ]
        repair = number % 4 == 3
        if repair:
            messages.append({"role": "user", "text": scenario.turn_3_repair_anchor})
        records.append(
            {
                "schema_version": 1,
                "scenario_id": scenario.scenario_id,
                "condition": "baseline",
                "trial": number,
                "target_context": scenario.target_context,
                "cue_type": scenario.cue_type,
                "difficulty_tier": scenario.difficulty_tier,
                "activity_domain": scenario.activity_domain,
                "via": "direct",
                "messages": messages,
                "turn_1_response": "Turn one answer.",
                "turn_2_response": text,
                "turn_2_judge_label": "current",
                "turn_2_judge_rationale": "recorded",
                "turn_2_passed": False,
                "turn_3_repair_attempted": repair,
                "turn_3_response": f"{pool[(start + 1) % len(pool)]} #{number}" if repair else None,
                "turn_3_judge_label": "current" if repair else None,
                "turn_3_repair_passed": None,
                "turns": [],
                "error": None,
            }
        )
    return records


def time_judge(path: Path, profile: bool) -> tuple[tuple[float, float], str]:
    bank = load_bank()
    known = {s.scenario_id: s for s in bank.scenarios}
    trials = load_trials(path).trials
    judge = LexicalJudge()
    profiler = cProfile.Profile() if profile else None
    started, cpu = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    for trial in trials:
        scenario = known[trial.scenario_id]
        judge.label_now(trial.judge_case(scenario, 2))
        code_signals(trial.turn_2_response, scenario.answers)
        if trial.turn_3_repair_attempted:
            judge.label_now(trial.judge_case(scenario, 3))
    if profiler:
        profiler.disable()
    elapsed = (time.perf_counter() - started, time.process_time() - cpu)
    report = ""
    if profiler:
        buffer = io.StringIO()
        pstats.Stats(profiler, stream=buffer).sort_stats("cumulative").print_stats(25)
        report = buffer.getvalue()
    return elapsed, report


def cpu_seconds() -> float:
    """CPU seconds of this process and of the child processes it has waited for (the rescore's workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def time_rescore(path: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one rescore of the records into a new run dir."""
    from benchmark.rescore import rescore

    with tempfile.TemporaryDirectory() as scratch:
        started, cpu = time.perf_counter(), cpu_seconds()
        rescore(path, judge_family="lexical", output_dir=Path(scratch) / "rescored", progress=lambda _text: None)
        return time.perf_counter() - started, cpu_seconds() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Example: .venv/bin/python benchmarks/lexical_rescore.py --records 3300",
    )
    parser.add_argument("--records", type=int, default=3300)
    parser.add_argument("--joined", type=int, default=8, help="development replies run together per record")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="print the judge's 25 costliest calls")
    parser.add_argument("--label", default="", help="a note stored with the figures (e.g. before/after)")
    parser.add_argument("--output", type=Path, default=RESULTS / "lexical_rescore.json")
    args = parser.parse_args(argv)
    records = build_records(args.records, args.joined)
    words = sum(len(r["turn_2_response"].split()) for r in records) / len(records)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "transcripts.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        judge_times = [time_judge(path, False)[0] for _ in range(args.repeat)]
        rescore_times = [time_rescore(path) for _ in range(args.repeat)]
        if args.profile:
            print(time_judge(path, True)[1])
    repairs = sum(r["turn_3_repair_attempted"] for r in records)
    result = {
        "records": len(records),
        "turn_3_replies": repairs,
        "mean_turn_2_words": round(words, 1),
        "joined": args.joined,
        "judge_seconds": round(min(t[0] for t in judge_times), 2),
        "judge_cpu_seconds": round(min(t[1] for t in judge_times), 2),
        "rescore_seconds": round(min(t[0] for t in rescore_times), 2),
        "rescore_cpu_seconds": round(min(t[1] for t in rescore_times), 2),
        "repeat": args.repeat,
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "label": args.label,
        "tree": os.environ.get("WEARSIM_TREE", "this checkout"),
    }
    print(
        f"{len(records)} records ({repairs} with a Turn 3 reply, Turn 2 replies of {words:.0f} words on "
        f"average), best of {args.repeat}: judge {result['judge_seconds']:.2f} s "
        f"({result['judge_cpu_seconds']:.2f} s CPU), rescore end to end {result['rescore_seconds']:.2f} s "
        f"({result['rescore_cpu_seconds']:.2f} s CPU)"
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
