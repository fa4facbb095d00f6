"""`RunSettings`: one run in named parts. The CLI builds it; nothing below the CLI reads arguments."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from benchmark.cost.prices import PriceTable
from core.candidate import DEFAULT_MAX_TOKENS
from core.records import SweepPoint
from perception.frame_policy import FramePolicy


class RecordsItself(Protocol):
    """What the run reads of the glasses' settings (`simulator.settings.GlassesSettings`, which the run
    layer does not import): their record, as the manifest's `glasses`, and what the run dir keeps."""

    keep_frames: bool  # thumbnails of the frames sent kept in the run dir (`--no-frames`: none)
    media_root: Path | None  # speech and frames from here instead of media/

    def record(self) -> dict: ...


@dataclass(frozen=True, kw_only=True)
class CandidateSettings:
    """The model under test and how it is asked."""

    model_id: str
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    output: str = "text"  # "audio": spoken replies (realtime APIs), saved under RUN_DIR/audio/
    model_file: str | None = None  # the weights file of an embedded model (local, local:PATH)
    base_url: str | None = None  # None: the provider's default; only the host goes into the manifest
    cached: bool = False  # its replies go through the response cache


@dataclass(frozen=True, kw_only=True)
class JudgeSettings:
    """The judge of every Turn 2 and 3, and the optional second, fixed ranking judge."""

    family: str  # resolved family: a model family ("openai", ...) or an offline kind (benchmark.judges.kinds)
    family_resolution: str  # how it was resolved, for the manifest
    model: str | None = None
    base_url: str | None = None
    ranking_family: str | None = None
    ranking_model: str | None = None
    ranking_base_url: str | None = None


@dataclass(frozen=True, kw_only=True)
class StreamSettings:
    """`--via stream`: the sweeps over the glasses (one cell per point) and the server behind them. The
    glasses themselves (their hello and how they play) are `RunSettings.glasses`."""

    staleness_ms: tuple[int, ...] = ()  # the staleness sweep: one cell per Turn 2 gap
    frame_policies: tuple[FramePolicy, ...] = ()  # the frame policy sweep: one cell per policy (none: the server's)
    impairments: tuple[str, ...] = ()  # the impairment sweep: one cell per profile (none: unimpaired)
    impairments_file: str | None = None  # user profiles over the shipped ones
    impairment_seed: int = 0  # each cell's draws come from this and the cell
    proactive: tuple[str, ...] = ()  # proactive trials: one cell per strategy (`change`, `every:N`, `native`)
    pictograph_frames: bool = False  # turns without recorded frames get their scene spec drawn (`--pictograph-frames`)
    scene_dir: str | None = None  # the bank's scene specs (with pictograph_frames): each cell's scenes
    describer_base_url: str | None = None  # the in-process server's describer model's endpoint
    asr_model: str | None = None  # the in-process server's Whisper model (None: bundled tiny.en)
    server: str | None = None  # ws://HOST:PORT of a running server (None: one is started in-process)


def sweep_points(stream: StreamSettings | None) -> list[SweepPoint]:
    """Every place on the stream's sweep axes a cell runs at: gaps x policies x profiles x proactive
    strategies (one point, all None, without a sweep or on the text proxy)."""
    gaps = (stream.staleness_ms if stream else ()) or (None,)
    policies: tuple[str | None, ...] = tuple(p.name for p in stream.frame_policies) if stream else ()
    policies = policies or (None,)
    profiles = (stream.impairments if stream else ()) or (None,)
    strategies = (stream.proactive if stream else ()) or (None,)
    return [SweepPoint(g, p, i, a) for g in gaps for p in policies for i in profiles for a in strategies]


@dataclass(frozen=True, kw_only=True)
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
    # `--via stream`: the glasses of every cell before the server's address and the cell's own settings
    # (a `simulator.settings.GlassesSettings`, built by the CLI from `candidate` and `stream`); None: the text proxy
    glasses: RecordsItself | None = None
    cache_dir: str | None = None  # the response cache's directory (None: off)
    rate_limits: dict | None = None  # as `RateLimits.describe()` gives them, for the manifest
    prices: PriceTable | None = None  # what tokens cost (None: the shipped table); recorded in the manifest
    budget_usd: float | None = None  # `--budget`: no new cell starts once the run's spend is above it
    shard: tuple[int, int] | None = None  # `--shard K/N`: this run is the K-th of N fixed shares of the cells
    config: dict | None = None  # `--config FILE.toml`: {"path", "sha256"} of the file the flags were read from

    @property
    def via(self) -> str:
        return "direct" if self.stream is None else "stream"
