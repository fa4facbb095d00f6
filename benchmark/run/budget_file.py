"""The run's `--budget`: opened from what the run dir spent before, and its state in `budget.json`."""

from __future__ import annotations

import json
from pathlib import Path

from benchmark.cost.budget import BUDGET_FILE, Budget
from benchmark.cost.prices import price_table
from benchmark.run.outputs import TRANSCRIPTS
from benchmark.run.settings import RunSettings
from core.safe_files import write_atomic


def open_budget(settings: RunSettings, run_dir: Path) -> Budget | None:
    """The run's budget (`--budget`), starting from what the run dir spent before; without one, a
    budget.json an earlier run left is removed, so no report reads a stop that no longer holds."""
    if settings.budget_usd is None:
        (run_dir / BUDGET_FILE).unlink(missing_ok=True)
        return None
    from benchmark.cost.budget import spent_before
    from benchmark.scoring.trials import load_trials

    table = settings.prices or price_table()
    transcripts = run_dir / TRANSCRIPTS
    records = load_trials(transcripts).trials if transcripts.exists() and transcripts.stat().st_size else ()
    return Budget(settings.budget_usd, table, spent_before(run_dir, table, records))


def write_budget(run_dir: Path, budget: Budget) -> None:
    write_atomic(run_dir / BUDGET_FILE, json.dumps(budget.state(), indent=2) + "\n", run_dir)
