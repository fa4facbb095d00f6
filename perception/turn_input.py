"""What one turn sends to the assistant, with where each channel came from.

Per turn and per channel: perceived media when it exists, else the
scenario's authored text (`turn_N_image`, `turn_N_user`; the repair anchor
for turn 3). `camera_source` and `speech_source` say `perceived` or
`authored` (camera `None` when the turn has no camera block at all).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from benchmark.scenario import Scenario


@dataclass(frozen=True)
class TurnInput:
    turn: int
    camera_block: str | None
    speech: str
    camera_source: str | None
    speech_source: str
    context_block: str | None = None  # turn 1 only: the pre-conversation camera block
    context_source: str | None = None
    frame_ref: str | None = None
    audio_ref: str | None = None
    timings: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def authored_camera(scenario: Scenario, turn: int) -> str | None:
    return {1: scenario.turn_1_image, 2: scenario.turn_2_image}.get(turn)


def authored_speech(scenario: Scenario, turn: int, repair_style: str = "named") -> str:
    if turn == 1:
        return scenario.turn_1_user
    if turn == 2:
        return scenario.turn_2_user
    if turn == 3:
        return scenario.repair_anchor(repair_style)
    raise ValueError(f"no turn {turn}")


def assemble_turn_input(scenario: Scenario, turn: int, *, perceived_speech: str | None = None,
                        perceived_camera: str | None = None, perceived_context: str | None = None,
                        repair_style: str = "named", frame_ref: str | None = None, audio_ref: str | None = None,
                        timings: dict | None = None) -> TurnInput:
    """The turn's input: perceived channels where given, authored text for the rest.

    Turn 3 (the repair) carries speech only. On turn 1 of a pre-conversation
    recall scenario the context block falls back to the authored `context_image`.
    """
    if perceived_speech is not None and perceived_speech.strip():
        speech, speech_source = perceived_speech.strip(), "perceived"
    else:
        speech, speech_source = authored_speech(scenario, turn, repair_style), "authored"
    if turn == 3:
        camera, camera_source = None, None
    elif perceived_camera is not None:
        camera, camera_source = perceived_camera, "perceived"
    else:
        camera = authored_camera(scenario, turn)
        camera_source = "authored" if camera else None
    context, context_source = None, None
    if turn == 1:
        if perceived_context is not None:
            context, context_source = perceived_context, "perceived"
        elif scenario.context_image:
            context, context_source = scenario.context_image, "authored"
    return TurnInput(turn, camera, speech, camera_source, speech_source, context, context_source,
                     frame_ref, audio_ref, dict(timings or {}))
