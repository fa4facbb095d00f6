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
  wearsim bench --output-dir runs/first --resume      # finish an interrupted run
  wearsim bench --via stream --model openai-realtime:gpt-realtime --limit 3   # a realtime API as the glasses' assistant
  wearsim bench --via stream --staleness 0,250,500,1000,2000 --synthetic-frames --describer authored
"""


def register(subparsers) -> None:
    p = subparsers.add_parser("bench", help="run the benchmark on a candidate model",
                              description="Run Turn 1, Turn 2, judge, and Turn 3 on a miss, for every cell.",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", help="candidate model id (default: local when no API key is set)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint for openai:* models (or OPENAI_BASE_URL)")
    p.add_argument("--judge-family", default="auto", help="auto|openai|gemini|claude|lexical (default auto)")
    p.add_argument("--judge-model", help="judge model id overriding the family default")
    p.add_argument("--ranking-judge-family", help="a second, fixed judge run on every trial")
    p.add_argument("--ranking-judge-model")
    p.add_argument("--trials", type=int, default=1)
    p.add_argument("--conditions", default="all", help="comma list of prompt conditions, or all (default)")
    p.add_argument("--ranking-condition", default="baseline")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--max-tokens", type=int, default=300, help="reply length cap per turn (default 300)")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--no-camera", action="store_true", help="strip every camera block (the camera ablation)")
    p.add_argument("--repair-style", choices=("named", "deictic"), default="named")
    p.add_argument("--scenarios", help="bank path (v1 dir, scenarios.json or JSONL; default the shipped bank)")
    p.add_argument("--subset", help="keep scenarios of this subset (bank or contrast)")
    p.add_argument("--limit", type=int, help="keep the first N scenarios")
    p.add_argument("--output-dir", help="run dir (default runs/bench-TIMESTAMP)")
    p.add_argument("--resume", action="store_true", help="continue the run in --output-dir")
    p.add_argument("--via", choices=("direct", "stream"), default="direct",
                   help="direct: the text proxy; stream: simulated glasses through the streaming server")
    p.add_argument("--server", help="ws://HOST:PORT of a running `wearsim serve` (default: start one in-process)")
    p.add_argument("--token", help="token for --server (or WEARSIM_TOKEN)")
    p.add_argument("--speed", type=float, help="stream pacing: 1.0 is real time (default: no pacing, as fast as "
                                               "the server takes it)")
    p.add_argument("--describer", default="opencv",
                   help="stream: the server's scene describer: opencv (default), authored (reads synthetic "
                        "frames back), openai:MODEL, gemini:MODEL")
    p.add_argument("--staleness", metavar="MS,MS,...",
                   help="stream: the staleness sweep; one cell per gap, Turn 2 speech starting that many ms "
                        "after the scene change (its first frame), e.g. 0,250,500,1000,2000")
    p.add_argument("--synthetic-frames", action="store_true",
                   help="stream: a turn without recorded frames gets one drawn from its authored camera text "
                        "(labelled synthetic in the record), so frame timing can be tested on every scenario")
    p.set_defaults(run=run)


def run(args) -> int:
    import asyncio
    import time
    from datetime import datetime
    from pathlib import Path

    from benchmark.candidates import candidate_family, default_model_id
    from benchmark.judges import JudgeFamilyError, judge_model_id, resolve_judge_family
    from benchmark.runner import RunDirError, RunSettings, run_bench
    from benchmark.scenario import BankError, load_bank

    try:
        bank = load_bank(args.scenarios).select(args.subset, args.limit)
    except BankError as exc:
        print(f"cannot read the bank:\n{exc}", file=sys.stderr)
        return 2
    if not bank.scenarios:
        print("no scenarios selected", file=sys.stderr)
        return 2
    model_id = args.model or default_model_id()
    try:
        family = candidate_family(model_id)
        judge_family, resolution = resolve_judge_family(args.judge_family, family)
        judge_model = None if judge_family == "lexical" else judge_model_id(judge_family, args.judge_model)
        ranking_family = ranking_model = None
        if args.ranking_judge_family:
            ranking_family, _ = resolve_judge_family(args.ranking_judge_family, family)
            ranking_model = None if ranking_family == "lexical" else judge_model_id(ranking_family, args.ranking_judge_model)
    except (JudgeFamilyError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    names = tuple(c.name for c in bank.conditions) if args.conditions == "all" else \
        tuple(n.strip() for n in args.conditions.split(",") if n.strip())
    if args.ranking_condition not in names:
        print(f"error: --ranking-condition {args.ranking_condition!r} is not among the conditions run "
              f"({', '.join(names)})", file=sys.stderr)
        return 2
    try:
        staleness = tuple(sorted({int(v) for v in args.staleness.split(",") if v.strip()})) if args.staleness else ()
    except ValueError:
        print(f"error: --staleness takes milliseconds separated by commas, e.g. 0,250,500; got {args.staleness!r}",
              file=sys.stderr)
        return 2
    if any(v < 0 or v > 10_000 for v in staleness):
        print("error: --staleness gaps must be from 0 to 10000 ms", file=sys.stderr)
        return 2
    if args.via != "stream" and (staleness or args.synthetic_frames or args.describer != "opencv"):
        print("error: --staleness, --synthetic-frames and --describer need --via stream", file=sys.stderr)
        return 2
    run_dir = Path(args.output_dir or f"runs/bench-{datetime.now().strftime('%Y%m%d-%H%M%S')}")
    settings = RunSettings(
        model_id=model_id, judge_family=judge_family, judge_family_resolution=resolution, judge_model=judge_model,
        conditions=names, ranking_condition=args.ranking_condition, trials=args.trials,
        temperature=args.temperature, concurrency=args.concurrency, camera=not args.no_camera,
        repair_style=args.repair_style, ranking_judge_family=ranking_family,
        ranking_judge_model=ranking_model, via=args.via, max_tokens=args.max_tokens, staleness_ms=staleness,
        synthetic_frames=args.synthetic_frames, describer=args.describer if args.via == "stream" else None)
    print(f"candidate {model_id}; judge {judge_model or judge_family} ({resolution})", file=sys.stderr)
    started = time.monotonic()

    async def bench() -> dict:
        async with conversations(settings, args, run_dir) as factory:
            return await run_bench(bank, settings, run_dir, factory, resume=args.resume)

    try:
        counts = asyncio.run(bench())
    except (RunDirError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"finished in {time.monotonic() - started:.0f} s: {counts}", file=sys.stderr)
    from benchmark.report import write_report
    from benchmark.report.findings import headline

    summary = write_report(run_dir)
    print(headline(summary))
    print(f"report: {run_dir / 'findings.md'}")
    return 0


@contextlib.asynccontextmanager
async def conversations(settings, args, run_dir):
    """The conversation factory of a run. Direct: the text proxy against the
    opened candidate. Stream: simulated glasses against `--server`, or against
    a streaming server started in-process (its backend is the candidate)."""
    from benchmark.candidates import open_candidate
    from benchmark.candidates.base import GenerationConfig
    from benchmark.protocol import DirectConversation

    config = GenerationConfig(temperature=settings.temperature, max_tokens=settings.max_tokens)
    if settings.via == "direct":
        async with open_candidate(settings.model_id, base_url=args.base_url, log_dir=run_dir / "logs") as candidate:
            yield lambda scenario, condition, _gap: DirectConversation(
                scenario, condition, candidate, config, camera=settings.camera, repair_style=settings.repair_style)
        return
    from benchmark.stream_conversation import StreamConversation

    token = args.token or os.environ.get("WEARSIM_TOKEN")
    server = contextlib.nullcontext(args.server)
    if not args.server:
        from streaming.app import ServerSettings
        from streaming.local_server import running_server

        print("starting the streaming server in-process (Whisper, VAD, backend)", file=sys.stderr)
        server = running_server(ServerSettings(backend_base_url=args.base_url))
    with server as url:
        yield lambda scenario, condition, gap: StreamConversation(
            scenario, condition, url, settings.model_id, config, camera=settings.camera,
            repair_style=settings.repair_style, speed=args.speed, token=token, describer=args.describer,
            staleness_ms=gap, synthetic_frames=settings.synthetic_frames)
