"""Re-judge recorded responses with another judge, without calling the candidate.

The answer keys and scene descriptions come from a bank joined by
scenario_id (default: the shipped bank). The result is a new run dir whose
trial records carry the new verdicts and, beside them, the recorded labels as
`turn_2_previous_judge_label` / `turn_3_previous_judge_label`; its summary
reports the agreement between the two as `judge_agreement`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from benchmark.scenario import Scenario, load_bank
from benchmark.scoring.trials import ALIASES, TranscriptError, load_trials, transcripts_path


class RescoreError(ValueError):
    pass


def turn_messages(record: dict, scenario: Scenario) -> tuple[str, str | None]:
    """The Turn 2 and Turn 3 user messages exactly as sent.

    Taken from the recorded `messages` (the last user message is Turn 3 when a
    repair was sent, else Turn 2); rebuilt from the bank when no messages were
    recorded (transcripts from other implementations).
    """
    attempted = bool(record.get("turn_3_repair_attempted"))
    users = [m.get("text") for m in record.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    users = [u for u in users if isinstance(u, str)]
    if len(users) >= (3 if attempted else 2):
        return (users[-2], users[-1]) if attempted else (users[-1], None)
    from benchmark.protocol import build_user_turn

    turn_2 = build_user_turn(scenario.turn_2_image, scenario.turn_2_user)
    return turn_2, (scenario.turn_3_repair_anchor if attempted else None)


def _old_label(record: dict, name: str) -> str | None:
    for key in (name, *ALIASES.get(name, ())):
        if record.get(key) is not None:
            return record[key]
    return None


async def _judge_turn(judge, scenario: Scenario, turn: int, message: str, response: str | None):
    from benchmark.judges.base import JudgeCase, Verdict

    if response is None:
        return Verdict(None, "", getattr(judge, "name", "?"), unscored_reason=f"no recorded Turn {turn} response")
    return await judge.label(JudgeCase(scenario, turn, message, response))


def _apply(record: dict, prefix: str, verdict, target: str, passed_field: str) -> None:
    name = f"{prefix}_judge_label"
    record[f"{prefix}_previous_judge_label"] = _old_label(record, name)
    for alias in ALIASES.get(name, ()):
        record.pop(alias, None)
    record[name] = verdict.label
    record[f"{prefix}_judge_rationale"] = verdict.rationale
    record[f"{prefix}_judge_prompt"] = verdict.prompt
    record[f"{prefix}_judge_raw"] = verdict.raw
    record[f"{prefix}_unscored_reason"] = verdict.unscored_reason
    record[passed_field] = None if verdict.label is None else verdict.label == target


async def rejudge_record(record: dict, scenario: Scenario, judge) -> dict:
    """A copy of one trial record with Turn 2 (and Turn 3, if sent) judged again."""
    from benchmark.judges.signals import code_signals

    new = dict(record)
    new.pop("change_type", None)
    for name in ("cue_type", "difficulty_tier", "activity_domain"):
        if new.get(name) is None:
            new[name] = getattr(scenario, name)
    if new.get("error"):
        return new
    turn_2_message, turn_3_message = turn_messages(record, scenario)
    response = record.get("turn_2_response")
    verdict = await _judge_turn(judge, scenario, 2, turn_2_message, response)
    _apply(new, "turn_2", verdict, scenario.target_context, "turn_2_passed")
    if isinstance(response, str):
        new["turn_2_code_signals"] = code_signals(response, scenario.answers)
    if record.get("turn_3_repair_attempted"):
        verdict = await _judge_turn(judge, scenario, 3, turn_3_message or "", record.get("turn_3_response"))
        _apply(new, "turn_3", verdict, scenario.target_context, "turn_3_repair_passed")
    return new


def rescore(
    source: str | Path,
    *,
    judge_family: str,
    judge_model: str | None = None,
    scenarios: str | Path | None = None,
    output_dir: str | Path,
    base_url: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Re-judge every trial of `source` (run dir or transcripts file) into `output_dir`; return the summary."""
    from benchmark.report import read_manifest, write_report

    progress = progress or (lambda text: print(text, file=sys.stderr, flush=True))
    source = Path(source)
    trial_set = load_trials(source)
    bank = load_bank(scenarios)
    known = {s.scenario_id: s for s in bank.scenarios}
    missing = sorted({t.scenario_id for t in trial_set.trials} - set(known))
    if missing:
        raise RescoreError(f"{transcripts_path(source)}: scenario ids not in the bank {bank.source}: "
                           + ", ".join(missing))
    out = Path(output_dir)
    if (out / "transcripts.jsonl").exists():
        raise RescoreError(f"{out / 'transcripts.jsonl'} already exists; choose a new --output-dir")
    out.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(source) if source.is_dir() else {}

    async def run() -> dict:
        from benchmark.judges import open_judge

        async with open_judge(judge_family, judge_model, base_url=base_url) as judge:
            updated = dict(manifest)
            updated.update({
                "judge_family": getattr(judge, "family", judge_family),
                "judge_model": getattr(judge, "name", judge_model),
                "judge_family_resolution": "explicit (rescore)",
                "rescore": {
                    "source": str(transcripts_path(source)),
                    "bank": str(bank.source),
                    "previous_judge_family": manifest.get("judge_family"),
                    "previous_judge_model": manifest.get("judge_model"),
                    "timestamp_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                },
            })
            try:
                from benchmark.judges.prompt import JUDGE_PROMPT_VERSION, judge_prompt_sha256

                updated["judge_prompt_version"] = JUDGE_PROMPT_VERSION
                updated["judge_prompt_sha256"] = judge_prompt_sha256()
            except ImportError:
                pass
            (out / "manifest.json").write_text(json.dumps(updated, indent=2) + "\n", encoding="utf-8")
            total = len(trial_set.trials)
            with (out / "transcripts.jsonl").open("w", encoding="utf-8") as handle:
                for number, trial in enumerate(trial_set.trials, start=1):
                    record = await rejudge_record(trial.record, known[trial.scenario_id], judge)
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                    handle.flush()
                    progress(f"rescored {number}/{total}: {trial.scenario_id} [{trial.condition}] trial {trial.trial}"
                             f" -> {record.get('turn_2_judge_label')}")
            return updated

    asyncio.run(run())
    return write_report(out)


__all__ = ["RescoreError", "TranscriptError", "rejudge_record", "rescore", "turn_messages"]
