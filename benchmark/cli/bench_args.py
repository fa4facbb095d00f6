"""`wearsim bench`'s command line: the help text and every flag, in its argument groups."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim bench --output-dir runs/first              # whole bank, local model, lexical judge
  wearsim bench --model openai:gpt-4o-mini --judge-family gemini --trials 5 --output-dir runs/gpt
  wearsim bench --model openai:qwen2.5 --base-url http://127.0.0.1:8000/v1 --judge-family lexical
  wearsim bench --model openai:qwen2.5 --base-url http://127.0.0.1:8000/v1 \\
      --judge-family openai --judge-model openai:llama3 --judge-base-url http://127.0.0.1:8001/v1
  wearsim bench --model openai:gpt-4o-mini --judge-family gemini --cache --max-requests-per-minute openai=500
  wearsim bench --ids sc-05,sc-12 --conditions baseline   # two scenarios, one condition
  wearsim bench --output-dir runs/first --resume      # finish an interrupted run
  wearsim bench --via stream --model openai-realtime:gpt-realtime-2 --limit 3   # a realtime API as the assistant
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
cells failed by a fault of the API's or ours, never a model's miss (the report is still written); 4 stopped
on --budget (the report is written; rerun with a larger --budget to finish); 130/143 stopped by
Ctrl-C/SIGTERM (finished cells are kept: rerun with --resume)
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


def add_bench_arguments(p: argparse.ArgumentParser) -> tuple[tuple[str, str, object], ...]:
    """Every flag of `wearsim bench` added to `p`, in its groups; the flags only a stream run takes (option,
    dest, default), stated once: the glasses group's (bench_checks.check_stream_flags)."""
    from core.candidate import DEFAULT_MAX_TOKENS

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
    return tuple((a.option_strings[0], a.dest, a.default) for a in glasses._group_actions)
