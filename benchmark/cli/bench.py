"""`wearsim bench`: run the Turn 1/2/3 benchmark on a candidate model."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from benchmark.cli.bench_args import EPILOG, add_bench_arguments

if TYPE_CHECKING:  # the runner's imports wait until a run starts
    from benchmark.run.runner import RunCounts
    from benchmark.scoring.summary_view import RunSummary


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "bench",
        help="run the benchmark on a candidate model",
        usage="wearsim bench [OPTIONS]",
        description="Run Turn 1, Turn 2, judge, and Turn 3 on a miss, for every cell (condition x scenario x trial).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    stream_only = add_bench_arguments(p)
    p.set_defaults(run=run, stream_only=stream_only, config_file=None, settle=_config_reader(p))


def _config_reader(bench: argparse.ArgumentParser):
    """What `wearsim` calls after parsing the command line: `--config`'s flags read as `bench`'s defaults
    and the command line parsed again over them (benchmark/cli/run_config.py)."""

    def settle(top: argparse.ArgumentParser, argv: list[str], args: argparse.Namespace) -> argparse.Namespace:
        from benchmark.cli.run_config import with_config

        return with_config(bench, top, argv, args)

    return settle


def run(args) -> int:
    """The pre-flight checks and settings, each a named step that may stop the command; then the run and
    its report."""
    import time
    from datetime import datetime
    from pathlib import Path

    from benchmark.cli.bench_checks import (
        Stop,
        check_endpoints,
        check_keys,
        check_prices,
        check_run_flags,
        check_stream_flags,
        default_describer,
        load_prices,
        selected_bank,
        start_lines,
    )
    from benchmark.cli.bench_settings import (
        build_settings,
        chosen_conditions,
        chosen_sweeps,
        describer_endpoint,
        name_models,
        resolve_models,
        response_cache,
    )
    from candidates.ratelimit import configure

    try:
        bank = selected_bank(args)
        described = args.via == "stream" and args.describer is None
        if described:
            args.describer = default_describer(args)
        shard = check_run_flags(args)
        prices = load_prices(args)
        models = resolve_models(args)
        check_prices(args, models, prices)
        describer_url = describer_endpoint(args)
        check_keys(args, models, describer_url)  # keys first: a run that cannot start writes nothing
        check_endpoints(args, models, describer_url)  # then every endpoint named: one connection each
        if (named := name_models(args, models)) != models:  # a model the user did not name, as its endpoint does
            models = named
            check_prices(args, models, prices)  # priced by the name recorded, never at the family default's
        conditions = chosen_conditions(args, bank)
        sweeps = chosen_sweeps(args, models.model_id)
        check_stream_flags(args, bank, models.model_id)
        run_dir = Path(args.output_dir or f"runs/bench-{datetime.now().strftime('%Y%m%d-%H%M%S')}")
        cache = response_cache(args, models.model_id)
        settings = build_settings(args, bank, models, conditions, sweeps, shard, prices, describer_url, cache)
        prepared = _lock_run_dir(run_dir, bank, settings, args.resume)
    except Stop as stop:
        return stop.report()
    configure(models.limits)
    try:
        print(models.describe(), file=sys.stderr)
        for line in start_lines(args, models.model_id, described):
            print(line, file=sys.stderr)
        if note := _frames_note(settings, models.model_id):  # what reads drawn frames, when this describer cannot
            print(note, file=sys.stderr)
        started = time.monotonic()
        counts = _run_cells(bank, settings, run_dir, prepared, args.base_url)
        if counts.empty_shard:
            print(counts.empty_shard, file=sys.stderr)
            return 0
        _say_finished(args, counts, time.monotonic() - started, settings.cache_dir, run_dir)
        return _report(args, counts, run_dir)
    except Stop as stop:
        return stop.report()
    finally:
        prepared.close()


def _frames_note(settings, model_id: str) -> str | None:
    """When the run draws frames its describer cannot read (pictographs behind opencv): say so first."""
    from benchmark.report.frame_source import before_run_note

    stream, glasses = settings.stream, settings.glasses
    if stream is None or glasses is None:
        return None
    drawn = "pictograph" if stream.pictograph_frames else "synthetic" if glasses.synthetic_frames else None
    return before_run_note(glasses.hello.describer, drawn, model_id) if drawn else None


def _lock_run_dir(run_dir, bank, settings, resume: bool):
    """The run dir locked and checked before any model starts; nothing is written yet."""
    from benchmark.cli.bench_checks import Stop
    from benchmark.run.errors import RunDirError
    from benchmark.run.manifest import build_manifest
    from benchmark.run.run_dir import open_run_dir

    try:
        return open_run_dir(run_dir, build_manifest(bank, settings), resume=resume)
    except RunDirError as exc:
        raise Stop(str(exc)) from None


def _run_cells(bank, settings, run_dir, prepared, base_url: str | None) -> RunCounts:
    """Every cell of the run, until done or stopped (SIGTERM or Ctrl-C: the finished cells are kept);
    the counts `run_bench` returns. A run that stops early raises `Stop` with its exit status."""
    import asyncio
    import signal

    from benchmark.cli.bench_checks import Stop
    from benchmark.cli.bench_conversations import conversations
    from benchmark.run.errors import ModelMissing, RunDirError, TranscriptWriteError
    from benchmark.run.runner import run_bench

    stopped_by: list[int] = []

    async def bench() -> RunCounts:
        loop = asyncio.get_running_loop()
        main = asyncio.current_task()
        assert main is not None  # bench() runs as asyncio.run's task

        def stop(signum: int) -> None:
            if not stopped_by:
                stopped_by.append(signum)
                print(f"\n{signal.Signals(signum).name}: stopping (finished cells are kept)", file=sys.stderr)
                main.cancel()

        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop, signum)
        try:
            async with conversations(settings, base_url, run_dir) as factory:
                return await run_bench(bank, settings, run_dir, factory, prepared=prepared)
        finally:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)

    try:
        return asyncio.run(bench())
    except asyncio.CancelledError:
        if not stopped_by:
            raise
        signum = stopped_by[0]
        raise Stop(
            f"stopped by {signal.Signals(signum).name}: the finished cells are in "
            f"{run_dir / 'transcripts.jsonl'}; rerun the same command with --resume to finish",
            128 + signum,
            bare=True,
        ) from None
    except TranscriptWriteError as exc:
        raise Stop(str(exc), 1) from None
    except ModelMissing as exc:
        raise Stop(str(exc)) from None
    except (RunDirError, KeyError) as exc:
        raise Stop(str(exc.args[0] if isinstance(exc, KeyError) else exc)) from None


def _say_finished(args, counts: RunCounts, seconds: float, cache_dir: str | None, run_dir) -> None:
    """The run's closing lines on stderr: cells and outcomes, and the response cache's hits."""
    outcome = ", ".join(f"{counts.outcomes.get(k, 0)} {k}" for k in ("pass", "miss", "unscored", "error"))
    skipped = f" ({counts.skipped} finished earlier, skipped)" if counts.skipped else ""
    judged = (
        "proactive (pass: the event caught on time, or a quiet control left quiet)"
        if args.subset == "proactive"
        else "Turn 2"
    )
    print(f"finished in {seconds:.0f} s: {counts.ran} cells ran{skipped}; {judged}: {outcome}", file=sys.stderr)
    if cache_dir:
        print(
            f"response cache {cache_dir}: {counts.cache_hits or 0} replies from the cache, "
            f"{counts.cache_misses or 0} requested (per cell: {run_dir / 'cache_log.jsonl'})",
            file=sys.stderr,
        )
    if counts.budget_line:
        print(counts.budget_line, file=sys.stderr)


def _report(args, counts: RunCounts, run_dir) -> int:
    """The report written, its headline printed; the exit status (3: too many cells failed, 4: stopped
    on --budget)."""
    from benchmark.judges.kinds import is_offline
    from benchmark.report import write_report
    from benchmark.report.cost import cost_line
    from benchmark.report.faults import fault_lead
    from benchmark.report.findings import headline, is_measurement
    from benchmark.report.proactive_findings import is_proactive, proactive_headline
    from benchmark.scoring.blind import blind_line
    from benchmark.scoring.summary_view import RunSummary

    summary = RunSummary.from_json(write_report(run_dir))
    print(fault_lead(summary.faults), file=sys.stderr)  # turns OK over every planned cell, and each fault
    if is_proactive(summary):
        print(proactive_headline(summary))
        print(f"report: {run_dir / 'findings.md'}")
        return _error_rate_status(summary, run_dir, args.max_error_rate)
    print(headline(summary))
    if blind := blind_line(summary.blind_camera):
        print(blind)
    print(cost_line(summary))
    print(f"report: {run_dir / 'findings.md'}")
    if not is_measurement(summary) and is_offline(summary.manifest.judge_family):
        print(
            f"no accuracy from this run (findings.md says why); with a model judge: wearsim rescore {run_dir} "
            f"--judge-family openai --output-dir {run_dir}-rescored"
        )
    status = _error_rate_status(summary, run_dir, args.max_error_rate)
    return 4 if status == 0 and (counts.budget or {}).get("stopped_on_budget") else status


def _error_rate_status(summary: RunSummary, run_dir, max_rate: float) -> int:
    """3, with one line saying so, when more than `max_rate` of the planned cells failed by a fault of the
    API's or ours (`benchmark.faults.COUNTED`; a model's miss and an unscored judgement never count)."""
    faults = summary.faults
    if faults:
        failed, cells = faults.counted, faults.planned
    else:  # a summary without fault counts: the errored cells over those recorded
        failed, cells = summary.counts.errored, summary.counts.trials
    if not cells or failed / cells <= max_rate:
        return 0
    from benchmark.faults import COUNTED, fault_of
    from benchmark.scoring import load_trials

    failures = [t for t in load_trials(run_dir).trials if fault_of(t) in COUNTED]
    kinds = ", ".join(
        f"{n} {category}" for category, n in (faults.by_fault if faults else {}).items() if category in COUNTED
    )
    first = failures[0].error if failures else None
    first = f"; first error: {' '.join(first.split())[:160]}" if first else ""
    print(
        f"error: the run failed: {failed} of {cells} cells errored ({100 * failed / cells:.1f}%, more than "
        f"--max-error-rate {100 * max_rate:g}%)" + (f" [{kinds}]" if kinds else "") + first,
        file=sys.stderr,
    )
    return 3
