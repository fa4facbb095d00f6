"""The only builders of the spec's message strings: a user turn `[Camera: {block}]\n{speech}` (the block
left out when there is none), a context message `[Camera: {block}]` alone, and a proactive probe's message
with the instruction appended to a proactive session's system prompt."""

from __future__ import annotations

from core.watching import SILENCE_MARKER


def build_user_turn(camera_block: str | None, speech: str) -> str:
    return f"[Camera: {camera_block}]\n{speech}" if camera_block else speech


def build_context_message(camera_block: str) -> str:
    return f"[Camera: {camera_block}]"


# appended to the system prompt of a proactive session: when to speak unasked, and the silence marker
PROACTIVE_INSTRUCTION = (
    "You see through the user's glasses. Messages that hold only a camera view are not questions: nobody "
    "spoke. Answer one of them with a single short sentence only when the user needs to hear something now "
    "(a danger, a mistake in what they are doing, something they are about to miss or leave behind, or "
    f"what they asked you to watch for); otherwise answer exactly {SILENCE_MARKER} and nothing else."
)
# a realtime API has the frames already: a probe names none
PROBE_CUE = "(camera view, nobody spoke)"


def build_probe_message(camera_block: str | None) -> str:
    """A probe's user message: the described view for a chat model; the cue alone for a realtime API,
    which was sent the frames themselves."""
    return build_context_message(camera_block) if camera_block else PROBE_CUE
