"""The resumable async runner behind `wearsim bench`.

Cells are (condition, scenario, trial). Each finished trial is appended to
`transcripts.jsonl` and flushed to disk at once, so a killed run loses only
the cells in flight; rerunning into the same directory skips finished cells
and refuses a directory made with a different bank, model or any other
setting that changes a result (`RESUME_KEYS`). A last line cut short (a kill,
a full disk) is truncated on resume with a warning; an invalid line before
it refuses the resume, naming file and line.

With `--shard K/N` only the cells of one fixed share are planned and run
(`benchmark/shards.py`); `wearsim merge` joins the shards' run dirs.

One process writes a run dir at a time (`RunDirLock`: flock on
`RUN_DIR/.lock`). `open_run_dir` locks and checks a run dir without writing
to it, so a run that cannot start leaves nothing behind; `manifest.json` is
written (atomically) only when the run starts.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from benchmark import BENCHMARK_VERSION, SCHEMA_REVISION
from benchmark.budget import BUDGET_FILE, Budget
from candidates.realtime_base import MODEL_MISSING
from benchmark.faults import classify, with_empty_reply
from benchmark.kept_media import FRAMES_DIR, MediaKeeper
from benchmark.prices import PriceTable, price_table
from core.proactive_scenario import ProactiveScenario
from benchmark.proactive_trial import run_proactive_trial
from benchmark.protocol import Conversation, run_trial
from core.records import TrialRecord
from core.safe_files import UnsafePathError, check_target, open_append, refuse_links, write_atomic
from core.records import SweepPoint
from core.scenario import Bank, Condition, Scenario
from core.scenes import scenes_sha256
from benchmark.scoring.trials import TornTail, scan_transcripts
from benchmark.shards import empty_shard_line, in_shard, shard_text

# (scenario, condition, the cell's place on the stream's sweep axes, trial) -> the `Conversation` of one
# trial; `wearsim bench` makes it
ConversationFactory = Callable[[Scenario, Condition, SweepPoint, int], Conversation]

# manifest fields that must match for a run dir to be resumed: every setting
# that can change a result (`concurrency` only changes how fast it comes)
RESUME_KEYS = (
    "benchmark_version", "scenarios_sha256", "expected_answers_sha256", "interventions_sha256",
    "judge_prompt_sha256", "candidate_model", "candidate_model_file", "judge_family", "judge_model",
    "ranking_judge_family", "ranking_judge_model", "temperature", "max_tokens", "camera_injection",
    "repair_style", "via", "conditions", "ranking_condition", "trials", "scenario_ids", "staleness_ms",
    "frame_policies", "frame_size", "frame_quality", "impairments", "impairment_seed", "synthetic_frames", "describer",
    "pictograph_frames", "scenes_sha256", "speed", "media_root", "asr_model", "output", "shard",
    "proactive", "proactive_sha256",
)
# The manifest's endpoints (candidate_endpoint, judge_endpoint, ...) are recorded but may
# change on resume: a server may move (a local one gets a new port each start) while
# the model ids above stay the same.
_NOT_RECORDED = object()
# keys older runners did not write: the value they used, or _NOT_RECORDED when
# it cannot be known (then a manifest without the key is not compared on it)
LEGACY_RESUME_VALUES = {"max_tokens": 300, "speed": _NOT_RECORDED, "candidate_model_file": _NOT_RECORDED,
                        "candidate_endpoint": _NOT_RECORDED, "judge_endpoint": _NOT_RECORDED,
                        "ranking_judge_endpoint": _NOT_RECORDED, "describer_endpoint": _NOT_RECORDED,
                        "output": "text", "frame_policies": [], "frame_size": 0, "frame_quality": 0,
                        "impairments": [], "impairment_seed": None, "shard": None,
                        "pictograph_frames": False, "scenes_sha256": None, "proactive": [],
                        "proactive_sha256": None}
LOCK_NAME = ".lock"
CACHE_LOG = "cache_log.jsonl"  # per cell: which replies came from the response cache
AUDIO_DIR = "audio"  # spoken replies (--output audio), one WAV per turn
# what a run writes into its dir besides the report: a dir holding a link under any of these names is refused
RUN_OUTPUTS = (LOCK_NAME, "manifest.json", "transcripts.jsonl", CACHE_LOG, AUDIO_DIR, FRAMES_DIR, "logs", BUDGET_FILE)


class RunDirError(RuntimeError):
    """The output directory cannot be used for this run."""


class RunDirBusy(RunDirError):
    """Another process holds the run dir's lock."""


class TranscriptWriteError(RunDirError):
    """transcripts.jsonl could not be written (e.g. the disk is full); the run stopped."""


class ModelMissing(RuntimeError):
    """The provider says the model under test does not exist: every cell could only fail the
    same way, so the run stops (no record is written for the cell that found it out)."""

    @classmethod
    def from_error(cls, error: BaseException) -> "ModelMissing | None":
        """The error a cell raised, when it is the provider's "no such model" (the adapter's
        `ModelNotFoundError`, directly or as the streaming server's error event's text)."""
        text = str(error)
        at = text.find(MODEL_MISSING)
        if at < 0:
            return None
        start = text.rfind(" ", 0, max(text.rfind(":", 0, at), 0)) + 1  # back to the model id before ": the provider"
        return cls(text[start:].strip() + "; nothing more was run")


@dataclass(frozen=True)
class CandidateSettings:
    """The model under test and how it is asked."""
    model_id: str
    temperature: float = 0.0
    max_tokens: int = 300
    output: str = "text"  # "audio": spoken replies (realtime APIs), saved under RUN_DIR/audio/
    model_file: str | None = None  # the weights file of an embedded model (local, local:PATH)
    base_url: str | None = None  # None: the provider's default; only the host goes into the manifest
    cached: bool = False  # its replies go through the response cache


@dataclass(frozen=True)
class JudgeSettings:
    """The judge of every Turn 2 and 3, and the optional second, fixed ranking judge."""
    family: str  # resolved family ("lexical", "openai", ...)
    family_resolution: str  # how it was resolved, for the manifest
    model: str | None = None
    base_url: str | None = None
    ranking_family: str | None = None
    ranking_model: str | None = None
    ranking_base_url: str | None = None


@dataclass(frozen=True)
class StreamSettings:
    """`--via stream`: the simulated glasses, and the server and perception behind them."""
    staleness_ms: tuple[int, ...] = ()  # the staleness sweep: one cell per Turn 2 gap
    frame_policies: tuple[str, ...] = ()  # the frame policy sweep: one cell per policy (none: the server's)
    impairments: tuple[str, ...] = ()  # the impairment sweep: one cell per profile (none: unimpaired)
    impairments_file: str | None = None  # user profiles over the shipped ones
    impairment_seed: int = 0  # each cell's draws come from this and the cell
    proactive: tuple[str, ...] = ()  # proactive trials: one cell per strategy (`change`, `every:N`, `native`)
    frame_size: int = 0  # longer side of a sent frame (0: as captured)
    frame_quality: int = 0  # JPEG quality of a sent frame (0: as captured)
    synthetic_frames: bool = False
    pictograph_frames: bool = False  # turns without recorded frames get their scene spec drawn (`--pictograph-frames`)
    scene_dir: str | None = None  # the bank's scene specs (with pictograph_frames)
    describer: str = "opencv"  # the server's scene describer
    describer_base_url: str | None = None
    media_root: str | None = None  # speech and frames from here instead of media/
    asr_model: str | None = None  # the in-process server's Whisper model (None: bundled tiny.en)
    speed: float | None = None  # pacing (None: as fast as the server takes it)
    server: str | None = None  # ws://HOST:PORT of a running server (None: one is started in-process)
    keep_frames: bool = True  # thumbnails of the frames sent kept in the run dir (`--no-frames`: none)
    token: str | None = field(default=None, repr=False)  # that server's token: never recorded


def sweep_points(stream: "StreamSettings | None") -> list[SweepPoint]:
    """Every place on the stream's sweep axes a cell runs at: gaps x policies x profiles x proactive
    strategies (one point, all None, without a sweep or on the text proxy)."""
    gaps = (stream.staleness_ms if stream else ()) or (None,)
    policies = (stream.frame_policies if stream else ()) or (None,)
    profiles = (stream.impairments if stream else ()) or (None,)
    strategies = (stream.proactive if stream else ()) or (None,)
    return [SweepPoint(g, p, i, a) for g in gaps for p in policies for i in profiles for a in strategies]


@dataclass(frozen=True)
class RunSettings:
    """One run, in named parts; the CLI builds it, nothing below the CLI reads arguments."""
    candidate: CandidateSettings
    judge: JudgeSettings
    conditions: tuple[str, ...]
    ranking_condition: str = "baseline"
    trials: int = 1
    concurrency: int = 4
    camera: bool = True
    repair_style: str = "named"
    stream: StreamSettings | None = None  # None: the text proxy
    cache_dir: str | None = None  # the response cache's directory (None: off)
    rate_limits: dict | None = None  # as `RateLimits.describe()` gives them, for the manifest
    prices: PriceTable | None = None  # what tokens cost (None: the shipped table); recorded in the manifest
    budget_usd: float | None = None  # `--budget`: no new cell starts once the run's spend is above it
    shard: tuple[int, int] | None = None  # `--shard K/N`: this run is the K-th of N fixed shares of the cells

    @property
    def via(self) -> str:
        return "direct" if self.stream is None else "stream"


def _endpoint(base_url: str | None) -> str | None:
    from benchmark.judges.family import endpoint_host

    return endpoint_host(base_url)


def sha256_file(path: Path | None) -> str | None:
    if path is None or not Path(path).exists():
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def build_manifest(bank: Bank, settings: RunSettings) -> dict:
    from candidates.model_ids import transcription_model
    from benchmark.judges.prompt import JUDGE_PROMPT_VERSION, judge_prompt_sha256

    candidate, judge, stream = settings.candidate, settings.judge, settings.stream or StreamSettings()
    prices = settings.prices or price_table()
    return {
        "benchmark_version": BENCHMARK_VERSION,
        "schema_revision": SCHEMA_REVISION,
        "camera_injection": settings.camera,
        "scenarios_sha256": sha256_file(bank.files.get("scenarios")),
        "expected_answers_sha256": sha256_file(bank.files.get("expected_answers")),
        "interventions_sha256": sha256_file(bank.files.get("interventions")),
        "judge_prompt_version": JUDGE_PROMPT_VERSION,
        "judge_prompt_sha256": judge_prompt_sha256(),
        "candidate_model": candidate.model_id,
        "candidate_model_file": candidate.model_file,
        "candidate_endpoint": _endpoint(candidate.base_url),
        "judge_model": judge.model or judge.family,
        "judge_endpoint": _endpoint(judge.base_url),
        "ranking_judge_endpoint": _endpoint(judge.ranking_base_url),
        "describer_endpoint": _endpoint(stream.describer_base_url),
        "judge_family": judge.family,
        "judge_family_resolution": judge.family_resolution,
        "ranking_judge_model": judge.ranking_model,
        "ranking_judge_family": judge.ranking_family,
        "trials": settings.trials,
        "temperature": candidate.temperature,
        "max_tokens": candidate.max_tokens,
        "ranking_condition": settings.ranking_condition,
        "conditions": list(settings.conditions),
        "repair_style": settings.repair_style,
        "via": settings.via,
        "output": candidate.output,
        "speed": stream.speed,
        "staleness_ms": list(stream.staleness_ms),
        "frame_policies": list(stream.frame_policies),
        "impairments": list(stream.impairments),
        "impairment_seed": stream.impairment_seed if stream.impairments else None,
        "frame_size": stream.frame_size,
        "frame_quality": stream.frame_quality,
        "synthetic_frames": stream.synthetic_frames,
        "pictograph_frames": stream.pictograph_frames,
        "scenes_sha256": scenes_sha256(bank) if stream.pictograph_frames else None,
        "proactive": list(stream.proactive),
        "proactive_sha256": sha256_file(bank.files.get("proactive")) if stream.proactive else None,
        "describer": stream.describer if settings.stream else None,
        "media_root": stream.media_root,
        "asr_model": stream.asr_model,
        "concurrency": settings.concurrency,
        "response_cache": ({"directory": settings.cache_dir, "candidate": candidate.cached, "judges": True,
                            "log": CACHE_LOG} if settings.cache_dir else None),
        "rate_limits": settings.rate_limits,
        # what each model's tokens cost in this run (null: no price), so a report can be recomputed
        "prices": prices.for_manifest((candidate.model_id, transcription_model(candidate.model_id), judge.model,
                                       judge.ranking_model)),
        "price_source": prices.origin,
        "budget_usd": settings.budget_usd,
        "shard": shard_text(settings.shard),
        "keep_frames": stream.keep_frames if settings.stream else None,
        "bank_source": str(bank.source),
        "bank_format": bank.format,
        "scenario_ids": [s.scenario_id for s in bank.scenarios],
        "timestamp_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runner_git_commit": git_commit(),
    }


def write_manifest(path: Path, manifest: dict) -> None:
    """Write manifest.json atomically: a temp file beside it, fsync'd, then
    renamed over it, so a kill or a full disk never leaves half a manifest."""
    write_atomic(path, json.dumps(manifest, indent=2) + "\n", sync=True)


def _short(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def resume_differences(old: dict, new: dict) -> list[str]:
    """The RESUME_KEYS on which two manifests differ, each as `key (old there, new now)`."""
    differing = []
    for key in RESUME_KEYS:
        before = old.get(key, LEGACY_RESUME_VALUES.get(key))
        if before is _NOT_RECORDED:
            continue
        if before != new.get(key):
            differing.append(f"{key} ({_short(before)} there, {_short(new.get(key))} now)")
    return differing


class RunDirLock:
    """An exclusive lock on a run dir (flock on RUN_DIR/.lock), so two
    `wearsim bench` processes never write one run dir at once. The lock file
    holds the owner's pid and is removed on release; a run dir this lock
    created is removed again if nothing else was written to it."""

    def __init__(self, run_dir: Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_NAME
        self.created_dir = False
        self._fd: int | None = None

    def acquire(self) -> "RunDirLock":
        import fcntl

        self.created_dir = not self.run_dir.exists()
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunDirError(f"cannot create the run dir {self.run_dir}: {exc.strerror}; "
                              "choose another --output-dir") from None
        while True:
            try:  # never through a link: a downloaded run dir's .lock -> ~/.bashrc would be truncated
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
                raise RunDirError(f"{self.path}: is a symbolic link; refusing a run dir whose outputs are links "
                                  "(remove the link, or choose another --output-dir)") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
                os.close(fd)
                who = f" (pid {holder})" if holder.isdigit() else ""
                raise RunDirBusy(f"{self.run_dir} is in use by another wearsim bench{who}; wait for it to finish "
                                 "or choose another --output-dir") from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # its owner removed the file as we opened it: take the new one
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None
        if self.created_dir:
            try:
                self.run_dir.rmdir()  # only when empty: nothing was written
            except OSError:
                pass


@dataclass
class PreparedRun:
    """A locked, checked run dir; `start()` writes to it, `close()` unlocks it."""

    run_dir: Path
    manifest: dict
    done: set
    lock: RunDirLock
    torn_tail: TornTail | None = None
    resuming: bool = False

    def start(self) -> None:
        """The run can start: cut a torn last line, write the manifest."""
        transcripts = self.run_dir / "transcripts.jsonl"
        if self.torn_tail is not None:
            with transcripts.open("rb+") as handle:
                handle.truncate(self.torn_tail.offset)
                handle.flush()
                os.fsync(handle.fileno())
            print(f"warning: {self.torn_tail.describe()}; removed it, that cell runs again", file=sys.stderr)
            self.torn_tail = None
        if self.resuming:
            print(f"resuming the run in {self.run_dir} (same bank, model and settings)", file=sys.stderr)
        write_manifest(self.run_dir / "manifest.json", self.manifest)

    def close(self) -> None:
        self.lock.release()


def open_run_dir(run_dir: Path, manifest: dict, resume: bool = False) -> PreparedRun:
    """Lock the run dir and check it can take this run, writing nothing: a
    manifest of another run (any RESUME_KEYS differing), transcripts without
    a manifest, or an invalid line before the last one is refused. A torn
    last line is noted; `PreparedRun.start()` truncates it."""
    run_dir = Path(run_dir)
    lock = RunDirLock(run_dir).acquire()
    try:
        return _check_run_dir(run_dir, dict(manifest), lock)
    except BaseException:
        lock.release()
        raise


def _check_run_dir(run_dir: Path, manifest: dict, lock: RunDirLock) -> PreparedRun:
    from benchmark.report import REPORT_OUTPUTS

    try:
        refuse_links(run_dir, (*RUN_OUTPUTS, *REPORT_OUTPUTS))
    except UnsafePathError as exc:
        raise RunDirError(str(exc)) from None
    manifest_path = run_dir / "manifest.json"
    transcripts = run_dir / "transcripts.jsonl"
    has_trials = transcripts.exists() and transcripts.stat().st_size > 0
    old = None
    if manifest_path.exists():
        try:
            old = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            old = None
        if not isinstance(old, dict):
            raise RunDirError(f"{manifest_path} is not a JSON object; choose another --output-dir")
        differing = resume_differences(old, manifest)
        if differing:
            raise RunDirError(
                f"{run_dir} holds a run made with different {', '.join(differing)}; rerun with the same "
                "settings or choose another --output-dir (nothing was changed)")
        manifest["timestamp_utc"] = old.get("timestamp_utc", manifest["timestamp_utc"])
    elif has_trials:
        raise RunDirError(f"{run_dir} has transcripts.jsonl but no manifest.json; choose another --output-dir")
    done: set = set()
    torn = None
    if has_trials:
        scanned = scan_transcripts(transcripts)
        if scanned.problems:
            more = f" (and {len(scanned.problems) - 1} more)" if len(scanned.problems) > 1 else ""
            raise RunDirError(f"cannot resume: {scanned.problems[0]}{more}; fix or delete that line, "
                              "or choose another --output-dir")
        torn = scanned.torn_tail
        done = {(r.condition, r.scenario_id, r.trial, r.sweep) for r in scanned.records if not r.errored}
    return PreparedRun(run_dir, manifest, done, lock, torn, resuming=old is not None and has_trials)


def _file_name(name: str) -> str:
    """A bank's id or condition name as a file name, never a path."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "_"


def save_reply_audio(run_dir: Path, record: TrialRecord) -> TrialRecord:
    """The record with each spoken reply saved as a WAV under RUN_DIR/audio/
    (the reply then names the file) and its voice-to-voice time measured on
    that audio: the first reply audio plus the audio's leading silence (the
    voice activity model finds the first speech)."""
    from dataclasses import replace

    from core.candidate import REPLY_AUDIO_RATE
    from media_effects.audio import write_wav
    from perception.speech import speech_onset_s

    gap = "" if record.staleness_ms is None else f"-s{record.staleness_ms}"
    gap += "" if record.frame_policy is None else f"-{_file_name(record.frame_policy.replace(':', '-'))}"
    gap += "" if record.impairment is None else f"-{_file_name(record.impairment)}"
    gap += "" if record.proactive is None else f"-{_file_name(record.proactive.replace(':', '-'))}"
    if record.watching is not None and record.watching.audio:
        record = record.replace(watching=save_remark_audio(run_dir, record, gap))
    turns = []
    for turn in record.turns:
        reply = turn.reply
        if reply.audio:
            name = (Path(AUDIO_DIR) / _file_name(record.condition)
                    / f"{_file_name(record.scenario_id)}-t{record.trial}{gap}-turn{turn.turn}.wav")
            try:
                write_wav(run_dir / name, reply.audio, REPLY_AUDIO_RATE, root=run_dir)
            except OSError as exc:
                raise TranscriptWriteError(
                    f"cannot write {run_dir / name}: {exc.strerror or exc}; the trials recorded so far are kept; "
                    "free the space and rerun with --resume") from None
            onset = speech_onset_s(reply.audio, REPLY_AUDIO_RATE)
            voice = None if onset is None or reply.first_audio_s is None else reply.first_audio_s + onset
            reply = replace(reply, audio=b"", audio_file=name.as_posix(), first_voice_s=voice)
        turns.append(replace(turn, reply=reply))
    return record.replace(turns=tuple(turns))


def save_remark_audio(run_dir: Path, record: TrialRecord, gap: str):
    """The proactive record's spoken remarks saved as WAVs under RUN_DIR/audio/; each probe then
    names its file. Returns the new `Watching`."""
    from dataclasses import replace

    from core.candidate import REPLY_AUDIO_RATE
    from media_effects.audio import write_wav

    files = {}
    for n, pcm in record.watching.audio:
        name = (Path(AUDIO_DIR) / _file_name(record.condition)
                / f"{_file_name(record.scenario_id)}-t{record.trial}{gap}-remark{n}.wav")
        try:
            write_wav(run_dir / name, pcm, REPLY_AUDIO_RATE, root=run_dir)
        except OSError as exc:
            raise TranscriptWriteError(
                f"cannot write {run_dir / name}: {exc.strerror or exc}; the trials recorded so far are kept; "
                "free the space and rerun with --resume") from None
        files[n] = name.as_posix()
    probes = tuple(replace(p, audio_file=files.get(p.n, p.audio_file)) for p in record.watching.probes)
    return record.watching.replace(probes=probes, audio=())


class TranscriptWriter:
    """Appends one JSON line per trial to a file opened once (refused if it is a
    link); each write is flushed and fsync'd. A write that fails (a full disk)
    is cut back off, so the file never ends in half a line, and raises
    `TranscriptWriteError`."""

    def __init__(self, path: Path):
        self.path = check_target(path)
        self._lock = asyncio.Lock()
        self.handle = open_append(self.path)
        if self.handle.tell():  # a last record written without its newline
            with path.open("rb") as existing:
                existing.seek(-1, os.SEEK_END)
                if existing.read(1) != b"\n":
                    self.handle.write(b"\n")

    def close(self) -> None:
        self.handle.close()

    async def append(self, record: TrialRecord) -> None:
        line = record.to_line().encode("utf-8")
        async with self._lock:
            size = self.handle.tell()
            try:
                self.handle.write(line)
                self.handle.flush()
                os.fsync(self.handle.fileno())
            except OSError as exc:
                try:
                    self.handle.truncate(size)
                except OSError:
                    pass  # load_trials and --resume both skip a torn last line
                raise TranscriptWriteError(
                    f"cannot write {self.path}: {exc.strerror or exc}; the trials recorded so far are kept; "
                    "free the space and rerun with --resume") from None


class CacheLogWriter:
    """`cache_log.jsonl`: one line per cell that used the response cache,
    `{"cell": [condition, scenario, trial, staleness_ms, frame_policy, impairment], "replies": {role:
    {"from_cache": n, "requested": n}}}`; a resumed run appends (a later line
    for the same cell replaces an earlier one)."""

    def __init__(self, path: Path):
        self.handle = open_append(path, text=True)

    def append(self, condition: str, scenario_id: str, trial: int, point: SweepPoint, replies: dict) -> None:
        self.handle.write(json.dumps({"cell": [condition, scenario_id, trial, *point], "replies": replies}) + "\n")
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()


class Progress:
    """One progress line on stderr, redrawn when a cell finishes (at most
    `MIN_INTERVAL_S` apart, and always for the last one) and by `tick()`:
    cells done, outcomes, requests in flight and waiting on a rate limit, eta."""

    MIN_INTERVAL_S = 0.1

    def __init__(self, total: int):
        self.total, self.done = total, 0
        self.counts = {"pass": 0, "miss": 0, "unscored": 0, "error": 0}
        self.started = time.monotonic()
        self._drawn = 0.0
        self._last = ""

    def update(self, record: TrialRecord) -> None:
        self.done += 1
        if record.errored:
            self.counts["error"] += 1
        elif record.watching is not None:
            self.counts["pass" if record.watching.passed else "miss"] += 1
        elif record.passed is None:
            self.counts["unscored"] += 1
        else:
            self.counts["pass" if record.passed else "miss"] += 1
        self._last = f"{record.scenario_id} {record.condition}"
        self.draw(force=self.done == self.total)

    def tick(self) -> None:
        self.draw(force=True)

    def skip(self) -> None:
        """A cell that will not run (the budget is spent)."""
        self.total -= 1
        self.draw(force=self.done == self.total)

    def draw(self, force: bool = False) -> None:
        from candidates.ratelimit import REQUESTS

        now = time.monotonic()
        if not force and now - self._drawn < self.MIN_INTERVAL_S:
            return
        self._drawn = now
        elapsed = now - self.started
        # no estimate until a cell has finished: "eta 0s" before then read as "almost done"
        eta = f"{elapsed / self.done * (self.total - self.done):4.0f}s" if self.done else "   ?"
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        summary = " ".join(f"{k} {v}" for k, v in self.counts.items())
        print(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
              f"{self._last}  {summary}  requests {REQUESTS.in_flight} in flight, {REQUESTS.waiting} waiting"
              f"  eta {eta}   ", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        print(file=sys.stderr)


def open_budget(settings: RunSettings, run_dir: Path) -> Budget | None:
    """The run's budget (`--budget`), starting from what the run dir spent before; without one, a
    budget.json an earlier run left is removed, so no report reads a stop that no longer holds."""
    if settings.budget_usd is None:
        (run_dir / BUDGET_FILE).unlink(missing_ok=True)
        return None
    from benchmark.budget import spent_before
    from benchmark.scoring.trials import load_trials

    table = settings.prices or price_table()
    transcripts = run_dir / "transcripts.jsonl"
    records = load_trials(transcripts).trials if transcripts.exists() and transcripts.stat().st_size else ()
    return Budget(settings.budget_usd, table, spent_before(run_dir, table, records))


def write_budget(run_dir: Path, budget: Budget) -> None:
    write_atomic(run_dir / BUDGET_FILE, json.dumps(budget.state(), indent=2) + "\n", run_dir)


async def run_bench(bank: Bank, settings: RunSettings, run_dir: Path, conversation: ConversationFactory,
                    *, resume: bool = False, prepared: PreparedRun | None = None) -> dict:
    """Run every unfinished cell, each trial through `conversation(scenario, condition)`;
    return counts. Reports are written by the caller (`write_report`, by the
    report worker started here as the cells start).

    `prepared` is the run dir as `open_run_dir` locked and checked it (the
    caller does that before it starts a candidate, so a refused dir costs
    nothing); without it the dir is opened, and closed on return, here.
    Cancelling the task (SIGTERM, Ctrl-C) stops every cell in flight; the
    trials already written stay in transcripts.jsonl.
    """
    from candidates.cache import CELL_LOG, CURRENT_TRIAL, ResponseCache, summarise_log
    from benchmark.judges import open_judge

    for name in settings.conditions:
        bank.condition(name)  # unknown names fail before anything starts
    own = prepared is None
    if own:
        prepared = open_run_dir(run_dir, build_manifest(bank, settings), resume)
    try:
        prepared.start()
        done = prepared.done
        points = sweep_points(settings.stream)
        every = [(c, s, t, p) for c in settings.conditions for s in bank.scenarios for t in range(settings.trials)
                 for p in points]
        planned = [(c, s, t, p) for c, s, t, p in every if in_shard((c, s.scenario_id, t, *p), settings.shard)]
        cells = [(c, s, t, p) for c, s, t, p in planned if (c, s.scenario_id, t, p) not in done]
        total = len(planned)
        share = "" if settings.shard is None else f"; shard {shard_text(settings.shard)}: {total} cells are its share"
        print(f"{len(cells)} cells to run ({total - len(cells)} already finished{share}) -> {run_dir}", file=sys.stderr)
        budget = open_budget(settings, run_dir)
        if not planned and settings.shard is not None:  # a small run split many ways: this share is empty
            return {"ran": 0, "skipped": 0, "empty_shard": empty_shard_line(settings.shard, len(every))}
        if not cells:
            if budget is None:
                return {"ran": 0, "skipped": total}
            write_budget(run_dir, budget)
            return {"ran": 0, "skipped": total, "budget": budget.state(), "budget_line": budget.describe()}
        from benchmark.report import start_worker

        start_worker(run_dir)  # the report's imports happen in a child process while the cells run
        writer = TranscriptWriter(run_dir / "transcripts.jsonl")
        progress = Progress(len(cells))
        semaphore = asyncio.Semaphore(max(1, settings.concurrency))
        keeper = MediaKeeper(run_dir, keep_frames=settings.stream.keep_frames) if settings.stream else None
        cache = ResponseCache(settings.cache_dir) if settings.cache_dir else None
        cache_log = CacheLogWriter(run_dir / CACHE_LOG) if cache is not None else None
        cache_totals = {"from_cache": 0, "requested": 0}

        async def ticker() -> None:  # the progress line moves while slow cells run
            while True:
                await asyncio.sleep(1.0)
                progress.tick()

        def meter(role: str, model: str, usage, cached: bool) -> None:  # each reply (and transcription) as it arrives
            if budget is not None:
                budget.add(settings.candidate.model_id if role == "candidate" else model, usage, cached)

        judging = settings.judge
        async with open_judge(judging.family, judging.model, base_url=judging.base_url,
                              cache=cache) as judge:
            ranking_ctx = (open_judge(judging.ranking_family, judging.ranking_model,
                                      base_url=judging.ranking_base_url, cache=cache, role="ranking judge")
                           if judging.ranking_family else None)
            ranking_judge = await ranking_ctx.__aenter__() if ranking_ctx else None
            ticking = asyncio.create_task(ticker())
            try:
                async def run_cell(condition_name: str, scenario: Scenario, trial: int, point: SweepPoint) -> None:
                    condition = bank.condition(condition_name)
                    cell = dict(scenario_id=scenario.scenario_id, condition=condition_name, trial=trial,
                                **point._asdict(), via=settings.via, candidate_model=settings.candidate.model_id,
                                system_prompt=condition.system_prompt)
                    CURRENT_TRIAL.set(trial)  # this task's context: the cache keys candidate replies by trial
                    events: list = []
                    CELL_LOG.set(events)
                    async with semaphore:
                        if budget is not None and budget.passed:  # no new cell once the budget is passed
                            budget.skip()
                            progress.skip()
                            return
                        started = time.monotonic()
                        talk = None
                        try:
                            talk = conversation(scenario, condition, point, trial)
                            if isinstance(scenario, ProactiveScenario):
                                record = await run_proactive_trial(talk, scenario, judge, meter)
                            else:
                                record = await run_trial(talk, scenario, judge, ranking_judge, meter)
                            record = record.replace(**cell)
                        except Exception as exc:  # recorded, excluded from metrics, counted
                            if missing := ModelMissing.from_error(exc):
                                raise missing from None
                            record = TrialRecord(
                                target_context=scenario.target_context, cue_type=scenario.cue_type,
                                difficulty_tier=scenario.difficulty_tier, activity_domain=scenario.activity_domain,
                                subset=scenario.subset, error=f"{type(exc).__name__}: {exc}"[:500], **cell)
                        finally:
                            if talk is not None:
                                await talk.aclose()
                        record = with_empty_reply(record.replace(wall_s=round(time.monotonic() - started, 3)))
                        record = record.replace(fault=classify(record))
                        if any(turn.reply.audio for turn in record.turns) or (
                                record.watching is not None and record.watching.audio):
                            record = await asyncio.to_thread(save_reply_audio, run_dir, record)
                        if keeper is not None and (record.turns or record.watching is not None):
                            record = await asyncio.to_thread(keeper.keep, record)
                    await writer.append(record)
                    if budget is not None:
                        write_budget(run_dir, budget)
                    if cache_log is not None and events:
                        cache_log.append(condition_name, scenario.scenario_id, trial, point, summarise_log(events))
                        for _, hit in events:
                            cache_totals["from_cache" if hit else "requested"] += 1
                    progress.update(record)

                tasks = [asyncio.create_task(run_cell(*cell)) for cell in cells]
                try:
                    finished, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
                    for task in finished:
                        if task.exception() is not None:  # only writing the transcript can fail here
                            raise task.exception()
                finally:
                    for task in tasks:
                        task.cancel()
                    await asyncio.gather(*tasks, return_exceptions=True)
            finally:
                ticking.cancel()
                progress.close()
                writer.close()
                if budget is not None:
                    write_budget(run_dir, budget)
                if cache_log is not None:
                    cache_log.close()
                if ranking_ctx is not None:
                    await ranking_ctx.__aexit__(None, None, None)
        counts = {"ran": progress.done, "skipped": total - len(cells), **progress.counts}
        if budget is not None:
            counts.update(budget=budget.state(), budget_line=budget.describe())
        if cache is not None:
            counts.update(cache_hits=cache_totals["from_cache"], cache_misses=cache_totals["requested"])
            cache.close()
        return counts
    finally:
        if own:
            prepared.close()
