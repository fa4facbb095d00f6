"""Semantic checks that need a model (`wearsim validate --semantic --model M`).

- Check 4, identification: the model reads one camera block alone (no speech,
  no other turn) and names what it shows. A block identifies its object when
  the name is among the answer tokens of the scene it shows: Turn 2 ->
  `current_answers`; Turn 1 and the context frame -> `prior_answers`; on a
  `pre_conversation_recall` item Turn 1 lies between the two scenes and may
  match either list. A scenario fails when a block does not identify its
  object (the description is too vague, or describes something else).
- Check 5, semantic leakage in the MMStar sense: the Turn 1 and Turn 2 user
  speech alone, with no camera block at all, go to the model as a text-only
  conversation. A current or prior item fails when the lexical rules label
  the Turn 2 reply with the item's target (the model got the answer right from
  speech alone, so the audio channel carries the visual content); a clarify or
  abstain item fails when the reply names anything from its current or prior
  answers (a generic question or decline is what speech alone should give).

Each check reports per scenario in `CheckResult.details` (printed by
`wearsim validate --json`) and lists every failing scenario as a problem; an
unreadable model reply is a problem too (the block was not checked).
"""

from __future__ import annotations

import json
import re
from typing import Any

from benchmark.bank.authoring import mentions
from benchmark.bank.validate import CheckResult
from core.candidate import Candidate, GenerationConfig, Message
from core.scenario import Bank, Scenario

IDENTIFY_PROMPT = (
    "A camera on a pair of smart glasses reports the scene below in words; it never names objects. "
    "What is the main object (or place, or screen content) the wearer is attending to? Name it the way a "
    'person would, in at most five words. Reply with JSON only: {{"object": "..."}}.\n\n'
    "Scene: {block}"
)
# check 5's candidate has no camera: a text-only assistant
TEXT_ONLY_SYSTEM = "You are a helpful assistant. Answer briefly."
CONFIG = GenerationConfig(temperature=0.0, max_tokens=200)


def _named_object(reply: str) -> str | None:
    match = re.search(r"\{.*\}", reply, re.DOTALL)
    if match:
        try:
            data = json.loads(match.group(0))
        except json.JSONDecodeError:
            return None
        if isinstance(data, dict) and isinstance(data.get("object"), str) and data["object"].strip():
            return data["object"].strip()
    return None


def blocks_to_identify(s: Scenario) -> list[tuple[str, str, tuple[str, ...], str]]:
    """(field, camera block, the answer tokens it must match, which lists) for each block of `s`."""
    a = s.answers
    recall = s.cue_type == "pre_conversation_recall"
    out = []
    if s.context_image:
        out.append(("context_image", s.context_image, a.prior_answers, "prior_answers"))
    if s.turn_1_image:
        if recall:
            out.append(
                (
                    "turn_1_image",
                    s.turn_1_image,
                    a.prior_answers + a.current_answers,
                    "prior_answers or current_answers",
                )
            )
        else:
            out.append(("turn_1_image", s.turn_1_image, a.prior_answers, "prior_answers"))
    if s.turn_2_image:
        out.append(("turn_2_image", s.turn_2_image, a.current_answers, "current_answers"))
    return out


def identifies(named: str, tokens: tuple[str, ...]) -> str | None:
    """The answer token the model's name matches (either holds the other as whole words), else None."""
    for token in tokens:
        if mentions(named, token) or mentions(token, named):
            return token
    return None


async def check_identification(bank: Bank, model: Candidate) -> CheckResult:
    """Check 4: each camera block, alone, lets a model name the object of its scene."""
    result = CheckResult(name="semantic_identification")
    for s in bank.scenarios:
        report: dict[str, dict[str, Any]] = {}
        for name, block, tokens, lists in blocks_to_identify(s):
            reply = await model.respond([Message(role="user", text=IDENTIFY_PROMPT.format(block=block))], "", CONFIG)
            named = _named_object(reply.text)
            if named is None:
                report[name] = {"named": None, "identified": None}
                result.problems.append(f"{s.scenario_id}: field '{name}': model reply unreadable, not checked")
                continue
            match = identifies(named, tokens)
            report[name] = {"named": named, "identified": match is not None, "matched": match}
            if match is None:
                result.problems.append(
                    f"{s.scenario_id}: field '{name}': the model names {named!r}, not among {lists}; "
                    "the description does not identify the object"
                )
        result.details[s.scenario_id] = report
    return result


async def check_speech_leakage(bank: Bank, model: Candidate) -> CheckResult:
    """Check 5: Turn 1 and Turn 2 speech alone, no camera, must not give the answer away."""
    from benchmark.judges.rules import lexical_label
    from benchmark.judges.signals import code_signals

    result = CheckResult(name="semantic_speech_leakage")
    for s in bank.scenarios:
        messages = [Message(role="user", text=s.turn_1_user)]
        first = await model.respond(list(messages), TEXT_ONLY_SYSTEM, CONFIG)
        messages += [Message(role="assistant", text=first.text), Message(role="user", text=s.turn_2_user)]
        reply = await model.respond(list(messages), TEXT_ONLY_SYSTEM, CONFIG)
        label, why = lexical_label(reply.text, s.answers)
        signals = code_signals(reply.text, s.answers)
        named = [t for lists in ("current_answers", "prior_answers") for t in signals["word_boundary"][lists]]
        if s.target_context in ("current", "prior"):
            leaks = label == s.target_context
            reason = f"answered as '{label}' from speech alone ({why})"
        else:
            leaks = bool(named)
            reason = f"names {', '.join(repr(t) for t in named)} from speech alone"
        result.details[s.scenario_id] = {"label": label, "rule": why, "named": named, "leaks": leaks}
        if leaks:
            result.problems.append(f"{s.scenario_id}: {reason}; the speech carries what only the camera should show")
    return result


__all__ = ["check_identification", "check_speech_leakage", "identifies", "blocks_to_identify"]
