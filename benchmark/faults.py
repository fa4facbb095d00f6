"""Fault categories: why a cell gave no scored Turn 2, kept apart from a model's misses.

Every errored or unscored cell gets exactly one category (`records.FAULTS`):

| category | what happened |
|---|---|
| `rate_limited` | the API said too many requests (429, `rate_limit_exceeded`, `RESOURCE_EXHAUSTED`) |
| `session_limit` | the API ended the live session (`goAway`, `session_expired`, a session time limit) |
| `connection_lost` | the connection dropped and could not be replaced |
| `refused` | the API declined the request (invalid request, not found, not allowed, content policy, HTTP 4xx) |
| `empty_reply` | a turn's reply had no text and no audio |
| `timeout` | no answer in time |
| `provider_error` | any other error the API sent (an error event, HTTP 5xx, a failed response) |
| `harness_error` | a fault of ours: our server refused or failed the session, a bug, a setting |
| `judge_unscored` | every turn answered, but the judge gave Turn 2 no label (its reason is kept) |

A new record carries its category (`TrialRecord.fault`, set by the runner
with `classify`); an older one gets it here, read from its error text or,
unscored, from the judge's reason (`fault_of`). The error text is the one
place both paths meet: an error raised behind the streaming server reaches
the record as that server's `error` event, whose message keeps the
provider's words. `wearsim bench`'s exit status and `--max-error-rate`
count `COUNTED` (the API's faults and ours), never a model's miss nor an
unscored judgement.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from core.records import FAULTS, TrialRecord

PROVIDER_FAULTS = (
    "rate_limited",
    "session_limit",
    "connection_lost",
    "refused",
    "empty_reply",
    "timeout",
    "provider_error",
)
COUNTED = (*PROVIDER_FAULTS, "harness_error")  # what the exit status and --max-error-rate count
EMPTY_REPLY = "EmptyReply"  # the error a record gets when a turn's reply was empty

# (category, markers in the lowered error text); the first rule with a marker present wins
RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("empty_reply", (EMPTY_REPLY.lower(), "empty reply", "empty response")),
    # our streaming server turned the session away, or failed on its own
    (
        "harness_error",
        (
            "server refused the session",
            "internal_error",
            "bad_hello",
            "backend_not_allowed",
            "describer_not_allowed",
            "unauthenticated",
            "unreadable server event",
            "frame_too_large",
            "audio_rate",
            "frame_rate",
        ),
    ),
    (
        "rate_limited",
        (
            "rate_limit",
            "rate limit",
            "ratelimit",
            "(429)",
            "http 429",
            " 429",
            "resource_exhausted",
            "too many requests",
            "quota",
        ),
    ),
    (
        "session_limit",
        (
            "goaway",
            "go away",
            "go_away",
            "session_expired",
            "session expired",
            "session limit",
            "session_limit",
            "maximum session",
            "max session",
            "session duration",
        ),
    ),
    ("timeout", ("timeout", "timed out", "no reply for turn", "deadline")),
    (
        "connection_lost",
        (
            "connection lost",
            "connection closed",
            "connectionclosed",
            "cannot connect",
            "session ended during the reply",
            "gave no resumption handle",
            "cannot resume",
            "was lost mid-conversation",
            "disconnect",
        ),
    ),
    (
        "refused",
        (
            "invalid_request",
            "not_found",
            "not found",
            "does not exist",
            "content_policy",
            "policy_violation",
            "safety",
            "blocked",
            "declined",
            "refus",
            "not supported",
            "permission",
            "forbidden",
            "unauthorized",
            "invalid_api_key",
            "http 400",
            "http 401",
            "http 403",
            "http 404",
            "http 422",
        ),
    ),
)
# exception names of a fault of ours (a bug or a setting), wherever they appear in the chain
HARNESS_NAMES = re.compile(
    r"\b(TypeError|AttributeError|KeyError|IndexError|NameError|AssertionError|"
    r"ZeroDivisionError|UnboundLocalError|RecursionError|ImportError|ModuleNotFoundError|"
    r"NotImplementedError|RecordError|UnsafePathError|TranscriptWriteError|UsageError|"
    r"ValueError|FileNotFoundError|PermissionError)\b"
)
# what an API's error looks like when no rule above named it
PROVIDER_MARKERS = (
    "realtimeerror",
    "retryableerror",
    "backend_error",
    "server_error",
    "http 5",
    "response failed",
    "apierror",
    "apistatuserror",
    "internalservererror",
    "servererror: turn",
    "overloaded",
)


def fault_of_error(text: str) -> str:
    """The category of a recorded error (`TrialRecord.error`): the rules in order, then a bug or
    setting of ours by its exception name, then an API's error by its markers, else ours."""
    lowered = (text or "").lower()
    for category, markers in RULES:
        if any(marker in lowered for marker in markers):
            return category
    if HARNESS_NAMES.search(text or ""):
        return "harness_error"
    if any(marker in lowered for marker in PROVIDER_MARKERS):
        return "provider_error"
    return "harness_error"


def empty_turn(record: TrialRecord) -> int | None:
    """The first of Turns 1 and 2 whose reply had no text and no audio (a spoken reply counts by its
    audio). An empty repair (Turn 3) leaves the repair unscored, not the cell."""
    for turn in record.turns:
        reply = turn.reply
        if turn.turn > 2:
            continue
        if not reply.text.strip() and not reply.audio and not reply.audio_file:
            return turn.turn
    return None


def with_empty_reply(record: TrialRecord) -> TrialRecord:
    """A finished record one of whose turns came back empty, marked as that fault: the cell errored
    (left out of every accuracy, run again by --resume) and its turns are kept for the viewer."""
    if record.errored:
        return record
    turn = empty_turn(record)
    if turn is None:
        return record
    return record.replace(error=f"{EMPTY_REPLY}: the reply to turn {turn} had no text and no audio")


def classify(record: TrialRecord) -> str | None:
    """The category of a record as it stands (None: every turn answered and Turn 2 has a label)."""
    if record.error is not None:  # (errored)
        return fault_of_error(record.error)
    if record.watching is not None:  # a proactive trial: its remarks are scored one by one, not Turn 2
        return None
    if record.turn_2_label is None:
        return "empty_reply" if unscored_reason(record) == "empty response" and empty_turn(record) else "judge_unscored"
    return None


def fault_of(record: TrialRecord) -> str | None:
    """The record's category: as recorded, else inferred (older records) by `classify`."""
    return record.fault if record.fault in FAULTS else classify(record)


def unscored_reason(record: TrialRecord) -> str:
    verdict = record.turn_2_judge
    return (verdict.unscored_reason if verdict else None) or "no judge verdict"


def fault_summary(trials: Iterable[TrialRecord], planned: int | None) -> dict:
    """summary.json `faults`: the cells planned (`planned`, from the manifest; at least the cells
    recorded), the cells whose turns all answered with a scored Turn 2 (`ok`), each category's count,
    the judge's reasons for the unscored ones, the first error (or reason) of each category, the
    cells never played, and the share the exit status counts (`counted` over the planned cells)."""
    trials = list(trials)
    cells = max(planned or 0, len(trials))
    found = Counter(fault_of(t) for t in trials)
    ok = found.pop(None, 0)
    reasons = Counter(unscored_reason(t) for t in trials if fault_of(t) == "judge_unscored")
    counted = sum(found[c] for c in COUNTED)
    examples: dict[str, str] = {}
    for trial in trials:
        category = fault_of(trial)
        if category is not None and category not in examples:
            text = unscored_reason(trial) if category == "judge_unscored" and not trial.errored else trial.error
            examples[category] = " ".join((text or "").split())[:200]
    by_condition: dict[str, dict] = {}
    for trial in trials:
        row = by_condition.setdefault(trial.condition, {"cells": 0, "ok": 0})
        row["cells"] += 1
        row["ok"] += fault_of(trial) is None
    return {
        "planned": cells,
        "recorded": len(trials),
        "not_run": cells - len(trials),
        "ok": ok,
        "by_fault": {category: found[category] for category in FAULTS if found[category]},
        "judge_unscored_reasons": dict(reasons.most_common()),
        "examples": {category: examples[category] for category in FAULTS if category in examples},
        "counted": counted,
        "counted_rate": counted / cells if cells else None,
        "by_condition": dict(sorted(by_condition.items())),
    }
