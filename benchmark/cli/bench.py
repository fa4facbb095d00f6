"""`wearsim bench`: run the Turn 1/2/3 benchmark on a candidate model."""

from __future__ import annotations

import argparse
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
  wearsim bench --via stream --model openai-realtime:gpt-realtime-2 --limit 3   # a realtime API as the glasses' assistant
  wearsim bench --via stream --staleness 0,250,500,1000,2000 --synthetic-frames --describer authored
  wearsim bench --via stream --frame-policy fps:0.2,fps:1,speech:1/0.3,change:0.02,end --staleness 250,2000 \
      --synthetic-frames --describer authored
  wearsim bench --model openai-realtime:gpt-realtime-1.5 --via stream --budget 2.50 --output-dir runs/rt
  wearsim bench --model openai:my-model --base-url URL --prices my-prices.toml --budget 1 --output-dir runs/mine
  wearsim bench --model openai:gpt-4o-mini --shard 2/4 --output-dir runs/gpt-2of4   # then: wearsim merge
  wearsim bench --config run.toml --trials 1          # flags from a file; the command line wins
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


GROUPS = (
    ("candidate", "the model under test and how it is asked"),
    ("judge", "who grades Turn 2 and Turn 3"),
    ("bank", "which scenarios and prompt conditions run"),
    ("glasses", "the simulated glasses and the streaming server behind them; every flag here needs --via stream"),
    ("cost", "the response cache, client-side rate limits, prices and the budget"),
    ("run", "the run dir, the config file and how the cells run"),
)


def register(subparsers) -> None:
    from core.candidate import DEFAULT_MAX_TOKENS

    p = subparsers.add_parser(
        "bench",
        help="run the benchmark on a candidate model",
        description="Run Turn 1, Turn 2, judge, and Turn 3 on a miss, for every cell (condition x scenario x trial).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    candidate, judge, bank, glasses, cost, run_group = (p.add_argument_group(title, text) for title, text in GROUPS)
    candidate.add_argument(
        "--model", help="candidate model id (default: local when no API key is set; see wearsim models)"
    )
    candidate.add_argument(
        "--base-url",
        help="the candidate's endpoint: an OpenAI-compatible server for openai:* "
        "models (or OPENAI_BASE_URL); the judges do not use it",
    )
    candidate.add_argument("--temperature", type=float, default=0.0)
    candidate.add_argument(
        "--max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        help=f"reply length cap per turn (default {DEFAULT_MAX_TOKENS})",
    )
    candidate.add_argument(
        "--output",
        choices=("text", "audio"),
        default="text",
        help="audio: spoken replies from a realtime API (openai-realtime:, gemini-live:), each "
        "turn's saved as a WAV under RUN_DIR/audio/; the judge reads the API's transcript "
        "of it, and findings add the voice-to-voice gap (default text)",
    )

    judge.add_argument(
        "--judge-family",
        default="auto",
        help="auto|openai|gemini|claude|lexical (default auto); an explicit family needs its key",
    )
    judge.add_argument("--judge-model", help="judge model id overriding the family default")
    judge.add_argument(
        "--judge-base-url",
        metavar="URL",
        help="the judge's endpoint, e.g. an OpenAI-compatible server for an openai:* judge "
        "(default: WEARSIM_JUDGE_BASE_URL for an openai: judge, then OPENAI_BASE_URL)",
    )
    judge.add_argument("--ranking-judge-family", help="a second, fixed judge run on every trial")
    judge.add_argument("--ranking-judge-model")
    judge.add_argument(
        "--ranking-judge-base-url", metavar="URL", help="the ranking judge's endpoint (default as for --judge-base-url)"
    )

    bank.add_argument("--scenarios", help="bank path (v1 dir, scenarios.json or JSONL; default the shipped bank)")
    bank.add_argument("--ids", metavar="ID,...", help="run only these scenario ids, e.g. sc-05,sc-12")
    bank.add_argument(
        "--subset",
        help="bank (default; the primary score), contrast, all (both, each reported "
        "on its own row), or proactive (the scene changes and nobody asks: needs "
        "--via stream; docs/proactive.md); --ids without --subset runs the ids "
        "given, whatever subset",
    )
    bank.add_argument("--limit", type=int, help="keep the first N scenarios")
    bank.add_argument(
        "--proactive",
        metavar="STRATEGY,...",
        help="with --subset proactive: when the assistant is asked whether something needs saying: "
        "change (on each sent frame after the picture changed; the default), every:N (every N "
        "seconds), native (never: what a realtime API says on its own); several, "
        "comma-separated, run one cell per strategy (and per --frame-policy)",
    )
    bank.add_argument(
        "--conditions",
        default="all",
        metavar="NAME,...",
        help="comma list of prompt conditions (system prompts), or all (default). The shipped bank "
        f"defines: {_shipped_conditions()}",
    )
    bank.add_argument(
        "--ranking-condition",
        default="baseline",
        metavar="NAME",
        help="the condition whose balanced Turn 2 accuracy is the headline (default baseline); "
        "it must be among --conditions",
    )
    bank.add_argument("--no-camera", action="store_true", help="strip every camera block (the camera ablation)")
    bank.add_argument("--repair-style", choices=("named", "deictic"), default="named")

    glasses.add_argument("--server", help="ws://HOST:PORT of a running `wearsim serve` (default: start one in-process)")
    glasses.add_argument("--token", help="token for --server (or WEARSIM_TOKEN)")
    glasses.add_argument(
        "--speed",
        type=float,
        help="stream pacing: 1.0 is real time (default: no pacing, as fast as the server takes it)",
    )
    glasses.add_argument(
        "--end-of-turn",
        choices=("silence", "model"),
        help="what ends the user's turn: silence (a fixed 1.5 s of silence; the default) or "
        "model (the Smart Turn end-of-turn model, asked after 200 ms of silence, the fixed "
        "silence as fallback; docs/perception.md)",
    )
    glasses.add_argument(
        "--media-root",
        metavar="DIR",
        help="take speech and frames from DIR (the media layout, e.g. what `wearsim serve "
        "--record DIR` saved) instead of media/",
    )
    glasses.add_argument(
        "--asr-model",
        metavar="NAME",
        help="the in-process server's Whisper model (a CTranslate2 dir or faster-whisper name; "
        "default the bundled tiny.en)",
    )
    glasses.add_argument(
        "--describer",
        help="the server's scene describer: opencv (default), authored (reads synthetic "
        "frames back; the default of a proactive run on drawn frames), ocr (reads text in the "
        "frame offline), openai:MODEL, gemini:MODEL. A describer that cannot read the frames "
        "(opencv or ocr on synthetic or pictograph frames) is named blind at the start and in "
        "the headline",
    )
    glasses.add_argument(
        "--describer-base-url",
        metavar="URL",
        help="the describer model's endpoint (default WEARSIM_DESCRIBER_BASE_URL, then OPENAI_BASE_URL for openai:*)",
    )
    glasses.add_argument(
        "--staleness",
        metavar="MS,MS,...",
        help="the staleness sweep; one cell per gap, Turn 2 speech starting that many ms "
        "after the scene change (its first frame), e.g. 0,250,500,1000,2000",
    )
    glasses.add_argument(
        "--frame-policy",
        metavar="POLICY,...",
        help="which camera frames reach the assistant: end (the newest at the end of speech, "
        "an upper bound), fps:N, speech:N/M (N fps while the user speaks, M otherwise), "
        "change:T[/R] (a frame when the picture changed by more than T, at most R fps); "
        "several, comma-separated, run one cell per policy (default: end for a chat model, "
        "fps:1 for a realtime API)",
    )
    glasses.add_argument(
        "--frame-size",
        type=int,
        default=0,
        metavar="PX",
        help="send frames with their longer side at most PX pixels (default: as captured)",
    )
    glasses.add_argument(
        "--frame-quality",
        type=int,
        default=0,
        metavar="Q",
        help="send frames as JPEG at quality Q, 1-100 (default: as captured)",
    )
    glasses.add_argument(
        "--impair",
        metavar="PROFILE,...",
        help="play the glasses under these impairment profiles, one cell per profile: clean, "
        "street, kitchen, dim, shaky, accent, weak-wifi (media_effects/impairments.toml) or "
        "your own (--impairments-file); noise and reverb on the audio, blur, darkness, shake "
        "and occlusion on the frames, latency, loss and a bandwidth cap on the uplink",
    )
    glasses.add_argument(
        "--impairments-file",
        metavar="TOML",
        help="impairment profiles of your own, over the shipped ones (docs/impairments.md)",
    )
    glasses.add_argument(
        "--impair-seed",
        type=int,
        default=0,
        metavar="N",
        help="the seed every impairment's random draws come from, with the cell (default 0)",
    )
    glasses.add_argument(
        "--no-frames",
        action="store_true",
        help="keep no thumbnails of the frames sent (by default each turn's sent frames are "
        "kept as small JPEGs under RUN_DIR/frames/ for `wearsim view`, at most 3000 per run "
        "dir)",
    )
    glasses.add_argument(
        "--synthetic-frames",
        action="store_true",
        help="a turn without recorded frames gets one drawn from its authored camera text "
        "(labelled synthetic in the record), so frame timing can be tested on every scenario",
    )
    glasses.add_argument(
        "--pictograph-frames",
        action="store_true",
        help="a turn without recorded frames gets its scene spec (benchmark/v1/scenes/) drawn as "
        "pictures: objects, hands, setting, no caption (labelled pictograph in the record), "
        "so a model must look at the frame instead of reading it; needs "
        "fonts-noto-color-emoji",
    )

    cost.add_argument(
        "--cache",
        nargs="?",
        const="on",
        default="off",
        choices=("on", "all", "off"),
        help="the response cache: --cache stores and reuses judge replies and candidate replies at "
        "temperature 0; --cache all also candidate replies at a higher temperature (each trial "
        "its own entry); off by default",
    )
    cost.add_argument(
        "--cache-dir", metavar="DIR", help="where the cache lives (default WEARSIM_CACHE_DIR, else ~/.cache/wearsim)"
    )
    cost.add_argument(
        "--max-requests-per-minute",
        metavar="N|PROVIDER=N,...",
        help="client-side limit per endpoint, shared by candidate and judges on it (e.g. 500, or "
        "openai=500,gemini=1000); 429 backoff still applies",
    )
    cost.add_argument(
        "--max-tokens-per-minute",
        metavar="N|PROVIDER=N,...",
        help="the same for tokens (estimated as prompt characters / 4 plus --max-tokens, corrected "
        "by the usage each reply reports)",
    )
    cost.add_argument(
        "--prices",
        metavar="FILE",
        help='a TOML price table (one table per model id, e.g. ["openai:my-model"] with text_input '
        "= 0.5, text_output = 1.5, ... in USD per million tokens, plus date and source) that "
        "adds to and overrides the shipped benchmark/prices.toml",
    )
    cost.add_argument(
        "--budget",
        type=float,
        metavar="USD",
        help="start no new cell once the run's candidate and judge spend is above USD; the run dir "
        "stays resumable (the same command with a larger --budget finishes it). Every model "
        "the run asks needs a price",
    )

    run_group.add_argument(
        "--config",
        metavar="FILE.toml",
        help="read flags from a TOML file: one key per flag, named as in this help without the "
        'leading -- (max-tokens = 120, judge-family = "lexical", synthetic-frames = '
        'true; a comma list as "a,b" or ["a", "b"]; paths relative to the working '
        "directory, as here); flags on the command line win over the file; the manifest "
        "records the file's path and sha256",
    )
    run_group.add_argument(
        "--via",
        choices=("direct", "stream"),
        default="direct",
        help="direct: the text proxy; stream: simulated glasses through the streaming server",
    )
    run_group.add_argument("--output-dir", help="run dir (default runs/bench-TIMESTAMP)")
    run_group.add_argument("--resume", action="store_true", help="continue the run in --output-dir")
    run_group.add_argument(
        "--trials",
        type=int,
        default=1,
        metavar="N",
        help="repeats of every (scenario, condition) cell (default 1); more than one is worth "
        "it only when replies vary (--temperature above 0, or a nondeterministic API)",
    )
    run_group.add_argument(
        "--concurrency",
        type=int,
        default=4,
        metavar="N",
        help="cells run at once (default 4); changes speed, not results, so a resumed run may use another value",
    )
    run_group.add_argument(
        "--max-error-rate",
        type=float,
        default=0.05,
        metavar="RATE",
        help="exit with status 3 when more than this share of the planned cells failed by a "
        "fault of the API's or ours (rate limited, session limit, connection lost, "
        "refused, empty reply, timeout, provider or harness error; never a model's miss "
        "or an unscored judgement; default 0.05)",
    )
    run_group.add_argument(
        "--shard",
        metavar="K/N",
        help="run only the K-th of N fixed shares of the cells (by a hash of each cell, the "
        "same on every machine and on --resume), e.g. 1/4 on one machine, 2/4 on the "
        "next; `wearsim merge` joins the shards' run dirs into one (docs/sharding.md)",
    )
    # the flags only a stream run takes, stated once: the glasses group (bench_checks.check_stream_flags)
    stream_only = tuple((a.option_strings[0], a.dest, a.default) for a in glasses._group_actions)
    p.set_defaults(run=run, stream_only=stream_only, config_file=None, settle=_config_reader(p))


def _config_reader(bench: argparse.ArgumentParser):
    """What `wearsim` calls after parsing the command line: `--config`'s flags read as `bench`'s defaults
    and the command line parsed again over them (benchmark/cli/run_config.py)."""

    def settle(top: argparse.ArgumentParser, argv: list[str], args: argparse.Namespace) -> argparse.Namespace:
        from benchmark.cli.run_config import with_config

        return with_config(bench, top, argv, args)

    return settle


def run(args) -> int:
    """The pre-flight checks and settings, each a named step that may stop the command; then the run and
    its report."""
    import time
    from datetime import datetime
    from pathlib import Path

    from benchmark.cli.bench_checks import (
        Stop,
        check_endpoints,
        check_keys,
        check_prices,
        check_run_flags,
        check_stream_flags,
        default_describer,
        load_prices,
        selected_bank,
        start_lines,
    )
    from benchmark.cli.bench_settings import (
        build_settings,
        chosen_conditions,
        chosen_sweeps,
        describer_endpoint,
        resolve_models,
        response_cache,
    )
    from candidates.ratelimit import configure

    try:
        bank = selected_bank(args)
        described = args.via == "stream" and args.describer is None
        if described:
            args.describer = default_describer(args)
        shard = check_run_flags(args)
        prices = load_prices(args)
        models = resolve_models(args)
        check_prices(args, models, prices)
        describer_url = describer_endpoint(args)
        check_keys(args, models, describer_url)  # keys first: a run that cannot start writes nothing
        check_endpoints(args, models, describer_url)  # then every endpoint named: one connection each
        conditions = chosen_conditions(args, bank)
        sweeps = chosen_sweeps(args, models.model_id)
        check_stream_flags(args, bank, models.model_id)
        run_dir = Path(args.output_dir or f"runs/bench-{datetime.now().strftime('%Y%m%d-%H%M%S')}")
        cache = response_cache(args, models.model_id)
        settings = build_settings(args, bank, models, conditions, sweeps, shard, prices, describer_url, cache)
        prepared = _lock_run_dir(run_dir, bank, settings, args.resume)
    except Stop as stop:
        return stop.report()
    configure(models.limits)
    try:
        print(models.describe(), file=sys.stderr)
        for line in start_lines(args, models.model_id, described):
            print(line, file=sys.stderr)
        if note := _frames_note(settings, models.model_id):  # what reads drawn frames, when this describer cannot
            print(note, file=sys.stderr)
        started = time.monotonic()
        counts = _run_cells(bank, settings, run_dir, prepared, args.base_url)
        if counts.get("empty_shard"):
            print(counts["empty_shard"], file=sys.stderr)
            return 0
        _say_finished(args, counts, time.monotonic() - started, settings.cache_dir, run_dir)
        return _report(args, counts, run_dir)
    except Stop as stop:
        return stop.report()
    finally:
        prepared.close()


def _frames_note(settings, model_id: str) -> str | None:
    """When the run draws frames its describer cannot read (pictographs behind opencv): say so first."""
    from benchmark.report.frame_source import before_run_note

    stream = settings.stream
    drawn = stream and ("pictograph" if stream.pictograph_frames else "synthetic" if stream.synthetic_frames else None)
    return before_run_note(stream.describer, drawn, model_id) if drawn else None


def _lock_run_dir(run_dir, bank, settings, resume: bool):
    """The run dir locked and checked before any model starts; nothing is written yet."""
    from benchmark.cli.bench_checks import Stop
    from benchmark.run.errors import RunDirError
    from benchmark.run.manifest import build_manifest
    from benchmark.run.run_dir import open_run_dir

    try:
        return open_run_dir(run_dir, build_manifest(bank, settings), resume=resume)
    except RunDirError as exc:
        raise Stop(str(exc)) from None


def _run_cells(bank, settings, run_dir, prepared, base_url: str | None) -> dict:
    """Every cell of the run, until done or stopped (SIGTERM or Ctrl-C: the finished cells are kept);
    the counts `run_bench` returns. A run that stops early raises `Stop` with its exit status."""
    import asyncio
    import signal

    from benchmark.cli.bench_checks import Stop
    from benchmark.cli.bench_conversations import conversations
    from benchmark.run.errors import ModelMissing, RunDirError, TranscriptWriteError
    from benchmark.run.runner import run_bench

    stopped_by: list[int] = []

    async def bench() -> dict:
        loop = asyncio.get_running_loop()
        main = asyncio.current_task()
        assert main is not None  # bench() runs as asyncio.run's task

        def stop(signum: int) -> None:
            if not stopped_by:
                stopped_by.append(signum)
                print(f"\n{signal.Signals(signum).name}: stopping (finished cells are kept)", file=sys.stderr)
                main.cancel()

        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop, signum)
        try:
            async with conversations(settings, base_url, run_dir) as factory:
                return await run_bench(bank, settings, run_dir, factory, prepared=prepared)
        finally:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)

    try:
        return asyncio.run(bench())
    except asyncio.CancelledError:
        if not stopped_by:
            raise
        signum = stopped_by[0]
        raise Stop(
            f"stopped by {signal.Signals(signum).name}: the finished cells are in "
            f"{run_dir / 'transcripts.jsonl'}; rerun the same command with --resume to finish",
            128 + signum,
            bare=True,
        ) from None
    except TranscriptWriteError as exc:
        raise Stop(str(exc), 1) from None
    except ModelMissing as exc:
        raise Stop(str(exc)) from None
    except (RunDirError, KeyError) as exc:
        raise Stop(str(exc.args[0] if isinstance(exc, KeyError) else exc)) from None


def _say_finished(args, counts: dict, seconds: float, cache_dir: str | None, run_dir) -> None:
    """The run's closing lines on stderr: cells and outcomes, and the response cache's hits."""
    outcome = ", ".join(f"{counts.get(k, 0)} {k}" for k in ("pass", "miss", "unscored", "error"))
    skipped = f" ({counts['skipped']} finished earlier, skipped)" if counts.get("skipped") else ""
    judged = (
        "proactive (pass: the event caught on time, or a quiet control left quiet)"
        if args.subset == "proactive"
        else "Turn 2"
    )
    print(
        f"finished in {seconds:.0f} s: {counts.get('ran', 0)} cells ran{skipped}; {judged}: {outcome}", file=sys.stderr
    )
    if cache_dir:
        print(
            f"response cache {cache_dir}: {counts.get('cache_hits', 0)} replies from the cache, "
            f"{counts.get('cache_misses', 0)} requested (per cell: {run_dir / 'cache_log.jsonl'})",
            file=sys.stderr,
        )
    if counts.get("budget_line"):
        print(counts["budget_line"], file=sys.stderr)


def _report(args, counts: dict, run_dir) -> int:
    """The report written, its headline printed; the exit status (3: too many cells failed, 4: stopped
    on --budget)."""
    from benchmark.report import write_report
    from benchmark.report.cost import cost_line
    from benchmark.report.faults import fault_lead
    from benchmark.report.findings import headline, is_measurement
    from benchmark.report.proactive_findings import is_proactive, proactive_headline
    from benchmark.scoring.blind import blind_line

    summary = write_report(run_dir)
    print(fault_lead(summary), file=sys.stderr)  # turns OK over every planned cell, and each fault
    if is_proactive(summary):
        print(proactive_headline(summary))
        print(f"report: {run_dir / 'findings.md'}")
        return _error_rate_status(summary, run_dir, args.max_error_rate)
    print(headline(summary))
    if blind := blind_line(summary.get("blind_camera")):
        print(blind)
    print(cost_line(summary))
    print(f"report: {run_dir / 'findings.md'}")
    if not is_measurement(summary) and summary["manifest"].get("judge_family") == "lexical":
        print(
            f"no accuracy from this run (findings.md says why); with a model judge: wearsim rescore {run_dir} "
            f"--judge-family openai --output-dir {run_dir}-rescored"
        )
    status = _error_rate_status(summary, run_dir, args.max_error_rate)
    return 4 if status == 0 and (counts.get("budget") or {}).get("stopped_on_budget") else status


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
    kinds = ", ".join(
        f"{n} {category}" for category, n in (faults or {}).get("by_fault", {}).items() if category in COUNTED
    )
    first = failures[0].error if failures else None
    first = f"; first error: {' '.join(first.split())[:160]}" if first else ""
    print(
        f"error: the run failed: {failed} of {cells} cells errored ({100 * failed / cells:.1f}%, more than "
        f"--max-error-rate {100 * max_rate:g}%)" + (f" [{kinds}]" if kinds else "") + first,
        file=sys.stderr,
    )
    return 3
