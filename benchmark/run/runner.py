"""`run_bench`: every unfinished cell of a run, under a semaphore, each record written as it finishes.

With `--shard K/N` only the cells of one fixed share are planned and run (`benchmark/shards.py`);
`wearsim merge` joins the shards' run dirs. Reports are written by the caller (`write_report`, by the
report worker started here as the cells start).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

from benchmark.cost.budget import Budget
from benchmark.kept_media import MediaKeeper
from benchmark.run.budget_file import open_budget, write_budget
from benchmark.run.cell import Cell, CellPlan, ConversationFactory, Judges, plan_cells, play_cell
from benchmark.run.manifest import build_manifest
from benchmark.run.outputs import CACHE_LOG, TRANSCRIPTS
from benchmark.run.progress import Progress
from benchmark.run.reply_audio import save_reply_audio
from benchmark.run.run_dir import PreparedRun, open_run_dir
from benchmark.run.settings import RunSettings
from benchmark.run.writers import CacheLogWriter, TranscriptWriter
from benchmark.shards import empty_shard_line
from core.records import TrialRecord
from core.scenario import Bank


@dataclass(frozen=True, kw_only=True)
class RunCounts:
    """What `run_bench` did: the cells it ran and skipped (finished earlier), their outcomes, and what the
    budget, the response cache and an empty shard have to say."""

    ran: int = 0
    skipped: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)  # pass, miss, unscored, error -> cells
    empty_shard: str | None = None  # the line saying this shard of a small run holds no cell
    budget: dict | None = None  # `Budget.state()`, with `--budget`
    budget_line: str | None = None
    cache_hits: int | None = None  # with the response cache: replies it served, and replies requested
    cache_misses: int | None = None


async def run_bench(
    bank: Bank,
    settings: RunSettings,
    run_dir: Path,
    conversation: ConversationFactory,
    *,
    resume: bool = False,
    prepared: PreparedRun | None = None,
) -> RunCounts:
    """Run every unfinished cell, each trial through `conversation(scenario, condition, point, trial,
    cell_cache)`; return counts.

    `prepared` is the run dir as `open_run_dir` locked and checked it (the
    caller does that before it starts a candidate, so a refused dir costs
    nothing); without it the dir is opened, and closed on return, here.
    Cancelling the task (SIGTERM, Ctrl-C) stops every cell in flight; the
    trials already written stay in transcripts.jsonl.
    """
    for name in settings.conditions:
        bank.condition(name)  # unknown names fail before anything starts
    own = prepared is None
    opened = prepared if prepared is not None else open_run_dir(run_dir, build_manifest(bank, settings), resume)
    try:
        opened.start()
        plan = plan_cells(bank, settings, opened.done)
        print(plan.describe(run_dir, settings.shard), file=sys.stderr)
        budget = open_budget(settings, run_dir)
        nothing = _nothing_to_run(plan, settings, run_dir, budget)
        if nothing is not None:
            return nothing
        return await _run_cells(bank, settings, run_dir, conversation, plan, budget)
    finally:
        if own:
            opened.close()


def _nothing_to_run(plan: CellPlan, settings: RunSettings, run_dir: Path, budget: Budget | None) -> RunCounts | None:
    """The counts of a run with no cell left to run (None: some are)."""
    if not plan.planned and settings.shard is not None:  # a small run split many ways: this share is empty
        return RunCounts(empty_shard=empty_shard_line(settings.shard, plan.every))
    if plan.to_run:
        return None
    if budget is None:
        return RunCounts(skipped=plan.planned)
    write_budget(run_dir, budget)
    return RunCounts(skipped=plan.planned, budget=budget.state(), budget_line=budget.describe())


async def _run_cells(
    bank: Bank,
    settings: RunSettings,
    run_dir: Path,
    conversation: ConversationFactory,
    plan: CellPlan,
    budget: Budget | None,
) -> RunCounts:
    from benchmark.judges import open_judge
    from benchmark.report import start_worker
    from candidates.cache import ResponseCache

    start_worker(run_dir)  # the report's imports happen in a child process while the cells run
    cache = ResponseCache(settings.cache_dir) if settings.cache_dir else None
    judging = settings.judge
    async with contextlib.AsyncExitStack() as opened:
        run = CellRun(bank, settings, run_dir, conversation, budget, len(plan.to_run), logs_cache=cache is not None)
        opened.callback(run.close)  # the writers close even when a judge cannot be opened
        judge = await opened.enter_async_context(
            open_judge(judging.family, judging.model, base_url=judging.base_url, cache=cache)
        )
        ranking = (
            await opened.enter_async_context(
                open_judge(
                    judging.ranking_family,
                    judging.ranking_model,
                    base_url=judging.ranking_base_url,
                    cache=cache,
                    role="ranking judge",
                )
            )
            if judging.ranking_family
            else None
        )
        ticking = asyncio.create_task(run.tick())
        try:
            await run.every_cell(plan.to_run, Judges(judge=judge, ranking=ranking))
        finally:
            ticking.cancel()
    if cache is not None:
        cache.close()
    return RunCounts(
        ran=run.progress.done,
        skipped=plan.planned - len(plan.to_run),
        outcomes=dict(run.progress.counts),
        budget=budget.state() if budget is not None else None,
        budget_line=budget.describe() if budget is not None else None,
        cache_hits=run.cache_totals["from_cache"] if cache is not None else None,
        cache_misses=run.cache_totals["requested"] if cache is not None else None,
    )


class CellRun:
    """The cells of one run as they go: the run dir's writers, the progress line, the budget and the
    response cache's per-cell log."""

    def __init__(
        self,
        bank: Bank,
        settings: RunSettings,
        run_dir: Path,
        conversation: ConversationFactory,
        budget: Budget | None,
        cells: int,
        *,
        logs_cache: bool,
    ):
        self.bank, self.settings, self.run_dir, self.conversation = bank, settings, run_dir, conversation
        self.budget = budget
        self.writer = TranscriptWriter(run_dir / TRANSCRIPTS)
        self.progress = Progress(cells)
        self.semaphore = asyncio.Semaphore(max(1, settings.concurrency))
        self.keeper = MediaKeeper(run_dir, keep_frames=settings.glasses.keep_frames) if settings.glasses else None
        self.cache_log = CacheLogWriter(run_dir / CACHE_LOG) if logs_cache else None
        self.cache_totals = {"from_cache": 0, "requested": 0}

    async def tick(self) -> None:
        """The progress line moves while slow cells run."""
        while True:
            await asyncio.sleep(1.0)
            self.progress.tick()

    def meter(self, role: str, model: str, usage, cached: bool) -> None:
        """Each reply (and transcription) as it arrives, counted against the budget."""
        if self.budget is not None:
            self.budget.add(self.settings.candidate.model_id if role == "candidate" else model, usage, cached)

    async def every_cell(self, cells: tuple[Cell, ...], judges: Judges) -> None:
        """Run the cells at once (at most `concurrency` in flight); the first cell that raises (only writing
        the transcript or a missing model can) cancels the others."""
        tasks = [asyncio.create_task(self.run_cell(cell, judges)) for cell in cells]
        try:
            finished, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in finished:
                if (failure := task.exception()) is not None:
                    raise failure
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def run_cell(self, cell: Cell, judges: Judges) -> None:
        from candidates.cache import CellCache

        cache = CellCache(trial=cell.trial)  # the cache keys candidate replies by trial, and logs the cell's replies
        async with self.semaphore:
            if self.budget is not None and self.budget.passed:  # no new cell once the budget is passed
                self.budget.skip()
                self.progress.skip()
                return
            record = await play_cell(cell, self.bank, self.settings, self.conversation, judges, self.meter, cache)
            record = await self._keep_media(record)
        await self.writer.append(record)
        if self.budget is not None:
            write_budget(self.run_dir, self.budget)
        if self.cache_log is not None and cache.events:
            self.cache_log.append(cell.condition, cell.scenario.scenario_id, cell.trial, cell.point, cache.summary())
            for _, hit in cache.events:
                self.cache_totals["from_cache" if hit else "requested"] += 1
        self.progress.update(record)

    async def _keep_media(self, record: TrialRecord) -> TrialRecord:
        """Spoken replies saved as WAVs, and on a stream run the frames and audio the viewer shows."""
        if any(turn.reply.audio for turn in record.turns) or (record.watching is not None and record.watching.audio):
            record = await asyncio.to_thread(save_reply_audio, self.run_dir, record)
        if self.keeper is not None and (record.turns or record.watching is not None):
            record = await asyncio.to_thread(self.keeper.keep, record)
        return record

    def close(self) -> None:
        self.progress.close()
        self.writer.close()
        if self.budget is not None:
            write_budget(self.run_dir, self.budget)
        if self.cache_log is not None:
            self.cache_log.close()
