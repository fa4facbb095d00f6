"""A bank's counts (what `wearsim validate` and the dataset card report), and the exact counts the shipped
bank must have (part of the validator's check 3)."""

from __future__ import annotations

import dataclasses
from collections import Counter

from core.scenario import SUBSETS, Bank

# the shipped bank's exact distributions (check 3), counted on its `bank` subset
SHIPPED_DISTRIBUTIONS = {
    "target_context": {"current": 33, "prior": 12, "clarify": 3, "abstain": 2},
    "cue_type": {
        "object_in_hand": 12,
        "object_state": 8,
        "sequential_task": 6,
        "location": 6,
        "object_in_view": 5,
        "absent_referent": 5,
        "screen_content": 4,
        "pre_conversation_recall": 4,
    },
    "difficulty_tier": {"easy": 15, "medium": 20, "hard": 15},
}
SHIPPED_SIZE = 50
MIN_DOMAINS = 14
# the shipped contrast subset (ct-01 .. ct-20), counted separately: minimal pairs
# and distractor-rich scenes where the earlier object is still visible
SHIPPED_CONTRAST_DISTRIBUTIONS = {
    "target_context": {"current": 14, "prior": 6},
    "cue_type": {
        "object_in_hand": 4,
        "object_state": 2,
        "sequential_task": 2,
        "location": 2,
        "object_in_view": 3,
        "absent_referent": 2,
        "screen_content": 3,
        "pre_conversation_recall": 2,
    },
}
SHIPPED_CONTRAST_SIZE = 20


def _tally(scenarios, name: str) -> dict:
    return dict(Counter("null" if getattr(s, name) is None else getattr(s, name) for s in scenarios))


COUNTED = ("target_context", "cue_type", "difficulty_tier", "cognitive_load", "time_gap_bucket", "subset")


def counts(bank: Bank) -> dict:
    """Tallies over every scenario; a bank holding more than one subset also gets
    each subset's own tallies under flat keys such as `bank:target_context`."""
    scenarios = bank.scenarios
    out = {
        "scenarios": len(scenarios),
        **{name: _tally(scenarios, name) for name in COUNTED},
        "activity_domains": len({s.activity_domain for s in scenarios}),
    }
    subsets = [name for name in SUBSETS if any(s.subset == name for s in scenarios)]
    if len(subsets) > 1:
        for subset in subsets:
            part = [s for s in scenarios if s.subset == subset]
            out[f"{subset}:scenarios"] = len(part)
            out.update({f"{subset}:{name}": _tally(part, name) for name in COUNTED if name != "subset"})
            out[f"{subset}:activity_domains"] = len({s.activity_domain for s in part})
    return out


def shipped_count_problems(bank: Bank) -> list[str]:
    """The shipped bank: its `bank` subset has the exact distributions; its
    contrast subset (ct-01 .. ct-20) is counted on its own, and each of its
    `pair_id`s names exactly one bank item. `wearsim validate --subset NAME`
    checks only the selected subset."""
    p: list[str] = []
    if bank.subset in (None, "bank"):
        main = [s for s in bank.scenarios if s.subset == "bank"]
        c = counts(dataclasses.replace(bank, scenarios=tuple(main)))
        for key, wanted in SHIPPED_DISTRIBUTIONS.items():
            if c[key] != wanted:
                p.append(f"shipped bank: {key} counts are {c[key]}, expected {wanted}")
        if c["scenarios"] != SHIPPED_SIZE:
            p.append(f"shipped bank: {c['scenarios']} scenarios, expected {SHIPPED_SIZE}")
        if c["activity_domains"] < MIN_DOMAINS:
            p.append(f"shipped bank: {c['activity_domains']} activity domains, expected at least {MIN_DOMAINS}")
    if bank.subset in (None, "contrast"):
        contrast = [s for s in bank.scenarios if s.subset == "contrast"]
        wanted_ids = [f"ct-{n:02d}" for n in range(1, SHIPPED_CONTRAST_SIZE + 1)]
        ids = sorted(s.scenario_id for s in contrast)
        if ids != wanted_ids:
            p.append(
                f"shipped bank: the contrast subset must be exactly {wanted_ids[0]} .. {wanted_ids[-1]}, "
                f"got {', '.join(ids) or 'none'}"
            )
        cc = counts(dataclasses.replace(bank, scenarios=tuple(contrast)))
        for key, wanted in SHIPPED_CONTRAST_DISTRIBUTIONS.items():
            if cc[key] != wanted:
                p.append(f"shipped bank: contrast subset {key} counts are {cc[key]}, expected {wanted}")
        pairs = Counter(s.pair_id for s in bank.scenarios if s.pair_id is not None)
        bank_pairs = {s.pair_id for s in bank.scenarios if s.subset == "bank" and s.pair_id is not None}
        for s in contrast if bank.subset is None else ():  # a pair's bank item is not in a selected subset
            if s.pair_id is not None and (s.pair_id not in bank_pairs or pairs[s.pair_id] != 2):
                p.append(
                    f"{s.scenario_id}: field 'pair_id' {s.pair_id!r} must name exactly one bank item (a minimal pair)"
                )
    return p
