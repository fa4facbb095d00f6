"""The record types: what one turn sends and what one trial records. Split by concern; import from here.

- `messages`: the only builders of the spec's message strings.
- `turn_facts`: what the glasses and the server measured on a stream turn.
- `turns`: a turn's input with its provenance, and the turn as played.
- `trial`: `TrialRecord`, one line of `transcripts.jsonl`.
- `reading`: reading a record of any schema version, or another implementation's.
"""

from core.records.messages import (
    PROACTIVE_INSTRUCTION,
    PROBE_CUE,
    build_context_message,
    build_probe_message,
    build_user_turn,
)
from core.records.reading import FAULTS, PROACTIVE_TARGETS
from core.records.trial import SCHEMA_VERSION, TrialRecord
from core.records.turn_facts import (
    LATENCY_STAGES,
    MEDIA_CAMERA,
    SCENES,
    SOURCES,
    FrameFacts,
    GlassesFacts,
    RecordError,
    SweepPoint,
    TurnEnd,
    TurnMetrics,
)
from core.records.turns import REPAIR_STYLES, TurnInput, TurnResult, authored_turn_input, judge_case

__all__ = [
    "FAULTS",
    "LATENCY_STAGES",
    "MEDIA_CAMERA",
    "PROACTIVE_INSTRUCTION",
    "PROACTIVE_TARGETS",
    "PROBE_CUE",
    "REPAIR_STYLES",
    "SCENES",
    "SCHEMA_VERSION",
    "SOURCES",
    "FrameFacts",
    "GlassesFacts",
    "RecordError",
    "SweepPoint",
    "TrialRecord",
    "TurnEnd",
    "TurnInput",
    "TurnMetrics",
    "TurnResult",
    "authored_turn_input",
    "build_context_message",
    "build_probe_message",
    "build_user_turn",
    "judge_case",
]
