"""What the simulated glasses and the server measured on one stream turn, each with its JSON form: the
latencies (`TurnMetrics`), what the glasses played (`GlassesFacts`), which frames reached the assistant
(`FrameFacts`), how the turn was ended (`TurnEnd`), and where a cell sits on the sweep axes
(`SweepPoint`). All empty on the text proxy. `RecordError` is what every record reader raises."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from core.scenario import InputProblems

# where a channel's content came from: the scenario's authored text, perception
# (Whisper, a scene describer) run on media, or the media itself sent to a
# multimodal API (the record then holds Whisper's transcript and MEDIA_CAMERA
# in place of the audio and the image)
SOURCES = ("authored", "perceived", "media")
MEDIA_CAMERA = "(the camera frame, sent as an image)"


class RecordError(InputProblems):
    """An invalid trial record."""


# the stream's stages, seconds from the end of the user's speech: the key in a record, and what it measures
LATENCY_STAGES = {
    "speech_end_to_transcript_final": "end of speech to final transcript",
    "speech_end_to_camera_block": "end of speech to camera block",
    "speech_end_to_first_token": "end of speech to first reply text",
    "speech_end_to_reply_done": "end of speech to reply done",
}


@dataclass(frozen=True, kw_only=True)
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
        "transcript_final": "speech_end_to_transcript_final",
        "camera_block": "speech_end_to_camera_block",
        "first_token": "speech_end_to_first_token",
        "first_audio": "speech_end_to_first_audio",
        "reply_done": "speech_end_to_reply_done",
        "turn_end_to_first_token": "turn_end_to_first_token",
        "last_frame_age_s": "last_frame_age_s",
    }

    @property
    def measured(self) -> bool:
        return any(getattr(self, name) is not None for name in self.KEYS)

    def stage(self, key: str) -> float | None:
        """A stage by its record key (one of `LATENCY_STAGES`)."""
        return getattr(self, next(name for name, k in self.KEYS.items() if k == key))

    def to_json(self) -> dict:
        if not self.measured:
            return {}
        return {
            key: None if getattr(self, name) is None else round(getattr(self, name), 4)
            for name, key in self.KEYS.items()
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "metrics") -> TurnMetrics:
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


@dataclass(frozen=True, kw_only=True)
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
        "speech_media": str,
        "frames_sent": bool,
        "synthetic_frames": bool,
        "frames_source": str,
        "lead_ms": int,
        "script": str,
        "camera_script": str,
        "start_ms": int,
        "scene_ms": int,
        "speech_end_ms": int,
        "speech_file": str,
        "impairment": str,
        "impairment_seed": int,
        "frames_played": int,
        "frames_degraded": int,
        "audio_lost_ms": list,
        "frames_lost_ms": list,
        "uplink_delay_ms": float,
    }
    TIMES: ClassVar[tuple[str, ...]] = ("audio_lost_ms", "frames_lost_ms")  # lists of stream times

    def to_json(self) -> dict:
        data = {name: getattr(self, name) for name in self.KINDS if getattr(self, name) not in (None, ())}
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}

    @classmethod
    def from_json(cls, data: Any, where: str = "glasses") -> GlassesFacts:
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise RecordError([f"{where}: expected an object, got {type(data).__name__}"])
        kinds = {name: (int, float) if kind is float else kind for name, kind in cls.KINDS.items()}
        problems = [
            f"{where}: field '{name}' must be {cls.KINDS[name].__name__} or null, got {data[name]!r}"[:300]
            for name, kind in kinds.items()
            if data.get(name) is not None
            and (not isinstance(data[name], kind) or (kind is not bool and isinstance(data[name], bool)))
        ]
        for name in cls.TIMES:
            if isinstance(data.get(name), list) and not all(isinstance(t, int) for t in data[name]):
                problems.append(f"{where}: field '{name}' must be a list of integers (ms)")
        if problems:
            raise RecordError(problems)
        values: dict[str, Any] = {name: data.get(name) for name in kinds}
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


@dataclass(frozen=True, kw_only=True)
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
    newest_frame_scene: str | None = (
        None  # that frame shows the turn's own scene (`current`), an `earlier` one, or `unknown`
    )
    # the frames sent, kept as small JPEGs in the run dir: (stream time, file under RUN_DIR/frames/)
    thumbnails: tuple[tuple[int, str], ...] = ()
    # their JPEG bytes until the runner saves them as `thumbnails`; never recorded
    pictures: tuple[tuple[int, bytes], ...] = field(default=(), repr=False, compare=False)

    KINDS: ClassVar[dict[str, type]] = {
        "policy": str,
        "offered": int,
        "sent": int,
        "sent_bytes": int,
        "sent_ms": list,
        "window_ms": int,
        "newest_ms": int,
        "newest_frame_scene": str,
        "thumbnails": list,
    }

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
    def from_json(cls, data: Any, where: str = "frames") -> FrameFacts:
        if not data:
            return cls()
        if not isinstance(data, dict):
            raise RecordError([f"{where}: expected an object, got {type(data).__name__}"])
        problems = [
            f"{where}: field '{name}' must be {kind.__name__} or null, got {data[name]!r}"[:300]
            for name, kind in cls.KINDS.items()
            if data.get(name) is not None and (not isinstance(data[name], kind) or isinstance(data[name], bool))
        ]
        times = data.get("sent_ms") or []
        if isinstance(times, list) and not all(isinstance(t, int) and not isinstance(t, bool) for t in times):
            problems.append(f"{where}: field 'sent_ms' must be a list of integers (ms)")
        if data.get("newest_frame_scene") not in (None, *SCENES):
            problems.append(
                f"{where}: field 'newest_frame_scene' must be one of {', '.join(SCENES)}, "
                f"got {data['newest_frame_scene']!r}"[:300]
            )
        kept = data.get("thumbnails") or []
        if isinstance(kept, list) and not all(
            isinstance(k, dict)
            and isinstance(k.get("t_ms"), int)
            and not isinstance(k.get("t_ms"), bool)
            and isinstance(k.get("file"), str)
            for k in kept
        ):
            problems.append(f"{where}: field 'thumbnails' must be a list of {{t_ms: integer, file: string}}")
        if problems:
            raise RecordError(problems)
        values: dict[str, Any] = {name: data.get(name) for name in cls.KINDS}
        values["sent_ms"] = tuple(times) if isinstance(times, list) else ()
        values["thumbnails"] = tuple((k["t_ms"], k["file"]) for k in kept) if isinstance(kept, list) else ()
        return cls(**values)


@dataclass(frozen=True, kw_only=True)
class TurnEnd:
    """How a stream turn was ended (empty on the text proxy and in records made before the
    end-of-turn model): the rule (`model`: the end-of-turn model heard a finished utterance
    after a short silence; `text`: the early transcript read as finished; `silence`: the fixed
    silence ran out; `hint`: the client's
    `turn.end`; `cap`: the longest utterance), the silence heard after the speech when it
    ended (stream seconds), the wall seconds from the end of speech reaching the server to
    the decision, and the model's last score in that pause (None: it was not asked)."""

    rule: str | None = None
    silence_s: float | None = None
    after_speech_s: float | None = None
    probability: float | None = None

    RULES: ClassVar[tuple[str, ...]] = ("model", "text", "silence", "hint", "cap")
    # field -> its key in a record's `turn_end` and in the `metrics` event's
    KEYS: ClassVar[dict[str, str]] = {
        "rule": "rule",
        "silence_s": "silence_waited_s",
        "after_speech_s": "speech_end_to_turn_end",
        "probability": "model_probability",
    }

    def to_json(self) -> dict:
        if self.rule is None:
            return {}
        return {
            key: getattr(self, name) if name == "rule" or getattr(self, name) is None else round(getattr(self, name), 4)
            for name, key in self.KEYS.items()
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "turn_end") -> TurnEnd:
        if not data:
            return cls()
        if not isinstance(data, dict):
            raise RecordError([f"{where}: expected an object, got {type(data).__name__}"])
        values, problems = {}, []
        for name, key in cls.KEYS.items():
            value = data.get(key)
            if name == "rule":
                if value not in cls.RULES:
                    problems.append(
                        f"{where}: field '{key}' must be one of {', '.join(cls.RULES)}, got {value!r}"[:300]
                    )
            elif value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                problems.append(f"{where}: field '{key}' must be a number or null, got {value!r}"[:300])
            values[name] = value
        if problems:
            raise RecordError(problems)
        return cls(**values)
