"""`wearsim bench`'s command line: the help text and every flag, in its argument groups."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim bench --output-dir runs/first              # whole bank, local model, lexical judge
  wearsim bench --model openai:gpt-4o-mini --judge-family gemini --trials 5 --output-dir runs/gpt
  wearsim bench --model openai:qwen2.5 --base-url http://127.0.0.1:8000/v1 \\
      --judge-family openai --judge-model openai:llama3 --judge-base-url http://127.0.0.1:8001/v1
  wearsim bench --ids sc-05,sc-12 --conditions baseline   # two scenarios, one condition
  wearsim bench --output-dir runs/first --resume      # finish an interrupted run
  wearsim bench --via stream --model openai-realtime:gpt-realtime-2 --limit 3   # a realtime API as the assistant
  wearsim bench --via stream --frame-policy fps:1,end --staleness 250,2000 \\
      --synthetic-frames --describer authored
  wearsim bench --model openai:my-model --base-url URL --prices my-prices.toml --budget 1 --output-dir runs/mine
  wearsim bench --model openai:gpt-4o-mini --shard 2/4 --output-dir runs/gpt-2of4   # then: wearsim merge
  wearsim bench --config run.toml --trials 1          # flags from a file; the command line wins
exit status: 0 done; 2 the run could not start; 3 more than --max-error-rate of the cells failed by a
fault (the report is still written); 4 stopped on --budget; 130/143 interrupted (rerun with --resume).
docs/usage.md has the details: endpoints, the response cache, cost and budget, sweeps, shards, exit status.
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
    ("glasses", "every flag here needs --via stream"),
    ("cost", "the response cache, client-side rate limits, prices and the budget"),
    ("run", "the run dir, the config file and how the cells run"),
)


def add_bench_arguments(p: argparse.ArgumentParser) -> tuple[tuple[str, str, object], ...]:
    """Every flag of `wearsim bench` added to `p`, in its groups; the flags only a stream run takes (option,
    dest, default), stated once: the glasses group's (bench_checks.check_stream_flags)."""
    from benchmark.cli.glasses_args import add_glasses_arguments
    from benchmark.judges.family import judge_families
    from core.candidate import DEFAULT_MAX_TOKENS

    candidate, judge, bank, glasses, cost, run_group = (p.add_argument_group(title, text) for title, text in GROUPS)
    candidate.add_argument(
        "--model", help="candidate model id (default: local when no API key is set; see wearsim models)"
    )
    candidate.add_argument(
        "--base-url",
        metavar="URL",
        help="the candidate's OpenAI-compatible endpoint (or OPENAI_BASE_URL); not the judges'",
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
        help="audio: a realtime API's spoken replies, saved under RUN_DIR/audio/ and judged by their "
        "transcript (default text)",
    )

    judge.add_argument(
        "--judge-family",
        default="auto",
        help=f"{'|'.join(('auto', *judge_families()))} (default auto); an explicit family needs its key",
    )
    judge.add_argument("--judge-model", help="judge model id overriding the family default")
    judge.add_argument(
        "--judge-base-url",
        metavar="URL",
        help="the judge's OpenAI-compatible endpoint (default WEARSIM_JUDGE_BASE_URL, then OPENAI_BASE_URL)",
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
        help="bank (default; the primary score), contrast, all (both), or proactive (nobody asks: "
        "needs --via stream; docs/proactive.md)",
    )
    bank.add_argument("--limit", type=int, help="keep the first N scenarios")
    bank.add_argument(
        "--proactive",
        metavar="STRATEGY,...",
        help="with --subset proactive: when the assistant is asked whether anything needs saying (a "
        "check-in): change (the default), every:N (seconds) or native (never); one cell each",
    )
    bank.add_argument(
        "--conditions",
        default="all",
        metavar="NAME,...",
        help=f"prompt conditions (system prompts), or all (default); shipped: {_shipped_conditions()}",
    )
    bank.add_argument(
        "--ranking-condition",
        default="baseline",
        metavar="NAME",
        help="the condition whose balanced Turn 2 accuracy is the headline (default baseline)",
    )
    bank.add_argument("--no-camera", action="store_true", help="strip every camera block (the camera ablation)")
    bank.add_argument("--repair-style", choices=("named", "deictic"), default="named")

    add_glasses_arguments(glasses)
    glasses.add_argument(
        "--asr-model",
        metavar="NAME",
        help="the Whisper model (CTranslate2 dir or name; default the bundled tiny.en)",
    )
    glasses.add_argument(
        "--describer-base-url",
        metavar="URL",
        help="the describer model's endpoint (default WEARSIM_DESCRIBER_BASE_URL, then OPENAI_BASE_URL)",
    )
    glasses.add_argument(
        "--staleness",
        metavar="MS,MS,...",
        help="one cell per gap: Turn 2 speech starts that many ms after the scene change",
    )
    glasses.add_argument(
        "--frame-policy",
        metavar="POLICY,...",
        help="which frames reach the assistant, one cell each: end, fps:N, speech:N/M, change:T[/R] "
        "(default end for a chat model, fps:1 for a realtime API)",
    )
    glasses.add_argument(
        "--impair",
        metavar="PROFILE,...",
        help="impairment profiles, one cell each: clean, street, kitchen, dim, shaky, accent, weak-wifi",
    )
    glasses.add_argument(
        "--no-frames",
        action="store_true",
        help="keep no thumbnails of the frames sent (RUN_DIR/frames/, for `wearsim view`)",
    )
    cost.add_argument(
        "--cache",
        nargs="?",
        const="on",
        default="off",
        choices=("on", "all", "off"),
        help="reuse judge replies and candidate replies at temperature 0; all: at any temperature (off by default)",
    )
    cost.add_argument(
        "--cache-dir", metavar="DIR", help="where the cache lives (default WEARSIM_CACHE_DIR, else ~/.cache/wearsim)"
    )
    cost.add_argument(
        "--max-requests-per-minute",
        metavar="N|PROVIDER=N,...",
        help="client-side limit per endpoint, e.g. 500 or openai=500,gemini=1000",
    )
    cost.add_argument(
        "--max-tokens-per-minute",
        metavar="N|PROVIDER=N,...",
        help="the same for tokens",
    )
    cost.add_argument(
        "--prices",
        metavar="FILE",
        help="a TOML price table over the shipped benchmark/cost/prices.toml",
    )
    cost.add_argument(
        "--budget",
        type=float,
        metavar="USD",
        help="start no new cell once the spend is above USD (a larger --budget with --resume finishes)",
    )

    run_group.add_argument(
        "--config",
        metavar="FILE.toml",
        help="read flags from a TOML file, one key per flag named as in this help without the leading -- "
        '(judge-family = "lexical"); flags on the command line win over the file',
    )
    run_group.add_argument(
        "--via",
        choices=("direct", "stream"),
        default="direct",
        help="direct: the text proxy (default); stream: the simulated glasses",
    )
    run_group.add_argument("--output-dir", help="run dir (default runs/bench-TIMESTAMP)")
    run_group.add_argument("--resume", action="store_true", help="continue the run in --output-dir")
    run_group.add_argument(
        "--trials",
        type=int,
        default=1,
        metavar="N",
        help="repeats of every (scenario, condition) cell (default 1)",
    )
    run_group.add_argument(
        "--concurrency",
        type=int,
        default=4,
        metavar="N",
        help="cells run at once (default 4); changes speed, not results",
    )
    run_group.add_argument(
        "--max-error-rate",
        type=float,
        default=0.05,
        metavar="RATE",
        help="exit with status 3 when more than this share of the cells failed by a fault (default 0.05)",
    )
    run_group.add_argument(
        "--shard",
        metavar="K/N",
        help="run only the K-th of N fixed shares of the cells (docs/sharding.md)",
    )
    return tuple((a.option_strings[0], a.dest, a.default) for a in glasses._group_actions)
