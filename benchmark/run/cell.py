"""One cell of a run: which cells a run plans, and one cell's conversation played, judged and turned
into the record written for it (an exception becomes an errored record; a missing model stops the run)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchmark.conversations.proactive_trial import run_proactive_trial
from benchmark.conversations.protocol import Conversation, run_trial
from benchmark.faults import classify, with_empty_reply
from benchmark.run.errors import ModelMissing
from benchmark.run.settings import RunSettings, sweep_points
from benchmark.shards import in_shard, shard_text
from core.judge import Judge
from core.proactive_scenario import ProactiveScenario
from core.records import SweepPoint, TrialRecord
from core.scenario import Bank, Condition, Scenario

if TYPE_CHECKING:
    from candidates.cache import CellCache

# (scenario, condition, the cell's place on the stream's sweep axes, trial, the cell's side of the response
# cache) -> the `Conversation` of one trial; `wearsim bench` makes it
ConversationFactory = Callable[[Scenario, Condition, SweepPoint, int, "CellCache"], Conversation]
# (role, model id, usage, served from the cache): each reply and transcription as it arrives
Meter = Callable[..., None]


@dataclass(frozen=True, kw_only=True)
class Cell:
    """One (condition, scenario, trial, sweep point) of a run."""

    condition: str
    scenario: Scenario
    trial: int
    point: SweepPoint

    @property
    def key(self) -> tuple:
        """As a finished record names it (`TrialRecord`: condition, scenario id, trial, sweep)."""
        return (self.condition, self.scenario.scenario_id, self.trial, self.point)


@dataclass(frozen=True, kw_only=True)
class CellPlan:
    """The cells of a run: how many the whole run has, this run's share of them (`--shard`), and those of
    the share not finished before."""

    every: int
    planned: int
    to_run: tuple[Cell, ...]

    def describe(self, run_dir, shard: tuple[int, int] | None) -> str:
        share = "" if shard is None else f"; shard {shard_text(shard)}: {self.planned} cells are its share"
        return (
            f"{len(self.to_run)} cells to run ({self.planned - len(self.to_run)} already finished{share}) -> {run_dir}"
        )


def plan_cells(bank: Bank, settings: RunSettings, done: set) -> CellPlan:
    """Every cell of the run in order (conditions x scenarios x trials x sweep points), the shard's share of
    them, and those of the share not in `done` (the finished cells' keys)."""
    points = sweep_points(settings.stream)
    every = [
        Cell(condition=c, scenario=s, trial=t, point=p)
        for c in settings.conditions
        for s in bank.scenarios
        for t in range(settings.trials)
        for p in points
    ]
    planned = [
        cell
        for cell in every
        if in_shard((cell.condition, cell.scenario.scenario_id, cell.trial, *cell.point), settings.shard)
    ]
    return CellPlan(
        every=len(every), planned=len(planned), to_run=tuple(cell for cell in planned if cell.key not in done)
    )


@dataclass(frozen=True, kw_only=True)
class Judges:
    """The judge of every Turn 2 and 3, and the optional ranking judge."""

    judge: Judge
    ranking: Judge | None = None

    def for_cell(self, cache: CellCache) -> Judges:
        """The judges asking for one cell: a judge model behind the response cache logs to the cell."""
        return Judges(judge=_judge_for_cell(self.judge, cache), ranking=_judge_for_cell(self.ranking, cache))


def _judge_for_cell(judge, cache: CellCache):
    bind = getattr(judge, "for_cell", None)  # an LLM judge; an offline judge asks no model
    return judge if bind is None else bind(cache)


async def play_cell(
    cell: Cell,
    bank: Bank,
    settings: RunSettings,
    conversation: ConversationFactory,
    judges: Judges,
    meter: Meter,
    cache: CellCache,
) -> TrialRecord:
    """The cell's trial through `conversation`, judged, with the cell's facts, wall time and fault category."""
    scenario, condition = cell.scenario, bank.condition(cell.condition)
    facts = dict(
        scenario_id=scenario.scenario_id,
        condition=cell.condition,
        trial=cell.trial,
        **cell.point._asdict(),
        via=settings.via,
        candidate_model=settings.candidate.model_id,
        system_prompt=condition.system_prompt,
    )
    judges = judges.for_cell(cache)
    started = time.monotonic()
    talk = None
    try:
        talk = conversation(scenario, condition, cell.point, cell.trial, cache)
        if isinstance(scenario, ProactiveScenario):
            record = await run_proactive_trial(talk, scenario, judges.judge, meter)
        else:
            record = await run_trial(talk, scenario, judges.judge, judges.ranking, meter)
        record = record.replace(**facts)
    except Exception as exc:  # recorded, excluded from metrics, counted
        if missing := ModelMissing.from_error(exc):
            raise missing from None
        record = TrialRecord(
            target_context=scenario.target_context,
            cue_type=scenario.cue_type,
            difficulty_tier=scenario.difficulty_tier,
            activity_domain=scenario.activity_domain,
            subset=scenario.subset,
            error=f"{type(exc).__name__}: {exc}"[:500],
            **facts,
        )
    finally:
        if talk is not None:
            await talk.aclose()
    record = with_empty_reply(record.replace(wall_s=round(time.monotonic() - started, 3)))
    return record.replace(fault=classify(record))
