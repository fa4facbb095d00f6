"""`wearsim bench`: run the Turn 1/2/3 benchmark on a candidate model."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

EPILOG = """examples:
  wearsim bench --output-dir runs/first              # whole bank, local model, lexical judge
  wearsim bench --model openai:gpt-4o-mini --judge-family gemini --trials 5 --output-dir runs/gpt
  wearsim bench --model openai:qwen2.5 --base-url http://127.0.0.1:8000/v1 --judge-family lexical
  wearsim bench --model openai:qwen2.5 --base-url http://127.0.0.1:8000/v1 \\
      --judge-family openai --judge-model openai:llama3 --judge-base-url http://127.0.0.1:8001/v1
  wearsim bench --model openai:gpt-4o-mini --judge-family gemini --cache --max-requests-per-minute openai=500
  wearsim bench --ids sc-05,sc-12 --conditions baseline   # two scenarios, one condition
  wearsim bench --output-dir runs/first --resume      # finish an interrupted run
  wearsim bench --via stream --model openai-realtime:gpt-realtime --limit 3   # a realtime API as the glasses' assistant
  wearsim bench --via stream --staleness 0,250,500,1000,2000 --synthetic-frames --describer authored
  wearsim bench --via stream --frame-policy fps:0.2,fps:1,speech:1/0.3,change:0.02,end --staleness 250,2000 \
      --synthetic-frames --describer authored
  wearsim bench --model openai-realtime:gpt-realtime-1.5 --via stream --budget 2.50 --output-dir runs/rt
  wearsim bench --model openai:my-model --base-url URL --prices my-prices.toml --budget 1 --output-dir runs/mine
  wearsim bench --model openai:gpt-4o-mini --shard 2/4 --output-dir runs/gpt-2of4   # then: wearsim merge
`wearsim models` lists the model ids and which API keys are set.
endpoints: --base-url is the candidate's only; the judges have --judge-base-url and --ranking-judge-base-url
(default for an openai: judge: WEARSIM_JUDGE_BASE_URL, then OPENAI_BASE_URL), the stream server's describer
--describer-base-url (or WEARSIM_DESCRIBER_BASE_URL). The manifest names a non-default endpoint by host only.
response cache (--cache): replies stored by model, endpoint, prompt, temperature, reply cap and trial in
WEARSIM_CACHE_DIR (default ~/.cache/wearsim); a rerun or --resume asks nothing twice. `wearsim cache stats|clear`.
cost: each reply's tokens by modality are recorded and priced with benchmark/prices.toml (USD per million
tokens per model id; --prices FILE adds entries and replaces whole ones); summary.json and findings.md give
the cost per trial, per condition and per correct Turn 2 answer. A model with no price has an unknown cost.
exit status: 0 done; 2 the run could not start (settings, bank, keys, price file, a --budget with a model
that has no price, run dir in use or made with other settings); 3 more than --max-error-rate of the planned
cells failed by a fault of the API's or ours, never a model's miss (the report is still written); 4 stopped on --budget (the report is written; rerun with a larger
--budget to finish); 130/143 stopped by Ctrl-C/SIGTERM (finished cells are kept: rerun with --resume)
"""


def _shipped_conditions() -> str:
    """The prompt conditions the shipped bank defines, for the help text (read without loading the bank)."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "v1" / "interventions.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "?"
    names = list(data) if isinstance(data, dict) else [c.get("name") for c in data if isinstance(c, dict)]
    return ", ".join(str(n) for n in names)


def register(subparsers) -> None:
    p = subparsers.add_parser("bench", help="run the benchmark on a candidate model",
                              description="Run Turn 1, Turn 2, judge, and Turn 3 on a miss, for every cell "
                                          "(condition x scenario x trial).",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", help="candidate model id (default: local when no API key is set; see wearsim models)")
    p.add_argument("--base-url", help="the candidate's endpoint: an OpenAI-compatible server for openai:* models "
                                      "(or OPENAI_BASE_URL); the judges do not use it")
    p.add_argument("--judge-family", default="auto",
                   help="auto|openai|gemini|claude|lexical (default auto); an explicit family needs its key")
    p.add_argument("--judge-model", help="judge model id overriding the family default")
    p.add_argument("--judge-base-url", metavar="URL",
                   help="the judge's endpoint, e.g. an OpenAI-compatible server for an openai:* judge "
                        "(default: WEARSIM_JUDGE_BASE_URL for an openai: judge, then OPENAI_BASE_URL)")
    p.add_argument("--ranking-judge-family", help="a second, fixed judge run on every trial")
    p.add_argument("--ranking-judge-model")
    p.add_argument("--ranking-judge-base-url", metavar="URL",
                   help="the ranking judge's endpoint (default as for --judge-base-url)")
    p.add_argument("--cache", nargs="?", const="on", default="off", choices=("on", "all", "off"),
                   help="the response cache: --cache stores and reuses judge replies and candidate replies at "
                        "temperature 0; --cache all also candidate replies at a higher temperature (each trial "
                        "its own entry); off by default")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="where the cache lives (default WEARSIM_CACHE_DIR, else ~/.cache/wearsim)")
    p.add_argument("--max-requests-per-minute", metavar="N|PROVIDER=N,...",
                   help="client-side limit per endpoint, shared by candidate and judges on it (e.g. 500, or "
                        "openai=500,gemini=1000); 429 backoff still applies")
    p.add_argument("--max-tokens-per-minute", metavar="N|PROVIDER=N,...",
                   help="the same for tokens (estimated as prompt characters / 4 plus --max-tokens, corrected by "
                        "the usage each reply reports)")
    p.add_argument("--prices", metavar="FILE",
                   help="a TOML price table (one table per model id, e.g. [\"openai:my-model\"] with text_input = "
                        "0.5, text_output = 1.5, ... in USD per million tokens, plus date and source) that adds to "
                        "and overrides the shipped benchmark/prices.toml")
    p.add_argument("--budget", type=float, metavar="USD",
                   help="start no new cell once the run's candidate and judge spend is above USD; the run dir "
                        "stays resumable (the same command with a larger --budget finishes it). Every model the "
                        "run asks needs a price")
    p.add_argument("--trials", type=int, default=1, metavar="N",
                   help="repeats of every (scenario, condition) cell (default 1); more than one is worth it "
                        "only when replies vary (--temperature above 0, or a nondeterministic API)")
    p.add_argument("--conditions", default="all", metavar="NAME,...",
                   help="comma list of prompt conditions (system prompts), or all (default). The shipped bank "
                        f"defines: {_shipped_conditions()}")
    p.add_argument("--ranking-condition", default="baseline", metavar="NAME",
                   help="the condition whose balanced Turn 2 accuracy is the headline (default baseline); "
                        "it must be among --conditions")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--max-tokens", type=int, default=300, help="reply length cap per turn (default 300)")
    p.add_argument("--concurrency", type=int, default=4, metavar="N",
                   help="cells run at once (default 4); changes speed, not results, so a resumed run may "
                        "use another value")
    p.add_argument("--max-error-rate", type=float, default=0.05, metavar="RATE",
                   help="exit with status 3 when more than this share of the planned cells failed by a fault of "
                        "the API's or ours (rate limited, session limit, connection lost, refused, empty reply, "
                        "timeout, provider or harness error; never a model's miss or an unscored judgement; "
                        "default 0.05)")
    p.add_argument("--shard", metavar="K/N",
                   help="run only the K-th of N fixed shares of the cells (by a hash of each cell, the same on "
                        "every machine and on --resume), e.g. 1/4 on one machine, 2/4 on the next; `wearsim merge` "
                        "joins the shards' run dirs into one (docs/sharding.md)")
    p.add_argument("--no-camera", action="store_true", help="strip every camera block (the camera ablation)")
    p.add_argument("--repair-style", choices=("named", "deictic"), default="named")
    p.add_argument("--scenarios", help="bank path (v1 dir, scenarios.json or JSONL; default the shipped bank)")
    p.add_argument("--ids", metavar="ID,...", help="run only these scenario ids, e.g. sc-05,sc-12")
    p.add_argument("--subset", help="bank (default; the primary score), contrast, all (both, each reported "
                                    "on its own row), or proactive (the scene changes and nobody asks: needs "
                                    "--via stream; docs/proactive.md); --ids without --subset runs the ids given, "
                                    "whatever subset")
    p.add_argument("--proactive", metavar="STRATEGY,...",
                   help="with --subset proactive: when the assistant is asked whether something needs saying: "
                        "change (on each sent frame after the picture changed; the default), every:N (every N "
                        "seconds), native (never: what a realtime API says on its own); several, comma-separated, "
                        "run one cell per strategy (and per --frame-policy)")
    p.add_argument("--limit", type=int, help="keep the first N scenarios")
    p.add_argument("--output-dir", help="run dir (default runs/bench-TIMESTAMP)")
    p.add_argument("--resume", action="store_true", help="continue the run in --output-dir")
    p.add_argument("--via", choices=("direct", "stream"), default="direct",
                   help="direct: the text proxy; stream: simulated glasses through the streaming server")
    p.add_argument("--output", choices=("text", "audio"), default="text",
                   help="audio: spoken replies from a realtime API (openai-realtime:, gemini-live:), each turn's "
                        "saved as a WAV under RUN_DIR/audio/; the judge reads the API's transcript of it, and "
                        "findings add the voice-to-voice gap (default text)")
    p.add_argument("--server", help="ws://HOST:PORT of a running `wearsim serve` (default: start one in-process)")
    p.add_argument("--token", help="token for --server (or WEARSIM_TOKEN)")
    p.add_argument("--speed", type=float, help="stream pacing: 1.0 is real time (default: no pacing, as fast as "
                                               "the server takes it)")
    p.add_argument("--media-root", metavar="DIR",
                   help="stream: take speech and frames from DIR (the media layout, e.g. what `wearsim serve "
                        "--record DIR` saved) instead of media/")
    p.add_argument("--asr-model", metavar="NAME",
                   help="stream: the in-process server's Whisper model (a CTranslate2 dir or faster-whisper name; "
                        "default the bundled tiny.en)")
    p.add_argument("--describer", default="opencv",
                   help="stream: the server's scene describer: opencv (default), authored (reads synthetic "
                        "frames back), ocr (reads text in the frame offline), openai:MODEL, gemini:MODEL")
    p.add_argument("--describer-base-url", metavar="URL",
                   help="stream: the describer model's endpoint (default WEARSIM_DESCRIBER_BASE_URL, then "
                        "OPENAI_BASE_URL for openai:*)")
    p.add_argument("--staleness", metavar="MS,MS,...",
                   help="stream: the staleness sweep; one cell per gap, Turn 2 speech starting that many ms "
                        "after the scene change (its first frame), e.g. 0,250,500,1000,2000")
    p.add_argument("--frame-policy", metavar="POLICY,...",
                   help="stream: which camera frames reach the assistant: end (the newest at the end of speech, "
                        "an upper bound), fps:N, speech:N/M (N fps while the user speaks, M otherwise), "
                        "change:T[/R] (a frame when the picture changed by more than T, at most R fps); several, "
                        "comma-separated, run one cell per policy (default: end for a chat model, fps:1 for a "
                        "realtime API)")
    p.add_argument("--frame-size", type=int, default=0, metavar="PX",
                   help="stream: send frames with their longer side at most PX pixels (default: as captured)")
    p.add_argument("--frame-quality", type=int, default=0, metavar="Q",
                   help="stream: send frames as JPEG at quality Q, 1-100 (default: as captured)")
    p.add_argument("--impair", metavar="PROFILE,...",
                   help="stream: play the glasses under these impairment profiles, one cell per profile: clean, "
                        "street, kitchen, dim, shaky, accent, weak-wifi (media_effects/impairments.toml) or your own "
                        "(--impairments-file); noise and reverb on the audio, blur, darkness, shake and occlusion "
                        "on the frames, latency, loss and a bandwidth cap on the uplink")
    p.add_argument("--impairments-file", metavar="TOML",
                   help="stream: impairment profiles of your own, over the shipped ones (docs/impairments.md)")
    p.add_argument("--impair-seed", type=int, default=0, metavar="N",
                   help="stream: the seed every impairment's random draws come from, with the cell (default 0)")
    p.add_argument("--no-frames", action="store_true",
                   help="stream: keep no thumbnails of the frames sent (by default each turn's sent frames are "
                        "kept as small JPEGs under RUN_DIR/frames/ for `wearsim view`, at most 3000 per run dir)")
    p.add_argument("--synthetic-frames", action="store_true",
                   help="stream: a turn without recorded frames gets one drawn from its authored camera text "
                        "(labelled synthetic in the record), so frame timing can be tested on every scenario")
    p.add_argument("--pictograph-frames", action="store_true",
                   help="stream: a turn without recorded frames gets its scene spec (benchmark/v1/scenes/) drawn as "
                        "pictures: objects, hands, setting, no caption (labelled pictograph in the record), so a "
                        "model must look at the frame instead of reading it; needs fonts-noto-color-emoji")
    p.set_defaults(run=run)


def _fail(text: str, code: int = 2) -> int:
    print(f"error: {text}", file=sys.stderr)
    return code


def select_scenarios(bank, ids: str | None, subset: str | None, limit: int | None):
    """The bank narrowed to `--ids` (in the bank's order), then `--subset` and `--limit`.
    Unknown ids raise KeyError naming them."""
    import dataclasses

    if ids:
        wanted = [i.strip() for i in ids.split(",") if i.strip()]
        known = {s.scenario_id for s in bank.scenarios}
        unknown = [i for i in wanted if i not in known]
        if unknown:
            raise KeyError(f"--ids: no scenario {', '.join(unknown)} in {bank.source} "
                           f"({len(known)} scenarios, e.g. {', '.join(sorted(known)[:3])})")
        bank = dataclasses.replace(bank, scenarios=tuple(s for s in bank.scenarios if s.scenario_id in wanted))
    if subset == "all":
        subset = None
    elif subset is None and not ids:
        subset = "bank"  # the primary score is the bank subset's
    return bank.select(subset, limit)


def pictograph_problem(bank, synthetic: bool) -> str | None:
    """Why `--pictograph-frames` cannot run on this bank (None: it can): the picture set is not
    installed, or a selected scenario has no valid scene spec."""
    from core.scenes import SceneError, load_scene_specs
    from media_effects.pictures import PictureSetMissing, font_path, unknown_pictures

    if synthetic:
        return "--pictograph-frames and --synthetic-frames both draw the frames no recording has: choose one"
    try:
        font_path()
        unknown = unknown_pictures(load_scene_specs(bank, required=True))
    except PictureSetMissing as exc:
        return str(exc)
    except SceneError as exc:
        more = f" (and {len(exc.problems) - 3} more)" if len(exc.problems) > 3 else ""
        return "--pictograph-frames: scene specs missing or invalid: " + "; ".join(exc.problems[:3]) + more
    return f"--pictograph-frames: {unknown[0]}" + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "") \
        if unknown else None


def duplicate_ids(bank) -> list[str]:
    from collections import Counter

    return [f"{sid} ({n} times)" for sid, n in Counter(s.scenario_id for s in bank.scenarios).items() if n > 1]


def run(args) -> int:
    import asyncio
    import math
    import signal
    import time
    from datetime import datetime
    from pathlib import Path

    from candidates.factory import model_file
    from candidates.model_ids import (candidate_family, default_model_id, is_realtime, missing_credentials,
                                                output_problem, retired_problem, transcription_model)
    from candidates.ratelimit import build_limits, configure
    from benchmark.judges import JudgeFamilyError, judge_model_id, resolve_judge_family
    from benchmark.runner import (CandidateSettings, JudgeSettings, ModelMissing, RunDirError, RunSettings,
                                  StreamSettings, TranscriptWriteError, build_manifest, open_run_dir, run_bench)
    from core.scenario import BankError, load_bank
    from perception.describer_spec import describer_problem

    try:
        full = load_bank(args.scenarios)
    except BankError as exc:
        print(f"cannot read the bank:\n{exc}", file=sys.stderr)
        return 2
    duplicates = duplicate_ids(full)
    if duplicates:
        return _fail(f"the bank {full.source} repeats scenario ids: {', '.join(duplicates)}; every scenario_id "
                     "must be unique (wearsim validate rejects this bank too)")
    try:
        if args.subset == "proactive":
            from benchmark.cli.proactive_checks import proactive_bank

            ids = [i.strip() for i in args.ids.split(",") if i.strip()] if args.ids else None
            bank = proactive_bank(full, ids, args.limit)
        else:
            bank = select_scenarios(full, args.ids, args.subset, args.limit)
    except KeyError as exc:
        return _fail(exc.args[0])
    except BankError as exc:
        print(f"cannot read the bank's proactive scenarios:\n{exc}", file=sys.stderr)
        return 2
    if not bank.scenarios:
        return _fail("no scenarios selected (check --ids, --subset and --limit)")
    for flag, value, low in (("--trials", args.trials, 1), ("--concurrency", args.concurrency, 1),
                             ("--max-tokens", args.max_tokens, 1)):
        if value < low:
            return _fail(f"{flag} must be at least {low}; got {value}")
    if args.via == "stream" and (problem := describer_problem(args.describer)):
        return _fail(f"--describer {args.describer}: {problem}")
    if not 0 <= args.max_error_rate <= 1:
        return _fail(f"--max-error-rate is a share from 0 to 1 (e.g. 0.05); got {args.max_error_rate}")
    shard = None
    if args.shard is not None:
        from benchmark.shards import ShardError, parse_shard

        try:
            shard = parse_shard(args.shard)
        except ShardError as exc:
            return _fail(str(exc))
    if args.budget is not None and not (math.isfinite(args.budget) and args.budget >= 0):
        return _fail(f"--budget is an amount of US dollars, 0 or more (e.g. 2.50); got {args.budget}")
    from benchmark.prices import PriceFileError, price_table

    try:
        prices = price_table(args.prices)
    except PriceFileError as exc:
        return _fail(f"--prices: {exc} (nothing was written)" if args.prices else str(exc))
    model_id = args.model or default_model_id()
    try:
        family = candidate_family(model_id)
        candidate_file = model_file(model_id)
        candidate_url = effective_base_url(model_id, args.base_url)
        judge_url = judge_base_url(args.judge_base_url, args.judge_family, args.judge_model)
        judge_family, resolution = resolve_judge_family(
            args.judge_family, family, base_url=judge_url, candidate_base_url=candidate_url)
        judge_model = None if judge_family == "lexical" else judge_model_id(judge_family, args.judge_model)
        judge_url = effective_base_url(judge_model, judge_base_url(args.judge_base_url, judge_family, judge_model))
        ranking_family = ranking_model = ranking_url = None
        if args.ranking_judge_family:
            ranking_url = judge_base_url(args.ranking_judge_base_url, args.ranking_judge_family,
                                         args.ranking_judge_model)
            ranking_family, _ = resolve_judge_family(
                args.ranking_judge_family, family, base_url=ranking_url, candidate_base_url=candidate_url,
                flag="--ranking-judge-family", base_url_flag="--ranking-judge-base-url")
            ranking_model = None if ranking_family == "lexical" else judge_model_id(ranking_family, args.ranking_judge_model)
            ranking_url = effective_base_url(ranking_model, judge_base_url(
                args.ranking_judge_base_url, ranking_family, ranking_model))
        limits = build_limits(args.max_requests_per_minute, args.max_tokens_per_minute)
    except JudgeFamilyError as exc:  # with the candidate's missing key too, if it has one
        candidate_problem = None if (args.via == "stream" and args.server) else missing_credentials(
            model_id, base_url=args.base_url)
        if candidate_problem:
            return _fail(f"the run cannot start:\n  {candidate_problem} (--model {model_id})\n  {exc}")
        return _fail(str(exc))
    except (ValueError, RuntimeError) as exc:
        return _fail(str(exc))
    if retired := retired_problem(model_id):
        return _fail(f"--model: {retired}; nothing was written")
    if args.budget is not None:  # a budget that cannot be kept is refused, not ignored
        transcribed = transcription_model(model_id) if args.via == "stream" else None  # billed apart from --model
        unpriced = [f"{m} ({flag})" for flag, m in (("--model", model_id), ("--judge-model", judge_model),
                                                    ("--ranking-judge-model", ranking_model),
                                                    ("the input transcription of --model", transcribed))
                    if m and prices.get(m) is None]
        if unpriced:
            return _fail(f"--budget needs a price for every model the run asks: no price for {', '.join(unpriced)} "
                         f"in {prices.origin}; add one with --prices FILE (README: What a run costs). "
                         "Nothing was written")
    describer_url = None
    if args.via == "stream" and args.describer.partition(":")[0] in ("openai", "gemini"):
        describer_url = effective_base_url(args.describer, args.describer_base_url
                                           or os.environ.get("WEARSIM_DESCRIBER_BASE_URL", "").strip() or None)
    # keys first: a run that cannot start writes nothing (with --server the server holds the candidate's key)
    needs = [] if (args.via == "stream" and args.server) else [("--model", model_id, args.base_url, "--base-url")]
    needs += [(flag, m, url, url_flag) for flag, m, url, url_flag in (
        ("--judge-model", judge_model, judge_url, "--judge-base-url"),
        ("--ranking-judge-model", ranking_model, ranking_url, "--ranking-judge-base-url")) if m]
    if args.via == "stream" and not args.server and args.describer.partition(":")[0] in ("openai", "gemini"):
        needs.append(("--describer", args.describer, describer_url, "--describer-base-url"))
    problems = [f"{problem} ({flag} {needed})" for flag, needed, base_url, url_flag in needs
                if (problem := missing_credentials(needed, base_url=base_url, base_url_flag=url_flag))]
    if problems:  # every missing key at once
        return _fail("\n  ".join(["the run cannot start:", *problems]) if len(problems) > 1 else problems[0])
    # then every endpoint the command names: one connection each, before any cell
    from candidates.reach import reach_problem

    endpoints = [("--base-url", candidate_url), ("--judge-base-url", judge_url),
                 ("--ranking-judge-base-url", ranking_url), ("--describer-base-url", describer_url)]
    if args.via == "stream" and args.server:
        endpoints = [("--server", args.server), *endpoints[1:3]]
    unreachable = [f"{flag}: {problem}" for flag, url in dict.fromkeys(endpoints) if url
                   and (problem := reach_problem(url))]
    if unreachable:
        return _fail("; ".join(unreachable) + " (nothing was written; start the server or fix the URL)")
    names = tuple(c.name for c in bank.conditions) if args.conditions == "all" else \
        tuple(n.strip() for n in args.conditions.split(",") if n.strip())
    known = [c.name for c in bank.conditions]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        return _fail(f"--conditions: no prompt condition {', '.join(unknown) or '(none given)'} in {bank.source} "
                     f"(it defines: {', '.join(known)})")
    if args.ranking_condition not in names:
        return _fail(f"--ranking-condition {args.ranking_condition!r} is not among the conditions run "
                     f"({', '.join(names)})")
    try:
        staleness = tuple(sorted({int(v) for v in args.staleness.split(",") if v.strip()})) if args.staleness else ()
    except ValueError:
        return _fail(f"--staleness takes milliseconds separated by commas, e.g. 0,250,500; got {args.staleness!r}")
    if any(v < 0 or v > 10_000 for v in staleness):
        return _fail("--staleness gaps must be from 0 to 10000 ms")
    policies: tuple[str, ...] = ()
    if args.frame_policy is not None:
        from perception.frame_policy import parse_frame_policies

        try:
            policies = tuple(p.name for p in parse_frame_policies(args.frame_policy))
        except ValueError as exc:
            return _fail(f"--frame-policy: {exc}")
    impairments: tuple[str, ...] = ()
    if args.impair is not None or args.impairments_file:
        from media_effects.impairment_profiles import select_profiles

        try:
            impairments = tuple(p.name for p in select_profiles(args.impair or "", args.impairments_file))
        except (ValueError, OSError) as exc:
            return _fail(f"--impair: {' '.join(str(exc).split())}")
        if args.impair_seed < 0:
            return _fail("--impair-seed must be a whole number >= 0")
    from benchmark.cli.proactive_checks import proactive_strategies

    strategies, problem = proactive_strategies(args, model_id, policies, staleness, impairments)
    if problem:
        return _fail(problem)
    if not 0 <= args.frame_size <= 4096 or not 0 <= args.frame_quality <= 100:
        return _fail("--frame-size takes 0 to 4096 pixels and --frame-quality 0 to 100 (0: as captured)")
    if args.via != "stream" and (staleness or args.synthetic_frames or args.pictograph_frames
                                 or args.describer != "opencv"
                                 or args.media_root or args.asr_model or policies or args.frame_size
                                 or args.frame_quality or impairments or args.no_frames):
        return _fail("--staleness, --frame-policy, --frame-size, --frame-quality, --impair, --synthetic-frames, "
                     "--pictograph-frames, --no-frames, "
                     "--describer, --media-root and --asr-model need --via stream")
    if args.media_root and not Path(args.media_root).is_dir():
        return _fail(f"--media-root {args.media_root}: no such directory")
    if args.pictograph_frames and (problem := pictograph_problem(bank, args.synthetic_frames)):
        return _fail(problem)
    if args.describer_base_url and args.via != "stream":
        return _fail("--describer-base-url needs --via stream")
    problem = output_problem(model_id, args.output)
    if problem:
        return _fail(f"--output {args.output} {problem}")
    run_dir = Path(args.output_dir or f"runs/bench-{datetime.now().strftime('%Y%m%d-%H%M%S')}")
    cache_dir, cache_candidate = None, False
    if args.cache != "off":
        from candidates.cache import ResponseCache, default_cache_dir
        from core.safe_files import UnsafePathError

        cache_dir = str(Path(args.cache_dir).expanduser().resolve() if args.cache_dir else default_cache_dir())
        try:
            ResponseCache(cache_dir).check()  # a store or journal that is a link: refused before anything is written
        except UnsafePathError as exc:
            return _fail(f"--cache-dir: {exc}; nothing was written")
        cache_candidate = args.via == "direct" and not is_realtime(model_id) and (
            args.cache == "all" or args.temperature == 0)
        if args.via == "direct" and not cache_candidate and not is_realtime(model_id):
            print(f"response cache: candidate replies at temperature {args.temperature:g} are not cached "
                  "(--cache all caches them, one entry per trial); judge replies are", file=sys.stderr)
    from core.scenes import scene_dir

    stream = StreamSettings(
        staleness_ms=staleness, frame_policies=policies, frame_size=args.frame_size, impairments=impairments,
        impairments_file=str(Path(args.impairments_file).resolve()) if args.impairments_file else None,
        impairment_seed=args.impair_seed,
        frame_quality=args.frame_quality, synthetic_frames=args.synthetic_frames, describer=args.describer,
        pictograph_frames=args.pictograph_frames, scene_dir=str(scene_dir(bank)) if args.pictograph_frames else None,
        describer_base_url=describer_url, media_root=str(Path(args.media_root).resolve()) if args.media_root else None,
        asr_model=args.asr_model, speed=args.speed, server=args.server, keep_frames=not args.no_frames,
        proactive=strategies,
        token=args.token or os.environ.get("WEARSIM_TOKEN")) if args.via == "stream" else None
    settings = RunSettings(
        candidate=CandidateSettings(model_id, temperature=args.temperature, max_tokens=args.max_tokens,
                                    output=args.output, model_file=candidate_file, base_url=candidate_url,
                                    cached=cache_candidate),
        judge=JudgeSettings(judge_family, resolution, model=judge_model, base_url=judge_url,
                            ranking_family=ranking_family, ranking_model=ranking_model, ranking_base_url=ranking_url),
        conditions=names, ranking_condition=args.ranking_condition, trials=args.trials,
        concurrency=args.concurrency, camera=not args.no_camera, repair_style=args.repair_style, stream=stream,
        cache_dir=cache_dir, rate_limits=limits.describe(), prices=prices, budget_usd=args.budget, shard=shard)
    try:  # locked and checked before any model starts; nothing is written yet
        prepared = open_run_dir(run_dir, build_manifest(bank, settings), resume=args.resume)
    except RunDirError as exc:
        return _fail(str(exc))
    configure(limits)
    try:
        print(f"candidate {model_id}" + (f" ({candidate_file})" if candidate_file else "")
              + (f" at {settings_host(candidate_url)}" if candidate_url else "")
              + f"; judge {judge_model or judge_family}" + (f" at {settings_host(judge_url)}" if judge_url else "")
              + f" ({resolution})", file=sys.stderr)
        started = time.monotonic()
        stopped_by: list[int] = []

        async def bench() -> dict:
            loop = asyncio.get_running_loop()
            main = asyncio.current_task()

            def stop(signum: int) -> None:
                if not stopped_by:
                    stopped_by.append(signum)
                    print(f"\n{signal.Signals(signum).name}: stopping (finished cells are kept)", file=sys.stderr)
                    main.cancel()

            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, stop, signum)
            try:
                async with conversations(settings, args.base_url, run_dir) as factory:
                    return await run_bench(bank, settings, run_dir, factory, prepared=prepared)
            finally:
                for signum in (signal.SIGTERM, signal.SIGINT):
                    loop.remove_signal_handler(signum)

        try:
            counts = asyncio.run(bench())
        except asyncio.CancelledError:
            if not stopped_by:
                raise
            signum = stopped_by[0]
            print(f"stopped by {signal.Signals(signum).name}: the finished cells are in "
                  f"{run_dir / 'transcripts.jsonl'}; rerun the same command with --resume to finish", file=sys.stderr)
            return 128 + signum
        except TranscriptWriteError as exc:
            return _fail(str(exc), 1)
        except ModelMissing as exc:
            return _fail(str(exc))
        except (RunDirError, KeyError) as exc:
            return _fail(str(exc.args[0] if isinstance(exc, KeyError) else exc))
        if counts.get("empty_shard"):
            print(counts["empty_shard"], file=sys.stderr)
            return 0
        outcome = ", ".join(f"{counts.get(k, 0)} {k}" for k in ("pass", "miss", "unscored", "error"))
        skipped = f" ({counts['skipped']} finished earlier, skipped)" if counts.get("skipped") else ""
        judged = ("proactive (pass: the event caught on time, or a quiet control left quiet)"
                  if args.subset == "proactive" else "Turn 2")
        print(f"finished in {time.monotonic() - started:.0f} s: {counts.get('ran', 0)} cells ran{skipped}; "
              f"{judged}: {outcome}", file=sys.stderr)
        if cache_dir:
            print(f"response cache {cache_dir}: {counts.get('cache_hits', 0)} replies from the cache, "
                  f"{counts.get('cache_misses', 0)} requested (per cell: {run_dir / 'cache_log.jsonl'})",
                  file=sys.stderr)
        from benchmark.report import write_report
        from benchmark.report.findings import headline, is_measurement

        if counts.get("budget_line"):
            print(counts["budget_line"], file=sys.stderr)
        summary = write_report(run_dir)
        from benchmark.report.faults import fault_lead

        print(fault_lead(summary), file=sys.stderr)  # turns OK over every planned cell, and each fault
        from benchmark.report.proactive_findings import is_proactive, proactive_headline

        if is_proactive(summary):
            print(proactive_headline(summary))
            print(f"report: {run_dir / 'findings.md'}")
            return _error_rate_status(summary, run_dir, args.max_error_rate)
        print(headline(summary))
        from benchmark.report.cost import cost_line

        print(cost_line(summary))
        print(f"report: {run_dir / 'findings.md'}")
        if not is_measurement(summary) and summary["manifest"].get("judge_family") == "lexical":
            print(f"no accuracy from this run (findings.md says why); with a model judge: wearsim rescore {run_dir} "
                  f"--judge-family openai --output-dir {run_dir}-rescored")
        status = _error_rate_status(summary, run_dir, args.max_error_rate)
        return 4 if status == 0 and (counts.get("budget") or {}).get("stopped_on_budget") else status
    finally:
        prepared.close()


def settings_host(base_url: str | None) -> str | None:
    from benchmark.judges.family import endpoint_host

    return endpoint_host(base_url)


def effective_base_url(model_id: str | None, base_url: str | None) -> str | None:
    """The endpoint a model id will reach: the URL given, else for OpenAI-compatible ids OPENAI_BASE_URL;
    None for the provider's default endpoint and for models without one (local, replay)."""
    if not model_id:
        return None
    from candidates.model_ids import parse_model_id

    provider = parse_model_id(model_id)[0]
    if provider in ("local", "replay"):
        return None
    if base_url:
        return base_url
    if provider in ("openai", "openai-realtime"):
        return os.environ.get("OPENAI_BASE_URL", "").strip() or None
    return None


def judge_base_url(flag_value: str | None, family: str | None, model: str | None) -> str | None:
    """A judge's endpoint: its flag, else WEARSIM_JUDGE_BASE_URL when the judge is an OpenAI-compatible one."""
    if flag_value:
        return flag_value
    env = os.environ.get("WEARSIM_JUDGE_BASE_URL", "").strip()
    if not env:
        return None
    family = (family or "").strip().lower()
    if model and ":" in model:
        return env if model.partition(":")[0] == "openai" else None
    return env if family in ("openai", "auto") else None


def _error_rate_status(summary: dict, run_dir, max_rate: float) -> int:
    """3, with one line saying so, when more than `max_rate` of the planned cells failed by a fault of the
    API's or ours (`benchmark.faults.COUNTED`; a model's miss and an unscored judgement never count)."""
    faults = summary.get("faults")
    if faults:
        failed, cells = faults["counted"], faults["planned"]
    else:  # a summary without fault counts: the errored cells over those recorded
        failed, cells = summary["counts"]["errored"], summary["counts"]["trials"]
    if not cells or failed / cells <= max_rate:
        return 0
    from benchmark.faults import COUNTED, fault_of
    from benchmark.scoring import load_trials

    failures = [t for t in load_trials(run_dir).trials if fault_of(t) in COUNTED]
    kinds = ", ".join(f"{n} {category}" for category, n in (faults or {}).get("by_fault", {}).items()
                      if category in COUNTED)
    first = failures[0].error if failures else None
    first = f"; first error: {' '.join(first.split())[:160]}" if first else ""
    print(f"error: the run failed: {failed} of {cells} cells errored ({100 * failed / cells:.1f}%, more than "
          f"--max-error-rate {100 * max_rate:g}%)" + (f" [{kinds}]" if kinds else "") + first, file=sys.stderr)
    return 3


@contextlib.asynccontextmanager
async def conversations(settings, base_url: str | None, run_dir):
    """The conversation factory of a run. Direct: the text proxy against the
    opened candidate. Stream: simulated glasses against `settings.stream.server`,
    or against a streaming server started in-process (its backend is the
    candidate). `base_url`: the candidate's endpoint as given (`--base-url`)."""
    from pathlib import Path

    from candidates import open_candidate
    from core.candidate import GenerationConfig
    from candidates.model_ids import is_realtime
    from benchmark.protocol import DirectConversation

    chosen = settings.candidate
    config = GenerationConfig(temperature=chosen.temperature, max_tokens=chosen.max_tokens)
    if settings.stream is None:
        async with open_candidate(chosen.model_id, base_url=base_url, log_dir=run_dir / "logs",
                                  output=chosen.output) as candidate:
            if chosen.cached:
                from candidates.cache import CachedCandidate, ResponseCache

                candidate = CachedCandidate(candidate, ResponseCache(settings.cache_dir), role="candidate")
            if is_realtime(chosen.model_id):  # each trial in a live conversation of its own
                yield lambda scenario, condition, _point, _trial: DirectConversation(
                    scenario, condition, candidate.conversation(), config, camera=settings.camera,
                    repair_style=settings.repair_style, owns_candidate=True)
            else:
                yield lambda scenario, condition, _point, _trial: DirectConversation(
                    scenario, condition, candidate, config, camera=settings.camera,
                    repair_style=settings.repair_style)
        return
    from core.scenes import scene_spec_in
    from benchmark.stream_conversation import StreamConversation

    stream = settings.stream
    server = contextlib.nullcontext(stream.server)
    if not stream.server:
        from streaming.app import ServerSettings
        from streaming.local_server import running_server

        print(f"starting the streaming server in-process (Whisper, VAD, backend); its log: "
              f"{run_dir / 'logs' / 'server.log'}", file=sys.stderr)
        # room for every cell the run plays at once (`--concurrency`), never below the server's defaults
        server = running_server(ServerSettings.with_room_for(settings.concurrency, backend_base_url=base_url,
                                                             asr_model=stream.asr_model,
                                                             describer_base_url=stream.describer_base_url,
                                                             allowed_backends=(chosen.model_id,),
                                                             allowed_describers=(stream.describer,)),
                                log_path=run_dir / "logs" / "server.log")
    with server as url:
        from core.proactive_scenario import ProactiveScenario
        from benchmark.watch_conversation import WatchConversation

        def watch(scenario, condition, point):
            return WatchConversation(scenario, condition, url, chosen.model_id, config, strategy=point.proactive,
                                     token=stream.token, describer=stream.describer, frame_policy=point.frame_policy,
                                     frame_size=stream.frame_size, frame_quality=stream.frame_quality,
                                     output=chosen.output, keep_frames=stream.keep_frames)

        profiles = {}
        if stream.impairments:
            from media_effects.impairment_profiles import select_profiles
            from simulator.timeline import cell_seed

            profiles = {p.name: p for p in select_profiles(stream.impairments, stream.impairments_file)}
        yield lambda scenario, condition, point, trial: watch(scenario, condition, point) if isinstance(
            scenario, ProactiveScenario) else StreamConversation(
            scenario, condition, url, chosen.model_id, config, camera=settings.camera,
            repair_style=settings.repair_style, speed=stream.speed, token=stream.token, describer=stream.describer,
            staleness_ms=point.staleness_ms, frame_policy=point.frame_policy, frame_size=stream.frame_size,
            frame_quality=stream.frame_quality, impairment=profiles[point.impairment].with_seed(
                cell_seed(stream.impairment_seed, scenario.scenario_id, trial)) if point.impairment else None,
            synthetic_frames=stream.synthetic_frames, output=chosen.output, keep_frames=stream.keep_frames,
            media_root=Path(stream.media_root) if stream.media_root else None,
            scenes=scene_spec_in(stream.scene_dir, scenario) if stream.pictograph_frames else None)
