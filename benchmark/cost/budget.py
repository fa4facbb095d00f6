"""`wearsim bench --budget USD`: spend added up as replies arrive, and the
rule that starts no new cell once it is passed.

The budget is the run dir's: a resumed run starts from what the run spent
before (`budget.json`, else the recorded replies priced again). Candidate
and judge replies, and a realtime API's input transcriptions (billed apart
from its replies, priced by the transcription model's entry), count as they
arrive (`protocol.run_trial` reports each);
replies served from the response cache cost nothing again. Once the spend
is above the budget, or a reply's cost cannot be known (a kind of token
with no price), no new cell starts; cells already running finish, so with
`--concurrency N` up to N cells' spend may follow. `budget.json` in the run
dir says what happened, for the report (`BUDGET_FILE`):

    {"budget_usd": 1.0, "spent_usd": 1.03, "stopped_on_budget": true,
     "cells_remaining": 7, "unknown": []}
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import cast

from benchmark.cost.prices import PriceTable, Spend

BUDGET_FILE = "budget.json"
MAX_BUDGET_FILE_BYTES = 100_000


def read_budget(run_dir: Path) -> dict | None:
    """The run dir's budget.json when it is there and reads as one, else None (bounded read)."""
    path = Path(run_dir) / BUDGET_FILE
    try:
        if path.is_symlink() or not path.is_file():
            return None
        with path.open("rb") as handle:
            data = json.loads(handle.read(MAX_BUDGET_FILE_BYTES))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    budget, spent, remaining = data.get("budget_usd"), data.get("spent_usd"), data.get("cells_remaining")
    if (
        not all(_amount(v) for v in (budget, spent))
        or isinstance(remaining, bool)
        or not isinstance(remaining, int)
        or remaining < 0
    ):
        return None
    unknown = cast(list, data.get("unknown")) if isinstance(data.get("unknown"), list) else []
    return {
        "budget_usd": float(cast(float, budget)),
        "spent_usd": float(cast(float, spent)),  # checked above
        "stopped_on_budget": data.get("stopped_on_budget") is True,
        "cells_remaining": remaining,
        "unknown": [str(u)[:300] for u in unknown[:20]],
    }


def _amount(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and value >= 0


class Budget:
    """The spend of one run against its budget."""

    def __init__(self, limit_usd: float, table: PriceTable, spent_before: float = 0.0):
        self.limit = limit_usd
        self.spend = Spend(table=table, usd=spent_before)
        self.cells_remaining = 0

    def add(self, model: str, usage, cached: bool = False) -> None:
        self.spend.add(model, usage, cached)

    @property
    def passed(self) -> bool:
        """No new cell may start: the spend is over the budget, or a cost is unknown."""
        return self.spend.usd > self.limit or bool(self.spend.unknown)

    def skip(self) -> None:
        self.cells_remaining += 1

    def state(self) -> dict:
        return {
            "budget_usd": self.limit,
            "spent_usd": round(self.spend.usd, 9),
            "stopped_on_budget": self.cells_remaining > 0,
            "cells_remaining": self.cells_remaining,
            "unknown": list(self.spend.unknown),
        }

    def describe(self) -> str:
        """One line for the terminal."""
        if self.cells_remaining == 0:
            return f"spend ${self.spend.usd:.4f} of the ${self.limit:g} budget"
        if self.spend.unknown:  # no budget is kept without knowing the cost: a larger one changes nothing
            return (
                f"stopped on the budget: the cost of a reply is unknown ({'; '.join(self.spend.unknown)}); "
                f"{self.cells_remaining} cells remain: change what the reason says, then rerun the same "
                "command to finish them (a larger --budget alone does not help)"
            )
        return (
            f"stopped on the budget: ${self.spend.usd:.4f} spent of the ${self.limit:g} budget; "
            f"{self.cells_remaining} cells remain (rerun the same command with a larger --budget to finish them)"
        )


def spent_before(run_dir: Path, table: PriceTable, records) -> float:
    """What the run dir spent in earlier runs: its budget.json, else its recorded replies priced
    (replies from the response cache left out; an unknown cost counts 0 here, and a budget run
    refuses models without a price before it starts)."""
    state = read_budget(run_dir)
    if state is not None:
        return state["spent_usd"]
    spend = Spend(table=table)
    for record in records:
        for turn in record.turns:
            spend.add(record.candidate_model or turn.reply.model, turn.reply.usage, turn.reply.cached)
            if turn.reply.transcription is not None:  # the input transcription, billed apart
                spend.add(turn.reply.transcription.model, turn.reply.transcription, turn.reply.cached)
        for verdict in (record.turn_2_judge, record.turn_2_ranking_judge, record.turn_3_judge):
            if verdict is not None and verdict.usage is not None:
                spend.add(verdict.judge, verdict.usage, verdict.cached)
    return spend.usd
