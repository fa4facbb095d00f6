"""How many simulated glasses sessions this machine holds in real time, and
the per-turn latencies, against the in-process streaming server.

    .venv/bin/python benchmarks/streaming.py [--sessions 1,2,4,8] [--backend local]

Each level starts N sessions at once, each playing Turn 1 and Turn 2 of a
different scenario at real-time pace (speed 1.0). A level is "held" when the
server keeps up: the delay from end of speech to the final transcript stays
under 1.5 s at p95 and does not grow from Turn 1 to Turn 2. Writes
benchmarks/results/streaming.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmark.candidates.base import GenerationConfig  # noqa: E402
from benchmark.scenario import load_bank  # noqa: E402
from benchmark.stream_conversation import StreamConversation  # noqa: E402
from streaming.local_server import running_server  # noqa: E402

HOLD_P95_S = 1.5


def pct(values, q):
    return round(float(np.percentile(values, q)), 3) if values else None


async def level(url: str, n: int, backend: str, bank) -> dict:
    condition = bank.condition("baseline")
    scenarios = bank.scenarios[:n] if n <= len(bank.scenarios) else list(bank.scenarios) * (n // 50 + 1)

    async def one(scenario):
        conversation = StreamConversation(scenario, condition, url, backend, GenerationConfig(max_tokens=60),
                                          speed=1.0)
        try:
            return [await conversation.send(turn) for turn in (1, 2)], conversation.lateness
        finally:
            await conversation.aclose()

    started = time.monotonic()
    results = await asyncio.gather(*(one(s) for s in scenarios[:n]), return_exceptions=True)
    wall = time.monotonic() - started
    failures = [repr(r)[:200] for r in results if isinstance(r, BaseException)]
    ok = [r for r in results if not isinstance(r, BaseException)]
    by_turn = {1: [], 2: []}
    done, first_token, lateness = [], [], []
    for turns, late in ok:
        lateness += late
        for t in turns:
            by_turn[t.turn].append(t.metrics.transcript_final)
            done.append(t.metrics.reply_done)
            first_token.append(t.metrics.first_token)
    finals = by_turn[1] + by_turn[2]
    held = (not failures and pct(finals, 95) is not None and pct(finals, 95) <= HOLD_P95_S
            and np.mean(by_turn[2]) <= np.mean(by_turn[1]) + 0.5)
    return {"sessions": n, "held_in_real_time": bool(held), "wall_s": round(wall, 1), "failures": failures,
            "speech_end_to_transcript_final_s": {"p50": pct(finals, 50), "p95": pct(finals, 95),
                                                 "turn_1_mean": round(float(np.mean(by_turn[1])), 3) if by_turn[1] else None,
                                                 "turn_2_mean": round(float(np.mean(by_turn[2])), 3) if by_turn[2] else None},
            "speech_end_to_first_token_s": {"p50": pct(first_token, 50), "p95": pct(first_token, 95)},
            "speech_end_to_reply_done_s": {"p50": pct(done, 50), "p95": pct(done, 95)},
            "client_send_lateness_ms": {"p95": pct([x * 1000 for x in lateness], 95),
                                        "max": round(max(lateness) * 1000, 1) if lateness else None}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", default="1,2,4")
    parser.add_argument("--backend", default="local")
    parser.add_argument("--output", default="benchmarks/results/streaming.json")
    args = parser.parse_args()
    bank = load_bank()
    levels = []
    with running_server() as url:
        for n in (int(x) for x in args.sessions.split(",")):
            result = asyncio.run(level(url, n, args.backend, bank))
            print(json.dumps(result), file=sys.stderr)
            levels.append(result)
    held = [lv["sessions"] for lv in levels if lv["held_in_real_time"]]
    out = {"command": f"python benchmarks/streaming.py --sessions {args.sessions} --backend {args.backend}",
           "backend": args.backend, "max_sessions_held": max(held) if held else 0, "levels": levels}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
