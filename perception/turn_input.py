"""The fallback rule: what one turn sends when some channels were perceived.

Per channel, perceived media where it exists, else the authored input's
text with its source (`core.records.TurnInput` says `authored` or
`perceived` per channel). The streaming session builds every turn's input
through `assemble_turn_input`; the authored input it starts from is the
fallback the glasses declared in their hello.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from core.records import TurnInput


def assemble_turn_input(
    authored: TurnInput,
    *,
    perceived_speech: str | None = None,
    perceived_camera: str | None = None,
    perceived_context: str | None = None,
    timings: Mapping[str, float] | None = None,
    source: str = "perceived",
) -> TurnInput:
    """The turn's input: perceived channels where given, `authored` for the rest.

    Turn 3 (the repair) carries speech only; only turn 1 has a context block.
    Blank perceived speech counts as none. `source` is what the given channels
    are recorded as: `perceived`, or `media` when the media itself went to a
    multimodal API (the texts then stand in for it in the record).
    """
    result = replace(authored, timings=dict(timings or authored.timings))
    if perceived_speech is not None and perceived_speech.strip():
        result = replace(result, speech=perceived_speech.strip(), speech_source=source)
    if perceived_camera is not None and authored.turn != 3:
        result = replace(result, camera_block=perceived_camera, camera_source=source)
    if perceived_context is not None and authored.turn == 1:
        result = replace(result, context_block=perceived_context, context_source=source)
    return result
