"""What a proactive trial records: the stream's scenes and event window, each
probe (a moment the assistant was given the chance to speak) and what it
said, and each remark's outcome.

A `Probe` that stayed silent answered with the silence marker (never spoken
or shown); one that spoke is a remark. A remark the API sent without being
asked (`--proactive native`) is a probe with `asked_ms` None. Stream times
are milliseconds from the start of the trial's stream: scene changes, the
moment a probe was asked, the newest frame the assistant had then, and
`spoke_ms`, when the remark's first text or audio came (the moment asked
plus the model's time to its first output, so pacing does not change it).

Outcomes (`benchmark.scoring.proactive` decides them): `hit` (inside the
window and conveys the event; the first per event), `duplicate` (conveys the
event after a hit), `late` (conveys it after the window, before any hit),
`false_alarm` (before the onset, not conveying it, or in a quiet control),
`unscored` (the judge could not tell), None for a silent probe. A remark is
an `echo` when it only repeats what the user said in the trial or the camera
text it was given (`benchmark.scoring.proactive.echoes`): it never conveys
the event, and the findings count echoes apart.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, cast

from core.candidate import Usage
from core.judge import Verdict
from core.scenario import InputProblems

SILENCE_MARKER = "[silent]"
OUTCOMES = ("hit", "duplicate", "late", "false_alarm", "unscored")
EVENT_OUTCOMES = ("hit", "miss")


class WatchingError(InputProblems):
    """An invalid proactive block in a record."""


def is_silent(text: str) -> bool:
    """The reply is the silence marker (case, spaces, quotes and a final full stop aside) or empty."""
    core = text.strip().strip("\"'`").rstrip(".").strip().lower()
    return core in ("", SILENCE_MARKER, SILENCE_MARKER.strip("[]"))


def could_be_silent(text: str) -> bool:
    """The reply so far may still become the silence marker: hold it back."""
    core = text.lstrip().lstrip("\"'`").lower()
    return SILENCE_MARKER.startswith(core) or SILENCE_MARKER.strip("[]").startswith(core) or is_silent(text)


@dataclass(frozen=True, kw_only=True)
class Probe:
    n: int  # 1, 2, ... in the order asked (unprompted remarks numbered after in arrival order)
    asked_ms: int | None  # stream time the assistant was asked; None: it spoke unprompted
    frame_ms: int | None  # the newest frame it had been sent by then
    text: str  # what it answered, the silence marker included
    silent: bool
    spoke_ms: int | None = None  # the remark's first text or audio (None when silent)
    done_s: float | None = None  # seconds from asking to the end of the reply
    usage: Usage | None = None
    scene: int | None = None  # the scene (index) the newest frame showed, as the glasses played it
    audio_file: str | None = None  # a spoken remark, saved in the run dir
    outcome: str | None = None
    verdict: Verdict | None = None  # the judge's, for a remark in an event scenario
    camera: str | None = None  # the camera text the probe was given (a chat backend's description); None: pixels
    echo: bool = False  # the remark only repeats the user's words or the camera text (set when scored)

    @property
    def remark(self) -> bool:
        return not self.silent

    def to_json(self) -> dict:
        return {
            "n": self.n,
            "asked_ms": self.asked_ms,
            "frame_ms": self.frame_ms,
            "scene": self.scene,
            "text": self.text,
            "silent": self.silent,
            "spoke_ms": self.spoke_ms,
            "done_s": self.done_s,
            "usage": None if self.usage is None else self.usage.to_json(),
            "audio_file": self.audio_file,
            "outcome": self.outcome,
            "verdict": _verdict_json(self.verdict),
            "camera": self.camera,
            "echo": self.echo,
        }

    @classmethod
    def from_json(cls, data: Any, where: str) -> Probe:
        if not isinstance(data, dict):
            raise WatchingError([f"{where}: expected an object"])
        problems: list[str] = []
        values: dict[str, Any] = {
            name: _int(data, name, where, problems, required=name == "n")
            for name in ("n", "asked_ms", "frame_ms", "scene", "spoke_ms")
        }
        text = data.get("text")
        if not isinstance(text, str) or len(text) > 100_000:
            problems.append(f"{where}: field 'text' must be a string (at most 100,000 characters)")
        if not isinstance(data.get("silent"), bool):
            problems.append(f"{where}: field 'silent' must be true or false")
        done = data.get("done_s")
        if done is not None and (isinstance(done, bool) or not isinstance(done, (int, float))):
            problems.append(f"{where}: field 'done_s' must be a number or null")
        outcome = data.get("outcome")
        if outcome is not None and outcome not in OUTCOMES:
            problems.append(f"{where}: field 'outcome' must be one of {', '.join(OUTCOMES)} or null, got {outcome!r}")
        audio = data.get("audio_file")
        if audio is not None and not isinstance(audio, str):
            problems.append(f"{where}: field 'audio_file' must be a string or null")
        camera = data.get("camera")
        if camera is not None and (not isinstance(camera, str) or len(camera) > 100_000):
            problems.append(f"{where}: field 'camera' must be a string (at most 100,000 characters) or null")
        if not isinstance(data.get("echo", False), bool):
            problems.append(f"{where}: field 'echo' must be true or false")
        usage = verdict = None
        try:
            usage = None if data.get("usage") is None else Usage.from_json(data["usage"])
        except ValueError as exc:
            problems.append(f"{where}: field 'usage': {exc}")
        try:
            verdict = _verdict_from(data.get("verdict"), f"{where}: field 'verdict'")
        except WatchingError as exc:
            problems.extend(exc.problems)
        if problems:
            raise WatchingError(problems)
        return cls(
            n=values["n"],
            asked_ms=values["asked_ms"],
            frame_ms=values["frame_ms"],
            text=cast(str, text),
            silent=data["silent"],
            spoke_ms=values["spoke_ms"],
            done_s=done,
            usage=usage,
            scene=values["scene"],
            audio_file=audio,
            outcome=outcome,
            verdict=verdict,
            camera=camera,
            echo=data.get("echo", False),
        )


@dataclass(frozen=True, kw_only=True)
class Watching:
    """A proactive trial: the strategy it ran under, its stream, its event and the probes."""

    strategy: str  # `change`, `every:N` or `native`
    kind: str  # "event" or "quiet"
    stream_ms: int  # how long the scenes streamed
    scene_starts_ms: tuple[int, ...]
    onset_ms: int | None  # the event's onset (None: a quiet control)
    window_end_ms: int | None
    expected: tuple[str, ...]  # what a remark must convey (the event's answer keys)
    probes: tuple[Probe, ...] = ()
    outcome: str | None = None  # the event's: "hit" or "miss" (None: a quiet control, or not scored yet)
    frames_sent_ms: tuple[int, ...] = ()  # stream times of the frames that reached the assistant
    thumbnails: tuple[tuple[int, str], ...] = ()  # (stream time, file in the run dir) of each frame sent
    pictures: tuple[tuple[int, bytes], ...] = ()  # their bytes until the runner writes them; never recorded
    audio: tuple[tuple[int, bytes], ...] = ()  # (probe, spoken remark PCM16) until the runner writes it; never recorded
    skipped: int = 0  # probes due that the server's pace skipped (`probe.paced`)
    frames_source: str = "synthetic"  # the frames played: the camera text drawn, or "pictograph" scenes

    @property
    def remarks(self) -> tuple[Probe, ...]:
        return tuple(p for p in self.probes if p.remark)

    @property
    def passed(self) -> bool:
        """The event caught on time, or a quiet control left quiet (false alarms aside in an event)."""
        return self.outcome == "hit" if self.kind == "event" else not self.remarks

    @property
    def asked(self) -> int:
        return sum(p.asked_ms is not None for p in self.probes)

    def count(self, outcome: str) -> int:
        return sum(p.outcome == outcome for p in self.probes)

    def replace(self, **changes: Any) -> Watching:
        return replace(self, **changes)

    def to_json(self) -> dict:
        return {
            "strategy": self.strategy,
            "kind": self.kind,
            "stream_ms": self.stream_ms,
            "scene_starts_ms": list(self.scene_starts_ms),
            "onset_ms": self.onset_ms,
            "window_end_ms": self.window_end_ms,
            "expected": list(self.expected),
            "outcome": self.outcome,
            "probes": [p.to_json() for p in self.probes],
            "frames_sent_ms": list(self.frames_sent_ms),
            "thumbnails": [[t, name] for t, name in self.thumbnails],
            "probes_skipped": self.skipped,
            "frames_source": self.frames_source,
        }

    @classmethod
    def from_json(cls, data: Any, where: str) -> Watching:
        if not isinstance(data, dict):
            raise WatchingError([f"{where}: expected an object, got {type(data).__name__}"])
        problems: list[str] = []
        strategy = data.get("strategy")
        if not isinstance(strategy, str) or not 0 < len(strategy) <= 40:
            problems.append(f"{where}: field 'strategy' must be a short string")
        if data.get("kind") not in ("event", "quiet"):
            problems.append(f"{where}: field 'kind' must be 'event' or 'quiet', got {data.get('kind')!r}")
        stream = _int(data, "stream_ms", where, problems, required=True)
        skipped = _int(data, "probes_skipped", where, problems) or 0
        frames_source = data.get("frames_source", "synthetic")
        if frames_source not in ("synthetic", "pictograph"):
            problems.append(f"{where}: field 'frames_source' must be 'synthetic' or 'pictograph'")
        onset = _int(data, "onset_ms", where, problems)
        end = _int(data, "window_end_ms", where, problems)
        starts = _ints(data.get("scene_starts_ms"), f"{where}: field 'scene_starts_ms'", problems)
        sent = _ints(data.get("frames_sent_ms") or [], f"{where}: field 'frames_sent_ms'", problems)
        expected = data.get("expected") or []
        if not isinstance(expected, list) or not all(isinstance(e, str) for e in expected):
            problems.append(f"{where}: field 'expected' must be a list of strings")
            expected = []
        outcome = data.get("outcome")
        if outcome is not None and outcome not in EVENT_OUTCOMES:
            problems.append(f"{where}: field 'outcome' must be 'hit', 'miss' or null, got {outcome!r}")
        thumbnails = []
        for n, entry in enumerate(data.get("thumbnails") or []):
            if not (
                isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], int) and isinstance(entry[1], str)
            ):
                problems.append(f"{where}: field 'thumbnails[{n}]' must be [stream time, file]")
                continue
            thumbnails.append((entry[0], entry[1]))
        raw_probes = data.get("probes") or []
        probes = []
        if not isinstance(raw_probes, list):
            problems.append(f"{where}: field 'probes' must be a list")
            raw_probes = []
        for n, entry in enumerate(raw_probes):
            try:
                probes.append(Probe.from_json(entry, f"{where}: field 'probes[{n}]'"))
            except WatchingError as exc:
                problems.extend(exc.problems)
        if problems:
            raise WatchingError(problems)
        return cls(
            strategy=cast(str, strategy),
            kind=data["kind"],
            stream_ms=cast(int, stream),
            scene_starts_ms=tuple(starts),
            onset_ms=onset,
            window_end_ms=end,
            expected=tuple(expected),
            probes=tuple(probes),
            outcome=outcome,
            frames_sent_ms=tuple(sent),
            thumbnails=tuple(thumbnails),
            skipped=skipped,
            frames_source=frames_source,
        )


def _int(data: dict, name: str, where: str, problems: list[str], *, required: bool = False) -> int | None:
    value = data.get(name)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append(
            f"{where}: field '{name}' must be an integer" + ("" if required else " or null") + f", got {value!r}"[:80]
        )
        return None
    return value


def _ints(value: Any, where: str, problems: list[str]) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        problems.append(f"{where} must be a list of integers")
        return []
    return value


def _verdict_json(verdict: Verdict | None) -> dict | None:
    if verdict is None:
        return None
    return {
        "label": verdict.label,
        "rationale": verdict.rationale,
        "judge": verdict.judge,
        "unscored_reason": verdict.unscored_reason,
        "prompt": verdict.prompt,
        "raw": verdict.raw,
        "cached": verdict.cached,
        "usage": None if verdict.usage is None else verdict.usage.to_json(),
    }


def _verdict_from(data: Any, where: str) -> Verdict | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise WatchingError([f"{where} must be an object or null"])
    texts: dict[str, Any] = {name: data.get(name) for name in ("rationale", "judge", "prompt", "raw")}
    if not all(isinstance(v, str) for v in texts.values()):
        raise WatchingError([f"{where}: rationale, judge, prompt and raw must be strings"])
    label, reason = data.get("label"), data.get("unscored_reason")
    if label is not None and not isinstance(label, str) or reason is not None and not isinstance(reason, str):
        raise WatchingError([f"{where}: label and unscored_reason must be strings or null"])
    try:
        usage = None if data.get("usage") is None else Usage.from_json(data["usage"])
    except ValueError as exc:
        raise WatchingError([f"{where}: usage: {exc}"]) from None
    return Verdict(
        label=label,
        rationale=texts["rationale"],
        judge=texts["judge"],
        unscored_reason=reason,
        prompt=texts["prompt"],
        raw=texts["raw"],
        cached=data.get("cached") is True,
        usage=usage,
    )
