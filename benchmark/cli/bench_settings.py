"""`wearsim bench`'s settings builder: the flags turned into the models and judges asked, the conditions
and sweeps run, the response cache's use and at last `RunSettings`. A flag that cannot be read raises
`bench_checks.Stop` naming it."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchmark.cli.bench_checks import Stop
from benchmark.cli.endpoints import effective_base_url, judge_base_url
from perception.describer_spec import needs_model

if TYPE_CHECKING:
    from candidates.ratelimit import RateLimits
    from perception.frame_policy import FramePolicy


@dataclass(frozen=True, kw_only=True)
class Models:
    """The candidate and the judges, each with the endpoint it reaches, and the client-side rate limits."""

    model_id: str
    candidate_file: str | None
    candidate_url: str | None
    judge_family: str
    resolution: str  # how the judge family was resolved
    judge_model: str | None
    judge_url: str | None
    ranking_family: str | None
    ranking_model: str | None
    ranking_url: str | None
    limits: RateLimits

    def describe(self) -> str:
        """The run's opening line: the candidate and the judge, and where each is asked."""
        from benchmark.judges.family import endpoint_host as host

        return (
            f"candidate {self.model_id}"
            + (f" ({self.candidate_file})" if self.candidate_file else "")
            + (f" at {host(self.candidate_url)}" if self.candidate_url else "")
            + f"; judge {self.judge_model or self.judge_family}"
            + (f" at {host(self.judge_url)}" if self.judge_url else "")
            + f" ({self.resolution})"
        )


def resolve_models(args) -> Models:
    """`--model` (or the default), the judge family and model, the ranking judge, their endpoints and the
    rate limits; a judge that cannot be used names the candidate's missing key too, if it has one."""
    from benchmark.judges import JudgeFamilyError, judge_model_id, resolve_judge_family
    from benchmark.judges.kinds import is_offline
    from candidates.factory import model_file
    from candidates.model_ids import candidate_family, default_model_id, missing_credentials
    from candidates.ratelimit import build_limits

    model_id = args.model or default_model_id()
    try:
        family = candidate_family(model_id)
        candidate_file = model_file(model_id)
        candidate_url = effective_base_url(model_id, args.base_url)
        judge_url = judge_base_url(args.judge_base_url, args.judge_family, args.judge_model)
        judge_family, resolution = resolve_judge_family(
            args.judge_family, family, base_url=judge_url, candidate_base_url=candidate_url
        )
        judge_model = None if is_offline(judge_family) else judge_model_id(judge_family, args.judge_model)
        judge_url = effective_base_url(judge_model, judge_base_url(args.judge_base_url, judge_family, judge_model))
        ranking_family = ranking_model = ranking_url = None
        if args.ranking_judge_family:
            ranking_url = judge_base_url(
                args.ranking_judge_base_url, args.ranking_judge_family, args.ranking_judge_model
            )
            ranking_family, _ = resolve_judge_family(
                args.ranking_judge_family,
                family,
                base_url=ranking_url,
                candidate_base_url=candidate_url,
                flag="--ranking-judge-family",
                base_url_flag="--ranking-judge-base-url",
            )
            ranking_model = (
                None if is_offline(ranking_family) else judge_model_id(ranking_family, args.ranking_judge_model)
            )
            ranking_url = effective_base_url(
                ranking_model, judge_base_url(args.ranking_judge_base_url, ranking_family, ranking_model)
            )
        limits = build_limits(args.max_requests_per_minute, args.max_tokens_per_minute)
    except JudgeFamilyError as exc:  # with the candidate's missing key too, if it has one
        candidate_problem = (
            None if (args.via == "stream" and args.server) else missing_credentials(model_id, base_url=args.base_url)
        )
        if candidate_problem:
            raise Stop(f"the run cannot start:\n  {candidate_problem} (--model {model_id})\n  {exc}") from None
        raise Stop(str(exc)) from None
    except (ValueError, RuntimeError) as exc:
        raise Stop(str(exc)) from None
    return Models(
        model_id=model_id,
        candidate_file=candidate_file,
        candidate_url=candidate_url,
        judge_family=judge_family,
        resolution=resolution,
        judge_model=judge_model,
        judge_url=judge_url,
        ranking_family=ranking_family,
        ranking_model=ranking_model,
        ranking_url=ranking_url,
        limits=limits,
    )


def name_models(args, models: Models) -> Models:
    """Each model the user did not name (the candidate without `--model`, a judge without its model flag)
    that a custom OpenAI-compatible endpoint serves, named as that endpoint names it (`named_by_endpoint`):
    a run records, prices and cites the model that ran, never the family's default. A model the user named
    is recorded as named; an endpoint that names nothing stops the run with one line."""
    from dataclasses import replace

    from benchmark.cli.endpoints import named_by_endpoint
    from benchmark.judges.family import is_custom_endpoint
    from candidates.model_ids import parse_model_id
    from candidates.providers import PROVIDERS

    def named(given: str | None, model_id: str | None, url: str | None, flags: tuple[str, str]) -> str | None:
        """The endpoint's name for a model the user did not name at a custom endpoint (None: not such a one)."""
        if given or not model_id or not url or not is_custom_endpoint(url):
            return None
        provider = PROVIDERS[parse_model_id(model_id)[0]]
        if provider.kind != "chat" or not provider.base_url_variable:
            return None
        return named_by_endpoint(model_id, url, *flags)

    try:
        on_server = args.via == "stream" and bool(args.server)  # the server holds the candidate
        served = (
            None if on_server else named(args.model, models.model_id, models.candidate_url, ("--model", "--base-url"))
        )
        judge = named(args.judge_model, models.judge_model, models.judge_url, ("--judge-model", "--judge-base-url"))
        ranking = named(
            args.ranking_judge_model,
            models.ranking_model,
            models.ranking_url,
            ("--ranking-judge-model", "--ranking-judge-base-url"),
        )
    except ValueError as exc:
        raise Stop(f"{exc}; nothing was written") from None
    return replace(
        models,
        model_id=served or models.model_id,
        judge_model=judge or models.judge_model,
        resolution=f"{models.resolution}; the model as its endpoint names it" if judge else models.resolution,
        ranking_model=ranking or models.ranking_model,
    )


def describer_endpoint(args) -> str | None:
    """The stream server's describer model's endpoint (a model describer only)."""
    if args.via == "stream" and needs_model(args.describer):
        return effective_base_url(
            args.describer, args.describer_base_url or os.environ.get("WEARSIM_DESCRIBER_BASE_URL", "").strip() or None
        )
    return None


def chosen_conditions(args, bank) -> tuple[str, ...]:
    """`--conditions` (all: the bank's), each one the bank defines, `--ranking-condition` among them."""
    names = (
        tuple(c.name for c in bank.conditions)
        if args.conditions == "all"
        else tuple(n.strip() for n in args.conditions.split(",") if n.strip())
    )
    known = [c.name for c in bank.conditions]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise Stop(
            f"--conditions: no prompt condition {', '.join(unknown) or '(none given)'} in {bank.source} "
            f"(it defines: {', '.join(known)})"
        )
    if args.ranking_condition not in names:
        raise Stop(
            f"--ranking-condition {args.ranking_condition!r} is not among the conditions run ({', '.join(names)})"
        )
    return names


@dataclass(frozen=True, kw_only=True)
class Sweeps:
    """The stream's sweep axes as the flags give them (each empty: no sweep on that axis)."""

    staleness: tuple[int, ...]
    policies: tuple[FramePolicy, ...]
    impairments: tuple[str, ...]
    strategies: tuple[str, ...]  # proactive strategies


def chosen_sweeps(args, model_id: str) -> Sweeps:
    """`--staleness`, `--frame-policy`, `--impair` (with `--impair-seed`) and the proactive strategies."""
    try:
        staleness = tuple(sorted({int(v) for v in args.staleness.split(",") if v.strip()})) if args.staleness else ()
    except ValueError:
        raise Stop(
            f"--staleness takes milliseconds separated by commas, e.g. 0,250,500; got {args.staleness!r}"
        ) from None
    if any(v < 0 or v > 10_000 for v in staleness):
        raise Stop("--staleness gaps must be from 0 to 10000 ms")
    policies: tuple[FramePolicy, ...] = ()
    if args.frame_policy is not None:
        from perception.frame_policy import parse_frame_policies

        try:
            policies = parse_frame_policies(args.frame_policy)
        except ValueError as exc:
            raise Stop(f"--frame-policy: {exc}") from None
    impairments: tuple[str, ...] = ()
    if args.impair is not None or args.impairments_file:
        from media_effects.impairment_profiles import select_profiles

        try:
            impairments = tuple(p.name for p in select_profiles(args.impair or "", args.impairments_file))
        except (ValueError, OSError) as exc:
            raise Stop(f"--impair: {' '.join(str(exc).split())}") from None
        if args.impair_seed < 0:
            raise Stop("--impair-seed must be a whole number >= 0")
    from benchmark.cli.proactive_checks import proactive_strategies

    names = tuple(p.name for p in policies)
    strategies, problem = proactive_strategies(args, model_id, names, staleness, impairments)
    if problem:
        raise Stop(problem)
    return Sweeps(staleness=staleness, policies=policies, impairments=impairments, strategies=strategies)


def response_cache(args, model_id: str) -> tuple[str | None, bool]:
    """(the cache's directory or None when off, whether candidate replies go through it). A store or
    journal that is a link is refused before anything is written."""
    if args.cache == "off":
        return None, False
    from candidates.cache import ResponseCache, default_cache_dir
    from candidates.model_ids import is_realtime
    from core.safe_files import UnsafePathError

    cache_dir = str(Path(args.cache_dir).expanduser().resolve() if args.cache_dir else default_cache_dir())
    try:
        ResponseCache(cache_dir).check()
    except UnsafePathError as exc:
        raise Stop(f"--cache-dir: {exc}; nothing was written") from None
    cache_candidate = (
        args.via == "direct" and not is_realtime(model_id) and (args.cache == "all" or args.temperature == 0)
    )
    if args.via == "direct" and not cache_candidate and not is_realtime(model_id):
        print(
            f"response cache: candidate replies at temperature {args.temperature:g} are not cached "
            "(--cache all caches them, one entry per trial); judge replies are",
            file=sys.stderr,
        )
    return cache_dir, cache_candidate


def stream_settings(args, bank, sweeps: Sweeps, describer_url: str | None):
    """What the glasses play and the server behind them (`--via stream`; None: the text proxy)."""
    if args.via != "stream":
        return None
    from benchmark.run.settings import StreamSettings
    from core.scenes import scene_dir

    return StreamSettings(
        staleness_ms=sweeps.staleness,
        frame_policies=sweeps.policies,
        impairments=sweeps.impairments,
        impairments_file=str(Path(args.impairments_file).resolve()) if args.impairments_file else None,
        impairment_seed=args.impair_seed,
        pictograph_frames=args.pictograph_frames,
        scene_dir=str(scene_dir(bank)) if args.pictograph_frames else None,
        describer_base_url=describer_url,
        asr_model=args.asr_model,
        server=args.server,
        proactive=sweeps.strategies,
    )


def build_settings(
    args,
    bank,
    models: Models,
    conditions: tuple[str, ...],
    sweeps: Sweeps,
    shard: tuple[int, int] | None,
    prices,
    describer_url: str | None,
    cache: tuple[str | None, bool],
):
    """The run's `RunSettings`, from the flags and what the steps before made of them."""
    from benchmark.cli.glasses_args import glasses_settings
    from benchmark.run.settings import CandidateSettings, JudgeSettings, RunSettings

    cache_dir, cache_candidate = cache
    candidate = CandidateSettings(
        model_id=models.model_id,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        output=args.output,
        model_file=models.candidate_file,
        base_url=models.candidate_url,
        cached=cache_candidate,
    )
    stream = stream_settings(args, bank, sweeps, describer_url)
    return RunSettings(
        candidate=candidate,
        judge=JudgeSettings(
            family=models.judge_family,
            family_resolution=models.resolution,
            model=models.judge_model,
            base_url=models.judge_url,
            ranking_family=models.ranking_family,
            ranking_model=models.ranking_model,
            ranking_base_url=models.ranking_url,
        ),
        conditions=conditions,
        ranking_condition=args.ranking_condition,
        trials=args.trials,
        concurrency=args.concurrency,
        camera=not args.no_camera,
        repair_style=args.repair_style,
        stream=stream,
        glasses=glasses_settings(
            args,
            backend=candidate.model_id,
            max_tokens=candidate.max_tokens,
            temperature=candidate.temperature,
            output=candidate.output,
            keep_frames=not args.no_frames,
        )
        if stream is not None
        else None,
        cache_dir=cache_dir,
        rate_limits=models.limits.describe(),
        prices=prices,
        budget_usd=args.budget,
        shard=shard,
        config=args.config_file,
    )
