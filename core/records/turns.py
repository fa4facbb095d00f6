"""One turn: what the assistant got (`TurnInput`, with where each channel came from) and the turn as
played (`TurnResult`: the input, the reply and the stream's facts), each with its JSON form; the text
proxy's authored input; the judge's view of a turn."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from core.candidate import Reply, TranscriptionUsage, Usage, UsageError
from core.judge import JudgeCase
from core.records.messages import build_context_message, build_user_turn
from core.records.turn_facts import SOURCES, FrameFacts, GlassesFacts, RecordError, TurnEnd, TurnMetrics
from core.scenario import Scenario

REPAIR_STYLES = ("named", "deictic")


# ---------------------------------------------------------------- one turn


@dataclass(frozen=True, kw_only=True)
class TurnInput:
    """What the assistant got on one turn, and where each channel came from."""

    turn: int
    camera_block: str | None
    speech: str
    camera_source: str | None  # "authored", "perceived", "media", or None when no block was sent
    speech_source: str | None  # "authored", "perceived" or "media"
    context_block: str | None = None  # turn 1 only: the camera block sent before the conversation
    context_source: str | None = None
    timings: Mapping[str, float] = field(default_factory=dict)  # perception seconds, e.g. asr_decode_s

    @property
    def user_message(self) -> str:
        return build_user_turn(self.camera_block, self.speech)

    @property
    def context_message(self) -> str | None:
        return build_context_message(self.context_block) if self.context_block else None

    def messages(self) -> list[str]:
        """The user messages this turn sends, in order: the context message (if any), then the turn."""
        return [m for m in (self.context_message, self.user_message) if m]

    def to_json(self) -> dict:
        return {
            "turn": self.turn,
            "camera_block": self.camera_block,
            "camera_source": self.camera_source,
            "speech": self.speech,
            "speech_source": self.speech_source,
            "context_block": self.context_block,
            "context_source": self.context_source,
            "timings": dict(self.timings),
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "turn input") -> TurnInput:
        if not isinstance(data, dict):
            raise RecordError([f"{where}: expected an object, got {type(data).__name__}"])
        problems: list[str] = []
        turn = data.get("turn")
        if isinstance(turn, bool) or not isinstance(turn, int):
            problems.append(f"{where}: field 'turn' must be an integer, got {turn!r}")
        if not isinstance(data.get("speech"), str):
            problems.append(f"{where}: field 'speech' must be a string")
        for name in ("camera_block", "context_block"):
            if data.get(name) is not None and not isinstance(data[name], str):
                problems.append(f"{where}: field '{name}' must be a string or null")
        for name in ("camera_source", "speech_source", "context_source"):
            if data.get(name) not in (None, *SOURCES):
                problems.append(
                    f"{where}: field '{name}' must be one of {', '.join(SOURCES)} or null, got {data.get(name)!r}"
                )
        timings = data.get("timings") or {}
        if not isinstance(timings, dict):
            problems.append(f"{where}: field 'timings' must be an object")
        if problems:
            raise RecordError(problems)
        return cls(
            turn=cast(int, turn),
            camera_block=data.get("camera_block"),
            speech=data["speech"],
            camera_source=data.get("camera_source"),
            speech_source=data.get("speech_source"),
            context_block=data.get("context_block"),
            context_source=data.get("context_source"),
            timings=dict(timings),
        )


def authored_turn_input(
    scenario: Scenario, turn: int, *, camera: bool = True, repair_style: str = "named"
) -> TurnInput:
    """The text proxy's input for a turn: the scenario's authored camera block and speech.

    Turn 3 is the repair anchor alone. `camera=False` is the camera ablation:
    no camera block and no context message.
    """
    if repair_style not in REPAIR_STYLES:
        raise ValueError(f"repair style must be one of {', '.join(REPAIR_STYLES)}, got {repair_style!r}")
    if turn == 3:
        return TurnInput(
            turn=3,
            camera_block=None,
            speech=scenario.repair_anchor(repair_style),
            camera_source=None,
            speech_source="authored",
        )
    if turn not in (1, 2):
        raise ValueError(f"no turn {turn}: a scenario has turns 1, 2 and 3 (the repair)")
    image = (scenario.turn_1_image if turn == 1 else scenario.turn_2_image) if camera else None
    speech = scenario.turn_1_user if turn == 1 else scenario.turn_2_user
    context = scenario.context_image if (camera and turn == 1) else None
    return TurnInput(
        turn=turn,
        camera_block=image or None,
        speech=speech,
        camera_source="authored" if image else None,
        speech_source="authored",
        context_block=context or None,
        context_source="authored" if context else None,
    )


@dataclass(frozen=True, kw_only=True)
class TurnResult:
    """One turn as played: its input, the reply, and (simulated glasses) what was
    played and how long each stage took."""

    turn: int
    input: TurnInput
    reply: Reply
    metrics: TurnMetrics = TurnMetrics()  # stream: latencies from the end of speech
    glasses: GlassesFacts = GlassesFacts()  # stream: what the glasses played
    frames: FrameFacts = FrameFacts()  # stream: which frames reached the assistant
    turn_end: TurnEnd = TurnEnd()  # stream: which rule ended the turn, after how much silence

    def to_json(self) -> dict:
        reply = self.reply
        return {
            "turn": self.turn,
            "input": self.input.to_json(),
            "reply": {
                "text": reply.text,
                "model": reply.model,
                "usage": reply.usage.to_json() if reply.usage.reported else None,  # unknown, never 0
                "latency_s": round(reply.latency_s, 4),
                "first_token_s": None if reply.first_token_s is None else round(reply.first_token_s, 4),
                "first_audio_s": None if reply.first_audio_s is None else round(reply.first_audio_s, 4),
                "first_voice_s": None if reply.first_voice_s is None else round(reply.first_voice_s, 4),
                "audio_file": reply.audio_file,
                "heard": reply.heard,
                "cached": reply.cached,
                "session_lost": reply.session_lost,
                "incomplete": reply.incomplete,
                "transcription": None if reply.transcription is None else reply.transcription.to_json(),
            },
            "metrics": self.metrics.to_json(),
            "glasses": self.glasses.to_json(),
            "frames": self.frames.to_json(),
            "turn_end": self.turn_end.to_json(),
        }

    @classmethod
    def from_json(cls, data: Any, where: str) -> TurnResult:
        if not isinstance(data, dict) or not isinstance(data.get("reply"), dict):
            raise RecordError([f"{where}: expected an object with 'turn', 'input' and 'reply'"])
        turn_input = TurnInput.from_json(data.get("input"), f"{where}: input")
        reply = data["reply"]
        if not isinstance(reply.get("text"), str):
            raise RecordError([f"{where}: field 'reply.text' must be a string"])
        parts: dict = {}
        problems: list[str] = []
        for kind, name in (
            (TurnMetrics, "metrics"),
            (GlassesFacts, "glasses"),
            (FrameFacts, "frames"),
            (TurnEnd, "turn_end"),
        ):
            try:
                parts[name] = kind.from_json(data.get(name), f"{where}: {name}")
            except RecordError as exc:
                problems += exc.problems
        try:
            recorded = reply_from_json(reply, reply["text"], str(reply.get("model") or ""), where)
        except RecordError as exc:
            problems += exc.problems
        if problems:
            raise RecordError(problems)
        return cls(turn=turn_input.turn, input=turn_input, reply=recorded, **parts)


def reply_from_json(data: dict, text: str, model: str, where: str = "reply") -> Reply:
    """A recorded reply; a field of the wrong type is a `RecordError` naming it."""
    problems = []

    def seconds(name: str, default=None):
        value = data.get(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            problems.append(f"{where}: field 'reply.{name}' must be a number of seconds or null, got {value!r}"[:300])
            return default
        return float(value)

    def words(name: str):
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            problems.append(f"{where}: field 'reply.{name}' must be a string or null, got {type(value).__name__}")
            return None
        return value

    usage = usage_from_json(data.get("usage"), f"{where}: field 'reply.usage", problems) or Usage()
    transcription = None
    if data.get("transcription") is not None:
        try:
            transcription = TranscriptionUsage.from_json(data["transcription"])
        except UsageError as exc:
            problems += [f"{where}: field 'reply.transcription': {problem}" for problem in exc.problems]
    reply = Reply(
        text=text,
        model=model,
        usage=usage,
        latency_s=seconds("latency_s", 0.0),
        first_token_s=seconds("first_token_s"),
        first_audio_s=seconds("first_audio_s"),
        heard=words("heard"),
        audio_file=words("audio_file"),
        first_voice_s=seconds("first_voice_s"),
        cached=data.get("cached") is True,
        session_lost=words("session_lost"),
        incomplete=words("incomplete"),
        transcription=transcription,
    )
    if problems:
        raise RecordError(problems)
    return reply


def usage_from_json(data: Any, at: str, problems: list[str]) -> Usage | None:
    """A recorded usage object (None when absent). Older records hold the two totals only: the
    split reads as unknown. `at` is "WHERE: field 'PATH" (closed here); problems go to `problems`."""
    if data is None:
        return None
    if not isinstance(data, dict):
        problems.append(f"{at}' must be an object, got {type(data).__name__}")
        return None
    try:
        return Usage.from_json(data)
    except UsageError as exc:  # each "field 'NAME' must be ..."
        problems += [f"{at}.{problem.removeprefix('field ').lstrip(chr(39))}" for problem in exc.problems]
        return None


def judge_case(scenario: Scenario, turn: int, response: str, inputs: list[TurnInput]) -> JudgeCase:
    """The judge's view of a turn: the conversation exactly as it was sent."""
    by_turn = {i.turn: i for i in inputs}
    return JudgeCase(
        scenario=scenario,
        turn=turn,
        user_message=by_turn[turn].user_message,
        response=response,
        turn_1_speech=by_turn[1].speech,
        turn_2_message=by_turn[2].user_message,
        context_sent=by_turn[1].context_block is not None,
    )
