"""The ground floor: what one turn sends, and what one trial records.

- `build_user_turn` and `build_context_message`: the only builders of the
  spec's message strings (`[Camera: {block}]\\n{speech}`, the block left out
  when there is none; a context block alone as `[Camera: {block}]`).
- `TurnInput`: one turn's camera block and speech with where each came from
  (`authored` text of the scenario, or `perceived` from media).
- `TurnResult`: a turn's input and the assistant's reply; both
  conversations (text proxy and simulated glasses) return it.
- `TrialRecord`: one line of `transcripts.jsonl`. `to_json`/`from_json` are
  the only place its field names are spelled; `from_json` also reads older
  records (schema 1) and transcripts published by other implementations
  (`change_type`, `turn_N_judge_policy`), and names the file, line and field
  of every problem it finds.

Every package may import this module; it imports only the scenario model,
the `Reply` and `Message` types of the candidate seam and the judge's
`Verdict` and `JudgeCase`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Mapping, NamedTuple

from benchmark.candidates.base import Message, Reply, TranscriptionUsage, Usage, UsageError
from benchmark.judges.base import LABELS, JudgeCase, Verdict
from benchmark.scenario import JSONL_CUE_RENAMES, InputProblems, Scenario
from benchmark.watching import SILENCE_MARKER, Watching, WatchingError

SCHEMA_VERSION = 2
# where a channel's content came from: the scenario's authored text, perception
# (Whisper, a scene describer) run on media, or the media itself sent to a
# multimodal API (the record then holds Whisper's transcript and MEDIA_CAMERA
# in place of the audio and the image)
SOURCES = ("authored", "perceived", "media")
PROACTIVE_TARGETS = ("speak_up", "stay_quiet")  # a proactive trial's target: an event scenario's, a quiet control's
MEDIA_CAMERA = "(the camera frame, sent as an image)"
REPAIR_STYLES = ("named", "deictic")
# why a cell did not give a scored Turn 2 (`TrialRecord.fault`; the rule is `benchmark.faults`): the API's
# faults, ours, and the judge's
FAULTS = ("rate_limited", "session_limit", "connection_lost", "refused", "empty_reply", "timeout", "provider_error",
          "harness_error", "judge_unscored")


def build_user_turn(camera_block: str | None, speech: str) -> str:
    return f"[Camera: {camera_block}]\n{speech}" if camera_block else speech


def build_context_message(camera_block: str) -> str:
    return f"[Camera: {camera_block}]"


# appended to the system prompt of a proactive session: when to speak unasked, and the silence marker
PROACTIVE_INSTRUCTION = (
    "You see through the user's glasses. Messages that hold only a camera view are not questions: nobody "
    "spoke. Answer one of them with a single short sentence only when the user needs to hear something now "
    "(a danger, a mistake in what they are doing, something they are about to miss or leave behind, or "
    f"what they asked you to watch for); otherwise answer exactly {SILENCE_MARKER} and nothing else.")
# a realtime API has the frames already: a probe names none
PROBE_CUE = "(camera view, nobody spoke)"


def build_probe_message(camera_block: str | None) -> str:
    """A probe's user message: the described view for a chat model; the cue alone for a realtime API,
    which was sent the frames themselves."""
    return build_context_message(camera_block) if camera_block else PROBE_CUE


class RecordError(InputProblems):
    """An invalid trial record."""


# ---------------------------------------------------------------- one turn

@dataclass(frozen=True)
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
        return {"turn": self.turn, "camera_block": self.camera_block, "camera_source": self.camera_source,
                "speech": self.speech, "speech_source": self.speech_source, "context_block": self.context_block,
                "context_source": self.context_source, "timings": dict(self.timings)}

    @classmethod
    def from_json(cls, data: Any, where: str = "turn input") -> "TurnInput":
        if not isinstance(data, dict):
            raise RecordError([f"{where}: expected an object, got {type(data).__name__}"])
        problems = []
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
                problems.append(f"{where}: field '{name}' must be one of {', '.join(SOURCES)} or null, "
                                f"got {data.get(name)!r}")
        timings = data.get("timings") or {}
        if not isinstance(timings, dict):
            problems.append(f"{where}: field 'timings' must be an object")
        if problems:
            raise RecordError(problems)
        return cls(turn, data.get("camera_block"), data["speech"], data.get("camera_source"),
                   data.get("speech_source"), data.get("context_block"), data.get("context_source"), dict(timings))


def authored_turn_input(scenario: Scenario, turn: int, *, camera: bool = True,
                        repair_style: str = "named") -> TurnInput:
    """The text proxy's input for a turn: the scenario's authored camera block and speech.

    Turn 3 is the repair anchor alone. `camera=False` is the camera ablation:
    no camera block and no context message.
    """
    if repair_style not in REPAIR_STYLES:
        raise ValueError(f"repair style must be one of {', '.join(REPAIR_STYLES)}, got {repair_style!r}")
    if turn == 3:
        return TurnInput(3, None, scenario.repair_anchor(repair_style), None, "authored")
    if turn not in (1, 2):
        raise ValueError(f"no turn {turn}: a scenario has turns 1, 2 and 3 (the repair)")
    image = (scenario.turn_1_image if turn == 1 else scenario.turn_2_image) if camera else None
    speech = scenario.turn_1_user if turn == 1 else scenario.turn_2_user
    context = scenario.context_image if (camera and turn == 1) else None
    return TurnInput(turn, image or None, speech, "authored" if image else None, "authored",
                     context or None, "authored" if context else None)


# the stream's stages, seconds from the end of the user's speech: the key in a record, and what it measures
LATENCY_STAGES = {
    "speech_end_to_transcript_final": "end of speech to final transcript",
    "speech_end_to_camera_block": "end of speech to camera block",
    "speech_end_to_first_token": "end of speech to first reply text",
    "speech_end_to_reply_done": "end of speech to reply done",
}


@dataclass(frozen=True)
class TurnMetrics:
    """What the simulated glasses' server measured on one turn: seconds from the
    end of the user's speech to each stage, from the end of the turn to the
    first reply text, and the age of the newest frame a realtime API had when
    speech ended. All None on the text proxy."""

    transcript_final: float | None = None
    camera_block: float | None = None
    first_token: float | None = None
    first_audio: float | None = None
    reply_done: float | None = None
    turn_end_to_first_token: float | None = None
    last_frame_age_s: float | None = None

    # field -> its key in a record and in the `metrics` event
    KEYS: ClassVar[dict[str, str]] = {
        "transcript_final": "speech_end_to_transcript_final", "camera_block": "speech_end_to_camera_block",
        "first_token": "speech_end_to_first_token", "first_audio": "speech_end_to_first_audio",
        "reply_done": "speech_end_to_reply_done", "turn_end_to_first_token": "turn_end_to_first_token",
        "last_frame_age_s": "last_frame_age_s"}

    @property
    def measured(self) -> bool:
        return any(getattr(self, name) is not None for name in self.KEYS)

    def stage(self, key: str) -> float | None:
        """A stage by its record key (one of `LATENCY_STAGES`)."""
        return getattr(self, next(name for name, k in self.KEYS.items() if k == key))

    def to_json(self) -> dict:
        if not self.measured:
            return {}
        return {key: None if getattr(self, name) is None else round(getattr(self, name), 4)
                for name, key in self.KEYS.items()}

    @classmethod
    def from_json(cls, data: Any, where: str = "metrics") -> "TurnMetrics":
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise RecordError([f"{where}: expected an object, got {type(data).__name__}"])
        values, problems = {}, []
        for name, key in cls.KEYS.items():
            value = data.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                problems.append(f"{where}: field '{key}' must be a number of seconds or null, got {value!r}"[:300])
            else:
                values[name] = value
        if problems:
            raise RecordError(problems)
        return cls(**values)


@dataclass(frozen=True)
class GlassesFacts:
    """What the simulated glasses played on one turn (nothing on the text proxy). Stream times
    are the glasses' clock (`t_ms` on the wire), so they line up with `FrameFacts.sent_ms`."""

    speech_media: str | None = None  # where the spoken audio came from: a recording, TTS, ...
    frames_sent: bool | None = None  # the turn had camera frames to send
    synthetic_frames: bool | None = None  # frames drawn from the authored camera text
    # where the turn's frames came from: "recording" (media/), "synthetic" (the camera text drawn) or
    # "pictograph" (the scene spec drawn as pictures); None: no frames, or an older record
    frames_source: str | None = None
    lead_ms: int | None = None  # silence before the speech (the staleness gap on a sweep's Turn 2)
    script: str | None = None  # the scenario's line the glasses spoke (word error rate reference)
    camera_script: str | None = None  # the authored camera text of the turn's scene (camera similarity reference)
    start_ms: int | None = None  # stream time the turn's audio began (the speech WAV's first sample)
    scene_ms: int | None = None  # stream time the turn's own scene appeared (its first frame)
    speech_end_ms: int | None = None  # stream time the server heard the speech end (`transcript.final`)
    speech_file: str | None = None  # the turn's audio as played, a WAV under RUN_DIR/audio/ (capped per run)
    impairment: str | None = None  # the impairment profile the turn was played under
    impairment_seed: int | None = None  # the seed of its random draws
    frames_played: int | None = None  # the turn's camera frames, before the uplink lost any
    frames_degraded: int | None = None  # frames the profile's video impairments changed
    audio_lost_ms: tuple[int, ...] = ()  # stream times of the audio chunks the uplink lost (the server heard a gap)
    frames_lost_ms: tuple[int, ...] = ()  # stream times of the frames the uplink lost (never sent)
    uplink_delay_ms: float | None = None  # mean delay the uplink added to what it delivered
    # the audio itself (PCM16 mono 16 kHz) until the runner saves it as `speech_file`; never recorded
    speech_audio: bytes = field(default=b"", repr=False, compare=False)

    KINDS: ClassVar[dict[str, type]] = {
        "speech_media": str, "frames_sent": bool, "synthetic_frames": bool, "frames_source": str, "lead_ms": int, "script": str,
        "camera_script": str, "start_ms": int, "scene_ms": int, "speech_end_ms": int, "speech_file": str,
        "impairment": str, "impairment_seed": int, "frames_played": int, "frames_degraded": int, "audio_lost_ms": list,
        "frames_lost_ms": list, "uplink_delay_ms": float}
    TIMES: ClassVar[tuple[str, ...]] = ("audio_lost_ms", "frames_lost_ms")  # lists of stream times

    def to_json(self) -> dict:
        data = {name: getattr(self, name) for name in self.KINDS if getattr(self, name) not in (None, ())}
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}

    @classmethod
    def from_json(cls, data: Any, where: str = "glasses") -> "GlassesFacts":
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise RecordError([f"{where}: expected an object, got {type(data).__name__}"])
        kinds = {name: (int, float) if kind is float else kind for name, kind in cls.KINDS.items()}
        problems = [f"{where}: field '{name}' must be {cls.KINDS[name].__name__} or null, got {data[name]!r}"[:300]
                    for name, kind in kinds.items() if data.get(name) is not None
                    and (not isinstance(data[name], kind) or (kind is not bool and isinstance(data[name], bool)))]
        for name in cls.TIMES:
            if isinstance(data.get(name), list) and not all(isinstance(t, int) for t in data[name]):
                problems.append(f"{where}: field '{name}' must be a list of integers (ms)")
        if problems:
            raise RecordError(problems)
        values = {name: data.get(name) for name in kinds}
        for name in cls.TIMES:
            values[name] = tuple(values[name] or ())
        return cls(**values)


class SweepPoint(NamedTuple):
    """Where a stream cell sits on the sweep axes; each None when that axis is not swept."""

    staleness_ms: int | None = None
    frame_policy: str | None = None
    impairment: str | None = None
    proactive: str | None = None  # a proactive trial's strategy (`change`, `every:N`, `native`)


SCENES = ("current", "earlier", "unknown")  # which scene the newest frame sent showed


@dataclass(frozen=True)
class FrameFacts:
    """Which camera frames reached the assistant on one stream turn (nothing on the text
    proxy): counted over the stream times after the previous turn's end of speech up to
    this turn's, under the session's frame policy. The server counts; the glasses, which
    know what each frame shows, add `newest_frame_scene`."""

    policy: str | None = None  # the frame policy in force (`fps:1`, `end`, ...)
    offered: int | None = None  # frames the camera offered
    sent: int | None = None  # frames the policy let through
    sent_bytes: int | None = None  # their size as sent
    sent_ms: tuple[int, ...] = ()  # their stream times
    window_ms: int | None = None  # the stream time counted: from the previous end of speech (or the first media)
    newest_ms: int | None = None  # stream time of the newest frame sent by the end of speech (any turn's)
    newest_frame_scene: str | None = None  # that frame shows the turn's own scene (`current`), an `earlier` one, or `unknown`
    # the frames sent, kept as small JPEGs in the run dir: (stream time, file under RUN_DIR/frames/)
    thumbnails: tuple[tuple[int, str], ...] = ()
    # their JPEG bytes until the runner saves them as `thumbnails`; never recorded
    pictures: tuple[tuple[int, bytes], ...] = field(default=(), repr=False, compare=False)

    KINDS: ClassVar[dict[str, type]] = {"policy": str, "offered": int, "sent": int, "sent_bytes": int,
                                        "sent_ms": list, "window_ms": int, "newest_ms": int,
                                        "newest_frame_scene": str, "thumbnails": list}

    def to_json(self) -> dict:
        data = {name: getattr(self, name) for name in self.KINDS if getattr(self, name) is not None}
        if self.policy is None:
            return {}
        data["sent_ms"] = list(self.sent_ms)
        data.pop("thumbnails")
        if self.thumbnails:
            data["thumbnails"] = [{"t_ms": t, "file": name} for t, name in self.thumbnails]
        return data

    @classmethod
    def from_json(cls, data: Any, where: str = "frames") -> "FrameFacts":
        if not data:
            return cls()
        if not isinstance(data, dict):
            raise RecordError([f"{where}: expected an object, got {type(data).__name__}"])
        problems = [f"{where}: field '{name}' must be {kind.__name__} or null, got {data[name]!r}"[:300]
                    for name, kind in cls.KINDS.items() if data.get(name) is not None
                    and (not isinstance(data[name], kind) or isinstance(data[name], bool))]
        times = data.get("sent_ms") or []
        if isinstance(times, list) and not all(isinstance(t, int) and not isinstance(t, bool) for t in times):
            problems.append(f"{where}: field 'sent_ms' must be a list of integers (ms)")
        if data.get("newest_frame_scene") not in (None, *SCENES):
            problems.append(f"{where}: field 'newest_frame_scene' must be one of {', '.join(SCENES)}, "
                            f"got {data['newest_frame_scene']!r}"[:300])
        kept = data.get("thumbnails") or []
        if isinstance(kept, list) and not all(
                isinstance(k, dict) and isinstance(k.get("t_ms"), int) and not isinstance(k.get("t_ms"), bool)
                and isinstance(k.get("file"), str) for k in kept):
            problems.append(f"{where}: field 'thumbnails' must be a list of {{t_ms: integer, file: string}}")
        if problems:
            raise RecordError(problems)
        values = {name: data.get(name) for name in cls.KINDS}
        values["sent_ms"] = tuple(times) if isinstance(times, list) else ()
        values["thumbnails"] = tuple((k["t_ms"], k["file"]) for k in kept) if isinstance(kept, list) else ()
        return cls(**values)


@dataclass(frozen=True)
class TurnEnd:
    """How a stream turn was ended (empty on the text proxy and in records made before the
    end-of-turn model): the rule (`model`: the end-of-turn model heard a finished utterance
    after a short silence; `silence`: the fixed silence ran out; `hint`: the client's
    `turn.end`; `cap`: the longest utterance), the silence heard after the speech when it
    ended (stream seconds), the wall seconds from the end of speech reaching the server to
    the decision, and the model's last score in that pause (None: it was not asked)."""

    rule: str | None = None
    silence_s: float | None = None
    after_speech_s: float | None = None
    probability: float | None = None

    RULES: ClassVar[tuple[str, ...]] = ("model", "silence", "hint", "cap")
    # field -> its key in a record's `turn_end` and in the `metrics` event's
    KEYS: ClassVar[dict[str, str]] = {"rule": "rule", "silence_s": "silence_waited_s",
                                      "after_speech_s": "speech_end_to_turn_end", "probability": "model_probability"}

    def to_json(self) -> dict:
        if self.rule is None:
            return {}
        return {key: getattr(self, name) if name == "rule" or getattr(self, name) is None
                else round(getattr(self, name), 4) for name, key in self.KEYS.items()}

    @classmethod
    def from_json(cls, data: Any, where: str = "turn_end") -> "TurnEnd":
        if not data:
            return cls()
        if not isinstance(data, dict):
            raise RecordError([f"{where}: expected an object, got {type(data).__name__}"])
        values, problems = {}, []
        for name, key in cls.KEYS.items():
            value = data.get(key)
            if name == "rule":
                if value not in cls.RULES:
                    problems.append(f"{where}: field '{key}' must be one of {', '.join(cls.RULES)}, got {value!r}"[:300])
            elif value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                problems.append(f"{where}: field '{key}' must be a number or null, got {value!r}"[:300])
            values[name] = value
        if problems:
            raise RecordError(problems)
        return cls(**values)


@dataclass(frozen=True)
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
            "reply": {"text": reply.text, "model": reply.model,
                      "usage": reply.usage.to_json() if reply.usage.reported else None,  # unknown, never 0
                      "latency_s": round(reply.latency_s, 4),
                      "first_token_s": None if reply.first_token_s is None else round(reply.first_token_s, 4),
                      "first_audio_s": None if reply.first_audio_s is None else round(reply.first_audio_s, 4),
                      "first_voice_s": None if reply.first_voice_s is None else round(reply.first_voice_s, 4),
                      "audio_file": reply.audio_file, "heard": reply.heard, "cached": reply.cached,
                      "session_lost": reply.session_lost, "incomplete": reply.incomplete,
                      "transcription": None if reply.transcription is None else reply.transcription.to_json()},
            "metrics": self.metrics.to_json(),
            "glasses": self.glasses.to_json(),
            "frames": self.frames.to_json(),
            "turn_end": self.turn_end.to_json(),
        }

    @classmethod
    def from_json(cls, data: Any, where: str) -> "TurnResult":
        if not isinstance(data, dict) or not isinstance(data.get("reply"), dict):
            raise RecordError([f"{where}: expected an object with 'turn', 'input' and 'reply'"])
        turn_input = TurnInput.from_json(data.get("input"), f"{where}: input")
        reply = data["reply"]
        if not isinstance(reply.get("text"), str):
            raise RecordError([f"{where}: field 'reply.text' must be a string"])
        parts, problems = [], []
        for kind, name in ((TurnMetrics, "metrics"), (GlassesFacts, "glasses"), (FrameFacts, "frames"),
                           (TurnEnd, "turn_end")):
            try:
                parts.append(kind.from_json(data.get(name), f"{where}: {name}"))
            except RecordError as exc:
                problems += exc.problems
        try:
            recorded = _reply(reply, reply["text"], str(reply.get("model") or ""), where)
        except RecordError as exc:
            problems += exc.problems
        if problems:
            raise RecordError(problems)
        return cls(turn_input.turn, turn_input, recorded, *parts)


def _reply(data: dict, text: str, model: str, where: str = "reply") -> Reply:
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

    usage = _usage(data.get("usage"), f"{where}: field 'reply.usage", problems) or Usage()
    transcription = None
    if data.get("transcription") is not None:
        try:
            transcription = TranscriptionUsage.from_json(data["transcription"])
        except UsageError as exc:
            problems += [f"{where}: field 'reply.transcription': {problem}" for problem in exc.problems]
    reply = Reply(text, model, usage, seconds("latency_s", 0.0), seconds("first_token_s"),
                  seconds("first_audio_s"), words("heard"), audio_file=words("audio_file"),
                  first_voice_s=seconds("first_voice_s"), cached=data.get("cached") is True,
                  session_lost=words("session_lost"), incomplete=words("incomplete"), transcription=transcription)
    if problems:
        raise RecordError(problems)
    return reply


def _usage(data: Any, at: str, problems: list[str]) -> Usage | None:
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


def _turn_from_v1(data: Any, record: dict, where: str) -> TurnResult:
    """A schema-1 `turns` entry: provenance and reply facts side by side."""
    if not isinstance(data, dict) or not isinstance(data.get("turn"), int):
        raise RecordError([f"{where}: expected an object with an integer 'turn'"])
    turn = data["turn"]
    turn_input = TurnInput.from_json({**data, "speech": data.get("transcript") or "", "timings": {}}, where)
    text = record.get(f"turn_{turn}_response")
    glasses = GlassesFacts.from_json({key: data[key] for key in ("speech_media", "frames_sent") if key in data},
                                     f"{where}: glasses")
    return TurnResult(turn, turn_input, _reply(data, text if isinstance(text, str) else "",
                                               str(record.get("candidate_model") or ""), where),
                      TurnMetrics.from_json(data.get("metrics"), f"{where}: metrics"), glasses)


def judge_case(scenario: Scenario, turn: int, response: str, inputs: list[TurnInput]) -> JudgeCase:
    """The judge's view of a turn: the conversation exactly as it was sent."""
    by_turn = {i.turn: i for i in inputs}
    return JudgeCase(scenario, turn, by_turn[turn].user_message, response, turn_1_speech=by_turn[1].speech,
                     turn_2_message=by_turn[2].user_message, context_sent=by_turn[1].context_block is not None)


# ---------------------------------------------------------------- one trial

# field name in the record -> other names that mean the same (other implementations' transcripts)
ALIASES = {
    "cue_type": ("change_type",),
    "turn_2_judge_label": ("turn_2_judge_policy",),
    "turn_3_judge_label": ("turn_3_judge_policy",),
    "turn_2_ranking_judge_label": ("turn_2_ranking_judge_policy",),
}
VERDICTS = {"turn_2_judge": "turn_2_judge", "turn_2_ranking_judge": "turn_2_ranking_judge",
            "turn_3_judge": "turn_3_judge"}  # dataclass field -> key prefix in the JSON form


@dataclass(frozen=True)
class TrialRecord:
    """One trial: the cell, every message and reply, the verdicts, per-turn provenance."""

    scenario_id: str
    condition: str
    trial: int
    target_context: str
    cue_type: str
    difficulty_tier: str = "unknown"
    activity_domain: str | None = None
    subset: str = "bank"  # the bank subset (the primary score) or contrast
    via: str | None = None
    candidate_model: str | None = None
    system_prompt: str | None = None
    messages: tuple[Message, ...] = ()
    turns: tuple[TurnResult, ...] = ()
    turn_1_response: str | None = None
    turn_2_user_message: str | None = None
    turn_2_response: str | None = None
    turn_2_judge: Verdict | None = None
    turn_2_code_signals: dict | None = None
    turn_2_ranking_judge: Verdict | None = None
    turn_3_repair_attempted: bool = False
    turn_3_message: str | None = None
    turn_3_response: str | None = None
    turn_3_judge: Verdict | None = None
    repair_target_context: str | None = None  # the bank's turn_3_target_context; None: target_context
    turn_2_previous_judge_label: str | None = None  # set by a rescore: the label before it
    turn_3_previous_judge_label: str | None = None
    staleness_ms: int | None = None  # staleness sweep: Turn 2 speech began this long after the scene change
    frame_policy: str | None = None  # frame policy sweep: the policy this cell ran under
    impairment: str | None = None  # impairment sweep: the profile this cell's glasses played under
    proactive: str | None = None  # a proactive trial's strategy (a sweep axis: `--proactive change,every:5`)
    watching: Watching | None = None  # a proactive trial's stream, event, probes and remarks
    error: str | None = None
    fault: str | None = None  # one of FAULTS when the cell errored or its Turn 2 is unscored
    wall_s: float | None = None
    schema_version: int = SCHEMA_VERSION

    # -- what scoring reads
    @property
    def cell(self) -> tuple:
        """(scenario, condition, trial), plus the staleness gap, frame policy and impairment profile
        in a sweep."""
        return (self.scenario_id, self.condition, self.trial, *(v for v in self.sweep if v is not None))

    @property
    def sweep(self) -> SweepPoint:
        return SweepPoint(self.staleness_ms, self.frame_policy, self.impairment, self.proactive)

    @property
    def errored(self) -> bool:
        return self.error is not None

    @property
    def turn_2_label(self) -> str | None:
        return self.turn_2_judge.label if self.turn_2_judge else None

    @property
    def turn_3_label(self) -> str | None:
        return self.turn_3_judge.label if self.turn_3_judge else None

    @property
    def ranking_label(self) -> str | None:
        return self.turn_2_ranking_judge.label if self.turn_2_ranking_judge else None

    @property
    def scored(self) -> bool:
        """Turn 2 has a judge label and the trial did not error."""
        return not self.errored and self.turn_2_label is not None

    @property
    def passed(self) -> bool | None:
        """Turn 2 label matches the target context; None when not scored."""
        return self.turn_2_label == self.target_context if self.scored else None

    @property
    def repair_passed(self) -> bool | None:
        """Turn 3 label matches the repair's target (`repair_target_context`, recorded
        from the bank's `turn_3_target_context`; records without it: the target
        context); None when there is no scored Turn 3."""
        if self.errored or not self.turn_3_repair_attempted or self.turn_3_label is None:
            return None
        return self.turn_3_label == (self.repair_target_context or self.target_context)

    def turn_input(self, turn: int) -> TurnInput | None:
        return next((t.input for t in self.turns if t.turn == turn), None)

    def judge_case(self, scenario: Scenario, turn: int) -> JudgeCase:
        """The judge's view of Turn 2 or 3 as recorded. Records without per-turn
        inputs (older ones, other implementations') fall back to the recorded
        messages, then to the bank's authored text."""
        response = (self.turn_2_response if turn == 2 else self.turn_3_response) or ""
        inputs = {t.turn: t.input for t in self.turns}
        if 1 in inputs and 2 in inputs and (turn == 2 or 3 in inputs):
            return judge_case(scenario, turn, response, list(inputs.values()))
        users = [m.text for m in self.messages if m.role == "user"]
        sent = 3 if self.turn_3_repair_attempted else 2
        if len(users) >= sent:
            turn_2 = users[-2] if self.turn_3_repair_attempted else users[-1]
            turn_3 = users[-1] if self.turn_3_repair_attempted else None
            context_sent = len(users) > sent
        else:
            turn_2 = self.turn_2_user_message or build_user_turn(scenario.turn_2_image, scenario.turn_2_user)
            turn_3 = self.turn_3_message
            context_sent = bool(scenario.context_image)
        if turn == 3 and turn_3 is None:
            turn_3 = scenario.repair_anchor("named")
        return JudgeCase(scenario, turn, turn_2 if turn == 2 else turn_3, response, turn_2_message=turn_2,
                         context_sent=context_sent)

    # -- the JSON form
    def to_json(self) -> dict:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in VERDICTS:
                out.update(_verdict_json(VERDICTS[f.name], value))
            elif f.name == "messages":
                out["messages"] = [{"role": m.role, "text": m.text} for m in value]
            elif f.name == "turns":
                out["turns"] = [t.to_json() for t in value]
            elif f.name == "watching":
                out["watching"] = None if value is None else value.to_json()
            else:
                out[f.name] = value
            if f.name == "turn_2_judge":
                out["turn_2_passed"] = self.passed
            if f.name == "turn_3_judge":
                out["turn_3_repair_passed"] = self.repair_passed
        return out

    def to_line(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, raw: Any, where: str = "record") -> "TrialRecord":
        """Read one record (ours of any schema version, or another implementation's);
        raises `RecordError` naming `where` and the field of every problem."""
        if not isinstance(raw, dict):
            raise RecordError([f"{where}: expected a JSON object, got {type(raw).__name__}"])
        return _Reader(raw, where).record()

    def replace(self, **changes: Any) -> "TrialRecord":
        return replace(self, **changes)


def _verdict_json(prefix: str, verdict: Verdict | None) -> dict:
    values = (None,) * 8 if verdict is None else (
        verdict.label, verdict.rationale, verdict.judge, verdict.prompt, verdict.raw, verdict.unscored_reason,
        verdict.cached, None if verdict.usage is None else verdict.usage.to_json())
    names = ("label", "rationale", "name", "prompt", "raw", "unscored_reason", "cached", "usage")
    return {f"{prefix}_{name}": value for name, value in zip(names, values)}


# the longest value read from a record: names that reports group and key tables on, and free text
NAMES = ("scenario_id", "condition", "cue_type", "difficulty_tier", "activity_domain", "subset", "via",
         "candidate_model", "target_context")
NAME_LIMIT = 200
TEXT_LIMIT = 1_000_000


class _Reader:
    """Collects every problem of one raw record, then builds the `TrialRecord`."""

    def __init__(self, raw: dict, where: str):
        self.raw, self.where, self.problems = raw, where, []

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
            self.problems.append(f"{self.where}: field '{name}' is {len(value):,} characters long; at most "
                                 f"{limit:,} are read")
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
            self.problems.append(f"{self.where}: field '{name}' must be one of {', '.join(LABELS)} or null, "
                                 f"got {value!r}")
            return None
        return value

    def fault(self) -> str | None:
        value = self.raw.get("fault")
        if value is not None and value not in FAULTS:
            self.problems.append(f"{self.where}: field 'fault' must be one of {', '.join(FAULTS)} or null, "
                                 f"got {value!r}"[:300])
            return None
        return value

    def verdict(self, prefix: str) -> Verdict | None:
        label = self.label(f"{prefix}_label")
        reason = self.raw.get(f"{prefix}_unscored_reason")
        if reason is None and prefix != "turn_2_ranking_judge":  # rescore once wrote turn_N_unscored_reason
            reason = self.raw.get(prefix.replace("_judge", "") + "_unscored_reason")
        rest = {key: self.text(f"{prefix}_{key}") for key in ("rationale", "name", "prompt", "raw")}
        if reason is not None and not isinstance(reason, str):
            self.problems.append(f"{self.where}: field '{prefix}_unscored_reason' must be a string or null, "
                                 f"got {type(reason).__name__}")
            reason = None
        usage = _usage(self.raw.get(f"{prefix}_usage"), f"{self.where}: field '{prefix}_usage", self.problems)
        if label is None and reason is None and not any(rest.values()):
            return None
        return Verdict(label, rest["rationale"] or "", rest["name"] or "", reason, rest["prompt"] or "",
                       rest["raw"] or "", self.raw.get(f"{prefix}_cached") is True, usage)

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
            out.append(Message(m["role"], m["text"]))
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
                    out.append(_turn_from_v1(entry, self.raw, at))
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

    def record(self) -> TrialRecord:
        raw, where = self.raw, self.where
        index = raw.get("trial")
        if isinstance(index, bool) or not isinstance(index, int):
            self.problems.append(f"{where}: field 'trial' must be an integer, got {index!r}")
        target = self.text("target_context", True)
        if target is not None and target not in (*LABELS, *PROACTIVE_TARGETS):
            self.problems.append(f"{where}: field 'target_context' must be one of "
                                 f"{', '.join((*LABELS, *PROACTIVE_TARGETS))}, got {target!r}")
        cue = self.text("cue_type", True)
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
            scenario_id=self.text("scenario_id", True), condition=self.text("condition", True), trial=index,
            target_context=target, cue_type=JSONL_CUE_RENAMES.get(cue, cue),
            difficulty_tier=self.text("difficulty_tier") or "unknown", activity_domain=self.text("activity_domain"),
            subset=self.text("subset") or "bank",
            via=self.text("via"), candidate_model=self.text("candidate_model"),
            system_prompt=self.text("system_prompt"), messages=self.messages(), turns=self.turns(),
            turn_1_response=self.text("turn_1_response"), turn_2_user_message=self.text("turn_2_user_message"),
            turn_2_response=self.text("turn_2_response"), turn_2_judge=self.verdict("turn_2_judge"),
            turn_2_code_signals=signals if isinstance(signals, dict) else None,
            turn_2_ranking_judge=self.verdict("turn_2_ranking_judge"), turn_3_repair_attempted=attempted,
            turn_3_message=self.text("turn_3_message"), turn_3_response=self.text("turn_3_response"),
            turn_3_judge=self.verdict("turn_3_judge"), repair_target_context=self.label("repair_target_context"),
            turn_2_previous_judge_label=self.label("turn_2_previous_judge_label"),
            turn_3_previous_judge_label=self.label("turn_3_previous_judge_label"),
            staleness_ms=self.integer("staleness_ms"), frame_policy=self.text("frame_policy"),
            impairment=self.text("impairment"), proactive=self.text("proactive"), watching=self.watching(),
            error=error, fault=self.fault(), wall_s=wall if isinstance(wall, (int, float)) else None,
            schema_version=raw.get("schema_version") if isinstance(raw.get("schema_version"), int) else 0,
        )
        if self.problems:
            raise RecordError(self.problems)
        return TrialRecord(**record)
