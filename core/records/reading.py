"""Reading one trial record: ours of any schema version, older ones (schema 1's `turns`) and transcripts
published by other implementations (`change_type`, `turn_N_judge_policy`). Every problem is collected and
named by file, line and field; a value too long to be a name or a text is refused."""

from __future__ import annotations

import json
from typing import Any

from core.candidate import Message
from core.judge import LABELS, Verdict
from core.records.turn_facts import GlassesFacts, RecordError, TurnMetrics
from core.records.turns import TurnInput, TurnResult, reply_from_json, usage_from_json
from core.scenario import JSONL_CUE_RENAMES
from core.watching import Watching, WatchingError

PROACTIVE_TARGETS = ("speak_up", "stay_quiet")  # a proactive trial's target: an event scenario's, a quiet control's
# why a cell did not give a scored Turn 2 (`TrialRecord.fault`; the rule is `benchmark.faults`): the API's
# faults, ours, and the judge's
FAULTS = (
    "rate_limited",
    "session_limit",
    "connection_lost",
    "refused",
    "empty_reply",
    "timeout",
    "provider_error",
    "harness_error",
    "judge_unscored",
)


# field name in the record -> other names that mean the same (other implementations' transcripts)
ALIASES = {
    "cue_type": ("change_type",),
    "turn_2_judge_label": ("turn_2_judge_policy",),
    "turn_3_judge_label": ("turn_3_judge_policy",),
    "turn_2_ranking_judge_label": ("turn_2_ranking_judge_policy",),
}

# the longest value read from a record: names that reports group and key tables on, and free text
NAMES = (
    "scenario_id",
    "condition",
    "cue_type",
    "difficulty_tier",
    "activity_domain",
    "subset",
    "via",
    "candidate_model",
    "target_context",
)
NAME_LIMIT = 200
TEXT_LIMIT = 1_000_000


def turn_from_v1(data: Any, record: dict, where: str) -> TurnResult:
    """A schema-1 `turns` entry: provenance and reply facts side by side."""
    if not isinstance(data, dict) or not isinstance(data.get("turn"), int):
        raise RecordError([f"{where}: expected an object with an integer 'turn'"])
    turn = data["turn"]
    turn_input = TurnInput.from_json({**data, "speech": data.get("transcript") or "", "timings": {}}, where)
    text = record.get(f"turn_{turn}_response")
    glasses = GlassesFacts.from_json(
        {key: data[key] for key in ("speech_media", "frames_sent") if key in data}, f"{where}: glasses"
    )
    return TurnResult(
        turn=turn,
        input=turn_input,
        reply=reply_from_json(
            data, text if isinstance(text, str) else "", str(record.get("candidate_model") or ""), where
        ),
        metrics=TurnMetrics.from_json(data.get("metrics"), f"{where}: metrics"),
        glasses=glasses,
    )


class RecordReader:
    """Collects every problem of one raw record, then builds the `TrialRecord`."""

    def __init__(self, raw: dict, where: str):
        self.raw, self.where = raw, where
        self.problems: list[str] = []

    def value(self, name: str) -> Any:
        for key in (name, *ALIASES.get(name, ())):
            if self.raw.get(key) is not None:
                return self.raw[key]
        return None

    def text(self, name: str, required: bool = False) -> str | None:
        value = self.value(name)
        if value is None:
            if required:
                self.problems.append(f"{self.where}: field '{name}' is missing")
            return None
        if not isinstance(value, str):
            self.problems.append(f"{self.where}: field '{name}' must be a string, got {type(value).__name__}")
            return None
        limit = NAME_LIMIT if name in NAMES else TEXT_LIMIT
        if len(value) > limit:  # reports key tables and plots on names: a huge one costs gigabytes
            self.problems.append(
                f"{self.where}: field '{name}' is {len(value):,} characters long; at most {limit:,} are read"
            )
            return None
        return value

    def integer(self, name: str) -> int | None:
        value = self.raw.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            self.problems.append(f"{self.where}: field '{name}' must be an integer or null, got {value!r}")
            return None
        return value

    def label(self, name: str) -> str | None:
        value = self.value(name)
        if value is not None and value not in LABELS:
            self.problems.append(
                f"{self.where}: field '{name}' must be one of {', '.join(LABELS)} or null, got {value!r}"
            )
            return None
        return value

    def fault(self) -> str | None:
        value = self.raw.get("fault")
        if value is not None and value not in FAULTS:
            self.problems.append(
                f"{self.where}: field 'fault' must be one of {', '.join(FAULTS)} or null, got {value!r}"[:300]
            )
            return None
        return value

    def verdict(self, prefix: str) -> Verdict | None:
        label = self.label(f"{prefix}_label")
        reason = self.raw.get(f"{prefix}_unscored_reason")
        if reason is None and prefix != "turn_2_ranking_judge":  # rescore once wrote turn_N_unscored_reason
            reason = self.raw.get(prefix.replace("_judge", "") + "_unscored_reason")
        rest = {key: self.text(f"{prefix}_{key}") for key in ("rationale", "name", "prompt", "raw")}
        if reason is not None and not isinstance(reason, str):
            self.problems.append(
                f"{self.where}: field '{prefix}_unscored_reason' must be a string or null, got {type(reason).__name__}"
            )
            reason = None
        usage = usage_from_json(self.raw.get(f"{prefix}_usage"), f"{self.where}: field '{prefix}_usage", self.problems)
        if label is None and reason is None and not any(rest.values()):
            return None
        return Verdict(
            label=label,
            rationale=rest["rationale"] or "",
            judge=rest["name"] or "",
            unscored_reason=reason,
            prompt=rest["prompt"] or "",
            raw=rest["raw"] or "",
            cached=self.raw.get(f"{prefix}_cached") is True,
            usage=usage,
        )

    def messages(self) -> tuple[Message, ...]:
        raw = self.raw.get("messages") or []
        if not isinstance(raw, list):
            self.problems.append(f"{self.where}: field 'messages' must be a list")
            return ()
        out = []
        for n, m in enumerate(raw):
            if not (isinstance(m, dict) and m.get("role") in ("user", "assistant") and isinstance(m.get("text"), str)):
                self.problems.append(f"{self.where}: field 'messages[{n}]' must be {{role: user|assistant, text}}")
                continue
            out.append(Message(role=m["role"], text=m["text"]))
        return tuple(out)

    def turns(self) -> tuple[TurnResult, ...]:
        raw = self.raw.get("turns") or []
        if not isinstance(raw, list):
            self.problems.append(f"{self.where}: field 'turns' must be a list")
            return ()
        out = []
        for n, entry in enumerate(raw):
            at = f"{self.where}: field 'turns[{n}]'"
            try:
                if isinstance(entry, dict) and "input" in entry:
                    out.append(TurnResult.from_json(entry, at))
                else:
                    out.append(turn_from_v1(entry, self.raw, at))
            except RecordError as exc:
                self.problems.extend(exc.problems)
        return tuple(out)

    def watching(self) -> Watching | None:
        if self.raw.get("watching") is None:
            return None
        try:
            return Watching.from_json(self.raw["watching"], f"{self.where}: field 'watching'")
        except WatchingError as exc:
            self.problems.extend(exc.problems)
            return None

    def fields(self) -> dict:
        """The `TrialRecord` fields read, or a `RecordError` with every problem."""
        raw, where = self.raw, self.where
        index = raw.get("trial")
        if isinstance(index, bool) or not isinstance(index, int):
            self.problems.append(f"{where}: field 'trial' must be an integer, got {index!r}")
        target = self.text("target_context", True)
        if target is not None and target not in (*LABELS, *PROACTIVE_TARGETS):
            self.problems.append(
                f"{where}: field 'target_context' must be one of "
                f"{', '.join((*LABELS, *PROACTIVE_TARGETS))}, got {target!r}"
            )
        cue = self.text("cue_type", True) or ""
        error = raw.get("error")
        if error is not None and not isinstance(error, str):
            error = json.dumps(error)
        attempted = raw.get("turn_3_repair_attempted")
        if attempted is None:  # not recorded: a Turn 3 happened if it left a response or a label
            attempted = raw.get("turn_3_response") is not None or self.value("turn_3_judge_label") is not None
        if not isinstance(attempted, bool):
            self.problems.append(f"{where}: field 'turn_3_repair_attempted' must be true or false, got {attempted!r}")
        signals = raw.get("turn_2_code_signals")
        if signals is not None and not isinstance(signals, dict):
            self.problems.append(f"{where}: field 'turn_2_code_signals' must be an object or null")
        wall = raw.get("wall_s")
        record = dict(
            scenario_id=self.text("scenario_id", True),
            condition=self.text("condition", True),
            trial=index,
            target_context=target,
            cue_type=JSONL_CUE_RENAMES.get(cue, cue),
            difficulty_tier=self.text("difficulty_tier") or "unknown",
            activity_domain=self.text("activity_domain"),
            subset=self.text("subset") or "bank",
            via=self.text("via"),
            candidate_model=self.text("candidate_model"),
            system_prompt=self.text("system_prompt"),
            messages=self.messages(),
            turns=self.turns(),
            turn_1_response=self.text("turn_1_response"),
            turn_2_user_message=self.text("turn_2_user_message"),
            turn_2_response=self.text("turn_2_response"),
            turn_2_judge=self.verdict("turn_2_judge"),
            turn_2_code_signals=signals if isinstance(signals, dict) else None,
            turn_2_ranking_judge=self.verdict("turn_2_ranking_judge"),
            turn_3_repair_attempted=attempted,
            turn_3_message=self.text("turn_3_message"),
            turn_3_response=self.text("turn_3_response"),
            turn_3_judge=self.verdict("turn_3_judge"),
            repair_target_context=self.label("repair_target_context"),
            turn_2_previous_judge_label=self.label("turn_2_previous_judge_label"),
            turn_3_previous_judge_label=self.label("turn_3_previous_judge_label"),
            staleness_ms=self.integer("staleness_ms"),
            frame_policy=self.text("frame_policy"),
            impairment=self.text("impairment"),
            proactive=self.text("proactive"),
            watching=self.watching(),
            error=error,
            fault=self.fault(),
            wall_s=wall if isinstance(wall, (int, float)) else None,
            schema_version=raw.get("schema_version") if isinstance(raw.get("schema_version"), int) else 0,
        )
        if self.problems:
            raise RecordError(self.problems)
        return record
