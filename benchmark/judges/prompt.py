"""The LLM judge prompt: one template file, versioned and hashed.

`judge_prompt.md` next to this module is the template; `render_judge_prompt`
fills it from a `JudgeCase`. The judge sees the conversation as it was sent
(perceived transcripts and camera blocks under `--via stream`, no camera
blocks under `--no-camera`): the Turn 1 speech, the Turn 2 message, the
Turn 3 repair message when grading Turn 3, the reply,
the four answer lists and a ground-truth section describing the frames. It
never sees the scenario's target context, shift type or authoring notes:
those fields are not read here at all, and
`tests/benchmark/judges/test_judge_prompt_constraints.py` checks every shipped scenario.

The template file holds three parts, each after a `<!-- judge:NAME -->`
line: the system line, the retry message and the user prompt. Bump
`JUDGE_PROMPT_VERSION` whenever the file or the rendering changes;
`judge_prompt_sha256()` (the file's bytes, the same hash as the bank
lockfile's `judge_prompt_sha256`) goes into the run manifest.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path

from core.judge import JudgeCase

JUDGE_PROMPT_VERSION = "1.3"  # 1.3: current/prior name the scene the answer rests on, not whether it is right
TEMPLATE_PATH = Path(__file__).with_name("judge_prompt.md")
_SECTION = re.compile(r"^<!-- judge:(system|retry|user) -->\n", re.MULTILINE)


def _sections() -> dict[str, str]:
    """The template file's three parts: system line, retry message, user prompt (read once per change
    of the file: a run asks the judge hundreds of times)."""
    return _read_sections(TEMPLATE_PATH, TEMPLATE_PATH.stat().st_mtime_ns)


@lru_cache(maxsize=4)
def _read_sections(path: Path, _changed: int) -> dict[str, str]:
    text = path.read_text(encoding="utf-8")
    parts = _SECTION.split(text)
    sections = {name: body for name, body in zip(parts[1::2], parts[2::2])}
    missing = {"system", "retry", "user"} - set(sections)
    if missing:
        raise ValueError(
            f"{path}: missing section(s) {', '.join(sorted(missing))} (each starts with a line <!-- judge:NAME -->)"
        )
    return sections


def judge_template() -> str:
    """The user-prompt part of the template (before formatting)."""
    return _sections()["user"]


def judge_system_prompt() -> str:
    return _sections()["system"].strip()


def judge_retry_message(reason: str) -> str:
    return _sections()["retry"].strip().format(reason=reason)


def judge_prompt_sha256() -> str:
    """sha256 of the template file's bytes (system, retry and user parts); the lockfile holds the same."""
    return hashlib.sha256(TEMPLATE_PATH.read_bytes()).hexdigest()


def _quoted(items: tuple[str, ...]) -> str:
    return ", ".join(json.dumps(item, ensure_ascii=False) for item in items) if items else "(none given)"


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
    turn_2_message: str | None
    if case.turn == 2:
        turn_2_message = case.user_message
        repair_block = ""
        graded = "the assistant's reply to Turn 2"
    else:
        turn_2_message = case.turn_2_message
        if turn_2_message is None:
            from core.records import build_user_turn

            turn_2_message = build_user_turn(s.turn_2_image, s.turn_2_user)
        repair_block = (
            "\nThe assistant's Turn 2 reply missed, so the user followed up (Turn 3):\n"
            f"<turn_3_message>\n{case.user_message}\n</turn_3_message>\n"
        )
        graded = "the assistant's reply to the Turn 3 follow-up"
    pre = ""
    if case.context_sent or (case.context_sent is None and s.context_image):
        pre = (
            "Before the user spoke, the assistant received one camera description on its own, "
            "with no speech (it is described in the ground truth section).\n\n"
        )
    return judge_template().format(
        pre_conversation_block=pre,
        turn_1_speech=s.turn_1_user if case.turn_1_speech is None else case.turn_1_speech,
        turn_2_message=turn_2_message,
        repair_block=repair_block,
        graded_turn=graded,
        response=case.response,
        current_answers=_quoted(answers.current_answers),
        prior_answers=_quoted(answers.prior_answers),
        clarify_indicators=_quoted(answers.clarify_indicators),
        abstain_indicators=_quoted(answers.abstain_indicators),
        frames_block=_frames_block(case),
    )
