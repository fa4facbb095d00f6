"""`wearsim bench`'s pre-flight checks: everything that can refuse a run before it writes anything or
starts a model, in the order the command runs them. Each refusal raises `Stop` with the line to print."""

from __future__ import annotations

import sys

from perception.describer_spec import DEFAULT_DESCRIBER, needs_model


class Stop(Exception):
    """`wearsim bench` stops here: `text` goes to stderr (as `error: TEXT`, or as it is when `bare`) and
    the command exits with `code`."""

    def __init__(self, text: str, code: int = 2, *, bare: bool = False):
        super().__init__(text)
        self.text, self.code, self.bare = text, code, bare

    def report(self) -> int:
        print(self.text if self.bare else f"error: {self.text}", file=sys.stderr)
        return self.code


def select_scenarios(bank, ids: str | None, subset: str | None, limit: int | None):
    """The bank narrowed to `--ids` (in the bank's order), then `--subset` and `--limit`.
    Unknown ids raise KeyError naming them."""
    import dataclasses

    if ids:
        wanted = [i.strip() for i in ids.split(",") if i.strip()]
        known = {s.scenario_id for s in bank.scenarios}
        unknown = [i for i in wanted if i not in known]
        if unknown:
            raise KeyError(
                f"--ids: no scenario {', '.join(unknown)} in {bank.source} "
                f"({len(known)} scenarios, e.g. {', '.join(sorted(known)[:3])})"
            )
        bank = dataclasses.replace(bank, scenarios=tuple(s for s in bank.scenarios if s.scenario_id in wanted))
    if subset == "all":
        subset = None
    elif subset is None and not ids:
        subset = "bank"  # the primary score is the bank subset's
    return bank.select(subset, limit)


def duplicate_ids(bank) -> list[str]:
    from collections import Counter

    return [f"{sid} ({n} times)" for sid, n in Counter(s.scenario_id for s in bank.scenarios).items() if n > 1]


def selected_bank(args):
    """The bank (`--scenarios`) with its scenario ids unique, narrowed to `--ids`, `--subset` and
    `--limit`, and not empty."""
    from core.scenario import BankError, load_bank

    try:
        full = load_bank(args.scenarios)
    except BankError as exc:
        raise Stop(f"cannot read the bank:\n{exc}", bare=True) from None
    duplicates = duplicate_ids(full)
    if duplicates:
        raise Stop(
            f"the bank {full.source} repeats scenario ids: {', '.join(duplicates)}; every scenario_id "
            "must be unique (wearsim validate rejects this bank too)"
        )
    try:
        if args.subset == "proactive":
            from benchmark.cli.proactive_checks import proactive_bank

            ids = [i.strip() for i in args.ids.split(",") if i.strip()] if args.ids else None
            bank = proactive_bank(full, ids, args.limit)
        else:
            bank = select_scenarios(full, args.ids, args.subset, args.limit)
    except KeyError as exc:
        raise Stop(exc.args[0]) from None
    except BankError as exc:
        raise Stop(f"cannot read the bank's proactive scenarios:\n{exc}", bare=True) from None
    if not bank.scenarios:
        raise Stop("no scenarios selected (check --ids, --subset and --limit)")
    return bank


def check_run_flags(args) -> tuple[int, int] | None:
    """The counts, the describer, the error rate, `--shard` (returned, parsed) and `--budget`."""
    import math

    from benchmark.cli.run_config import RANGES, number_problem
    from perception.describer_spec import describer_problem

    for dest in RANGES:  # every number given, on the command line or in --config, finite and in range
        if problem := number_problem(dest, getattr(args, dest, None)):
            raise Stop(f"--{dest.replace('_', '-')}: {problem}")
    for flag, value, low in (
        ("--trials", args.trials, 1),
        ("--concurrency", args.concurrency, 1),
        ("--max-tokens", args.max_tokens, 1),
    ):
        if value < low:
            raise Stop(f"{flag} must be at least {low}; got {value}")
    if args.via == "stream" and args.describer is not None and (problem := describer_problem(args.describer)):
        raise Stop(f"--describer {args.describer}: {problem}")
    if not 0 <= args.max_error_rate <= 1:
        raise Stop(f"--max-error-rate is a share from 0 to 1 (e.g. 0.05); got {args.max_error_rate}")
    shard = None
    if args.shard is not None:
        from benchmark.shards import ShardError, parse_shard

        try:
            shard = parse_shard(args.shard)
        except ShardError as exc:
            raise Stop(str(exc)) from None
    if args.budget is not None and not (math.isfinite(args.budget) and args.budget >= 0):
        raise Stop(f"--budget is an amount of US dollars, 0 or more (e.g. 2.50); got {args.budget}")
    return shard


def load_prices(args):
    """The price table: the shipped one with `--prices` over it."""
    from benchmark.cost.prices import PriceFileError, price_table

    try:
        return price_table(args.prices)
    except PriceFileError as exc:
        raise Stop(f"--prices: {exc} (nothing was written)" if args.prices else str(exc)) from None


def check_prices(args, models, prices) -> None:
    """A retired `--model`, and a `--budget` that cannot be kept (a model the run asks has no price)."""
    from candidates.model_ids import retired_problem, transcription_model

    if retired := retired_problem(models.model_id):
        raise Stop(f"--model: {retired}; nothing was written")
    if args.budget is None:
        return
    transcribed = transcription_model(models.model_id) if args.via == "stream" else None  # billed apart from --model
    unpriced = [
        f"{m} ({flag})"
        for flag, m in (
            ("--model", models.model_id),
            ("--judge-model", models.judge_model),
            ("--ranking-judge-model", models.ranking_model),
            ("the input transcription of --model", transcribed),
        )
        if m and prices.get(m) is None
    ]
    if unpriced:
        raise Stop(
            f"--budget needs a price for every model the run asks: no price for {', '.join(unpriced)} "
            f"in {prices.origin}; add one with --prices FILE (README: What a run costs). "
            "Nothing was written"
        )


def check_keys(args, models, describer_url: str | None) -> None:
    """Every API key the run needs, all missing ones at once (with --server the server holds the
    candidate's key): a run that cannot start writes nothing."""
    from candidates.model_ids import missing_credentials

    needs = (
        [] if (args.via == "stream" and args.server) else [("--model", models.model_id, args.base_url, "--base-url")]
    )
    needs += [
        (flag, m, url, url_flag)
        for flag, m, url, url_flag in (
            ("--judge-model", models.judge_model, models.judge_url, "--judge-base-url"),
            ("--ranking-judge-model", models.ranking_model, models.ranking_url, "--ranking-judge-base-url"),
        )
        if m
    ]
    if args.via == "stream" and not args.server and needs_model(args.describer):
        needs.append(("--describer", args.describer, describer_url, "--describer-base-url"))
    problems = [
        f"{problem} ({flag} {needed})"
        for flag, needed, base_url, url_flag in needs
        if (problem := missing_credentials(needed, base_url=base_url, base_url_flag=url_flag))
    ]
    if problems:
        raise Stop("\n  ".join(["the run cannot start:", *problems]) if len(problems) > 1 else problems[0])


def check_endpoints(args, models, describer_url: str | None) -> None:
    """Every endpoint the command names answers: one connection each, before any cell."""
    from candidates.reach import reach_problem

    endpoints = [
        ("--base-url", models.candidate_url),
        ("--judge-base-url", models.judge_url),
        ("--ranking-judge-base-url", models.ranking_url),
        ("--describer-base-url", describer_url),
    ]
    if args.via == "stream" and args.server:
        endpoints = [("--server", args.server), *endpoints[1:3]]
    unreachable = [
        f"{flag}: {problem}" for flag, url in dict.fromkeys(endpoints) if url and (problem := reach_problem(url))
    ]
    if unreachable:
        raise Stop("; ".join(unreachable) + " (nothing was written; start the server or fix the URL)")


def pictograph_problem(bank, synthetic: bool) -> str | None:
    """Why `--pictograph-frames` cannot run on this bank (None: it can): the picture set is not
    installed, or a selected scenario has no valid scene spec."""
    from core.scenes import SceneError, load_scene_specs
    from media_effects.pictures import PictureSetMissing, font_path, unknown_pictures

    if synthetic:
        return "--pictograph-frames and --synthetic-frames both draw the frames no recording has: choose one"
    try:
        font_path()
        if bank.subset == "proactive":
            from benchmark.cli.proactive_checks import timelines

            specs = timelines(bank)
        else:
            specs = load_scene_specs(bank, required=True)
        unknown = unknown_pictures(specs)
    except PictureSetMissing as exc:
        return str(exc)
    except SceneError as exc:
        more = f" (and {len(exc.problems) - 3} more)" if len(exc.problems) > 3 else ""
        return "--pictograph-frames: scene specs missing or invalid: " + "; ".join(exc.problems[:3]) + more
    return (
        f"--pictograph-frames: {unknown[0]}" + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
        if unknown
        else None
    )


def stream_flags_given(args) -> list[str]:
    """The flags of the glasses group (`args.stream_only`, from the parser: each flag's name, dest and
    default) that were given a value other than their default, on the command line or in `--config`."""
    return [flag for flag, dest, default in getattr(args, "stream_only", ()) if getattr(args, dest) != default]


def check_stream_flags(args, bank, model_id: str) -> None:
    """The frame flags' ranges, the flags only a stream run takes (the glasses group's), `--media-root`, the
    end-of-turn model's file, `--pictograph-frames` and whether the model can give `--output`."""
    from pathlib import Path

    from candidates.model_ids import is_realtime, output_problem

    if not 0 <= args.frame_size <= 4096 or not 0 <= args.frame_quality <= 100:
        raise Stop("--frame-size takes 0 to 4096 pixels and --frame-quality 0 to 100 (0: as captured)")
    if args.via != "stream" and (given := stream_flags_given(args)):
        raise Stop(f"{', '.join(given)}: the glasses' flags need --via stream (wearsim bench --help lists them)")
    if args.media_root and not Path(args.media_root).is_dir():
        raise Stop(f"--media-root {args.media_root}: no such directory")
    if args.end_of_turn == "model" and not args.server:  # the in-process server would refuse every session
        from perception.turn_end import model_path

        try:
            model_path()
        except RuntimeError as exc:
            raise Stop(f"--end-of-turn model: {exc}") from None
    if args.end_of_turn == "text" and is_realtime(model_id):  # the server refuses it: the API ends its turns
        raise Stop(f"--end-of-turn text: {model_id} ends its own turns; it is for chat models (silence or model)")
    if args.pictograph_frames and (problem := pictograph_problem(bank, args.synthetic_frames)):
        raise Stop(problem)
    problem = output_problem(model_id, args.output)
    if problem:
        raise Stop(f"--output {args.output} {problem}")


def default_describer(args) -> str:
    """The describer of a stream run that names none: `authored` for a proactive run on synthetic frames
    (the only describer that reads them back), `opencv` otherwise."""
    if args.subset == "proactive" and not args.pictograph_frames:
        return "authored"
    return DEFAULT_DESCRIBER


def start_lines(args, model_id: str, described: bool) -> list[str]:
    """What the run says at its start about its camera text: the describer chosen for it (`described`:
    `--describer` was not given), or that it cannot read its frames."""
    from benchmark.scoring.blind import blind_describer

    if args.via != "stream":
        return []
    from candidates.model_ids import is_realtime

    lines = []
    if described and args.describer == "authored" and not is_realtime(model_id):
        lines.append(
            "describer authored (no --describer given): the frames are drawn from the camera text, and "
            "authored reads that text back, so the run tests the decision to speak, not seeing"
        )
    reason = blind_describer(
        {
            "via": "stream",
            "describer": args.describer,
            "candidate_model": model_id,
            "synthetic_frames": args.synthetic_frames,
            "pictograph_frames": args.pictograph_frames,
            "proactive": args.subset == "proactive",
        }
    )
    if reason:
        lines.append(
            f"BLIND CAMERA: {reason}: every camera block will read alike whatever the scene "
            "(--describer authored reads drawn frames)"
        )
    return lines
