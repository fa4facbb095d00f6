"""The LLM judge prompt: one template file, versioned and hashed.

`judge_prompt.md` next to this module is the template; `render_judge_prompt`
fills it from a `JudgeCase`. The judge sees the Turn 1 speech, the Turn 2
message as sent, the Turn 3 repair message when grading Turn 3, the reply,
the four answer lists and a ground-truth section describing the frames. It
never sees the scenario's target context, shift type or authoring notes:
those fields are not read here at all, and
`tests/test_judge_prompt_constraints.py` checks every shipped scenario.

Bump `JUDGE_PROMPT_VERSION` whenever the template, the system text or the
rendering changes; `judge_prompt_sha256()` goes into the run manifest.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from benchmark.judges.base import JudgeCase

JUDGE_PROMPT_VERSION = "1.0"
TEMPLATE_PATH = Path(__file__).with_name("judge_prompt.md")
JUDGE_SYSTEM_PROMPT = "You are a careful, impartial grader. Reply with a single JSON object."
JUDGE_RETRY_MESSAGE = (
    "Your reply could not be read ({reason}). Answer again with only the JSON object "
    '{{"label": ..., "rationale": ...}}, where label is one of current, prior, clarify, abstain.'
)


def judge_template() -> str:
    return TEMPLATE_PATH.read_text(encoding="utf-8")


def judge_prompt_sha256() -> str:
    """Hash of everything that shapes the judge's input: template, system and retry text, version."""
    digest = hashlib.sha256()
    for part in (JUDGE_PROMPT_VERSION, JUDGE_SYSTEM_PROMPT, JUDGE_RETRY_MESSAGE):
        digest.update(part.encode("utf-8") + b"\0")
    digest.update(TEMPLATE_PATH.read_bytes())
    return digest.hexdigest()


def _quoted(items: tuple[str, ...]) -> str:
    return ", ".join(json.dumps(item, ensure_ascii=False) for item in items) if items else "(none given)"


def _camera_message(image: str | None, speech: str) -> str:
    # the same text the protocol sends: "[Camera: ...]" line, then the speech
    return f"[Camera: {image}]\n{speech}" if image else speech


def _frames_block(case: JudgeCase) -> str:
    s = case.scenario
    lines = []
    if s.context_image:
        lines.append(f"- Before the conversation started: {s.context_image}")
    lines.append(f"- Turn 1 frame: {s.turn_1_image or '(no camera description at this turn)'}")
    lines.append(f"- Turn 2 frame: {s.turn_2_image or '(no camera description at this turn)'}")
    return "\n".join(lines) + "\n"


def render_judge_prompt(case: JudgeCase) -> str:
    """The full judge prompt for one response (Turn 2, or Turn 3 after a repair)."""
    if case.turn not in (2, 3):
        raise ValueError(f"a judge grades Turn 2 or Turn 3, not turn {case.turn!r}")
    s = case.scenario
    answers = s.answers
    if case.turn == 2:
        turn_2_message = case.user_message
        repair_block = ""
        graded = "the assistant's reply to Turn 2"
    else:
        turn_2_message = _camera_message(s.turn_2_image, s.turn_2_user)
        repair_block = (
            "\nThe assistant's Turn 2 reply missed, so the user followed up (Turn 3):\n"
            f"<turn_3_message>\n{case.user_message}\n</turn_3_message>\n"
        )
        graded = "the assistant's reply to the Turn 3 follow-up"
    pre = ""
    if s.context_image:
        pre = (
            "Before the user spoke, the assistant received one camera description on its own, "
            "with no speech (it is described in the ground truth section).\n\n"
        )
    return judge_template().format(
        pre_conversation_block=pre,
        turn_1_speech=s.turn_1_user,
        turn_2_message=turn_2_message,
        repair_block=repair_block,
        graded_turn=graded,
        response=case.response,
        current_answers=_quoted(answers.current_answers),
        prior_answers=_quoted(answers.prior_answers),
        clarify_indicators=_quoted(answers.clarify_indicators),
        abstain_indicators=_quoted(answers.abstain_indicators),
        frames_block=_frames_block(case),
        current_objects=_quoted(answers.current_answers),
        prior_objects=_quoted(answers.prior_answers),
    )
