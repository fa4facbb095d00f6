"""Sharded runs: `wearsim bench --shard K/N` runs a fixed 1/N of the cells.

A cell belongs to shard `1 + h mod N`, `h` being the first 64 bits of the
SHA-256 of its key (`TrialRecord.cell`: scenario id, condition, trial, then
the sweep axes that are set), so the split is the same on every machine, on every resume, and
whatever order the cells are run in. `planned_cells(manifest)` lists the
cells a run dir planned (its shard's only, for a shard), which the reports
count as the denominator of "turns OK" and of the headline.
"""

from __future__ import annotations

import hashlib
import json


class ShardError(ValueError):
    """A --shard value that cannot be read."""


def parse_shard(text: str) -> tuple[int, int]:
    """ "K/N" -> (K, N), with 1 <= K <= N."""
    index, _, count = (text or "").partition("/")
    try:
        k, n = int(index), int(count)
    except ValueError:
        raise ShardError(
            f"--shard takes K/N, e.g. 1/4 (this machine runs the first of four shares); got {text!r}"
        ) from None
    if n < 1 or not 1 <= k <= n:
        raise ShardError(f"--shard K/N needs 1 <= K <= N; got {text!r}")
    return k, n


def shard_text(shard: tuple[int, int] | None) -> str | None:
    return None if shard is None else f"{shard[0]}/{shard[1]}"


def empty_shard_line(shard: tuple[int, int], cells: int) -> str:
    """What `wearsim bench` says of a shard that holds no cell (a small run split many ways: the hash
    split is even only over many cells). It exits 0: the dir is a valid shard that `merge` takes."""
    return (
        f"shard {shard_text(shard)} holds none of this run's {cells} cells: nothing to run, no report "
        f"written; give this dir to `wearsim merge` with the other shards as usual (it adds no record)"
    )


def cell_key(cell: tuple) -> tuple:
    """A runner's cell (condition, scenario id, trial, sweep axes...) as `TrialRecord.cell` spells it:
    (scenario id, condition, trial) and the axes that are set, so a record is placed in the same shard
    as the cell it came from, and an axis a run does not sweep moves no cell to another shard."""
    condition, scenario_id, trial, *axes = cell
    return (scenario_id, condition, trial, *(axis for axis in axes if axis is not None))


def shard_of(key: tuple, count: int) -> int:
    """The shard (1..count) of a cell, given as `TrialRecord.cell` (or `cell_key`) spells it."""
    digest = hashlib.sha256(json.dumps(list(key), separators=(",", ":")).encode()).digest()
    return 1 + int.from_bytes(digest[:8], "big") % count


def in_shard(cell: tuple, shard: tuple[int, int] | None) -> bool:
    """Whether a runner's cell (condition, scenario id, trial, axes...) is in `shard` (None: every one)."""
    return shard is None or shard_of(cell_key(cell), shard[1]) == shard[0]


def manifest_shard(manifest: dict) -> tuple[int, int] | None:
    """The shard a run dir's manifest recorded (None: the whole run, or unreadable)."""
    value = manifest.get("shard")
    if not isinstance(value, str):
        return None
    try:
        return parse_shard(value)
    except ShardError:
        return None


def planned_cells(manifest: dict) -> list[tuple] | None:
    """Every cell the manifest planned, (condition, scenario id, trial, gap, policy, profile, proactive
    strategy), in run order,
    its shard's only; None when the manifest does not say (a transcript from elsewhere)."""
    conditions, ids, trials = manifest.get("conditions"), manifest.get("scenario_ids"), manifest.get("trials")
    if not (
        isinstance(conditions, list)
        and isinstance(ids, list)
        and isinstance(trials, int)
        and not isinstance(trials, bool)
    ):
        return None
    gaps = manifest.get("staleness_ms") or [None]
    policies = manifest.get("frame_policies") or [None]
    profiles = manifest.get("impairments") or [None]
    strategies = manifest.get("proactive") or [None]
    shard = manifest_shard(manifest)
    return [
        cell
        for cell in (
            (c, s, t, g, p, i, a)
            for c in conditions
            for s in ids
            for t in range(trials)
            for g in gaps
            for p in policies
            for i in profiles
            for a in strategies
        )
        if in_shard(cell, shard)
    ]
