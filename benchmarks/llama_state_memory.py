"""The embedded llama.cpp server's RSS with the state memory on and off (issue 57 row 17).

    .venv/bin/python benchmarks/llama_state_memory.py [--conversations 110] [--budget-mb 256]

Starts a `LocalLlamaServer` (the bundled SmolLM2, one thread) twice: once plain
(`WEARSIM_LLAMA_MEMORY_BYTES=0`: `candidates/llama_memory.py` not installed)
and once with the state memory and `--budget-mb` as its budget. Each server
answers the same `--conversations` distinct conversations of about
`--tokens` prompt tokens (a short system prompt, then text of their own from
the first word on) through `/v1/chat/completions` (`max_tokens` 4,
temperature 0), one after another: each displaces the last, so the memory
copies every one aside and drops the oldest past its budget. The server
process's RSS (`/proc/PID/status` VmRSS) is read after boot and after each
reply. The copies' counted bytes are read from the server's log (the
memory's "kept ... aside" lines). The two servers run one after the other,
never at once.

Writes benchmarks/results/llama_state_memory.json and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from candidates import llama_memory  # noqa: E402
from candidates.local import LocalLlamaServer  # noqa: E402

MB = 2**20
SYSTEM = "You are an assistant on smart glasses. Answer in one short sentence."
WORDS = (
    "cup plate bowl table door window lamp chair bicycle street river garden kitchen book phone glass bottle "
    "shelf painting clock mirror carpet sofa bag coat shoe hat key wallet ticket train bus bridge tree bench "
    "red blue green yellow small large old new bright dark wooden metal round square left right near far"
).split()


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def conversation(n: int, tokens: int) -> list[dict]:
    """Conversation `n`: turns of its own (a seeded word salad, about `tokens` prompt tokens in all,
    about 1.2 words a token for SmolLM2's tokenizer), ending with a question."""
    rng = random.Random(n)
    messages: list[dict] = [{"role": "system", "content": SYSTEM}]
    words_left = int(tokens / 1.2)
    turn = 0
    while words_left > 0:
        count = min(words_left, 60)
        text = " ".join(rng.choice(WORDS) for _ in range(count))
        role = "user" if turn % 2 == 0 else "assistant"
        prefix = f"Conversation {n}, turn {turn}: " if turn == 0 else ""
        messages.append({"role": role, "content": prefix + text + "."})
        words_left -= count
        turn += 1
    if messages[-1]["role"] == "user":
        messages.append({"role": "assistant", "content": "I see."})
    messages.append({"role": "user", "content": "What is on the table?"})
    return messages


def run_server(label: str, budget: int, conversations: int, tokens: int, log_dir: Path) -> dict:
    """One server: RSS after boot and after each reply, prompt tokens per reply, copies' bytes from its log."""
    os.environ[llama_memory.BUDGET_VARIABLE] = str(budget)  # the server inherits our environment
    samples, prompt_tokens, replies = [], [], []
    started = time.monotonic()
    with LocalLlamaServer(log_dir=log_dir, threads=1, log_name=f"{label}.log") as server:
        pid = server.process.pid
        start = rss_bytes(pid)
        with httpx.Client(timeout=300.0) as client:
            for n in range(conversations):
                reply = client.post(
                    f"{server.base_url}/chat/completions",
                    json={"messages": conversation(n, tokens), "max_tokens": 4, "temperature": 0},
                )
                reply.raise_for_status()
                body = reply.json()
                prompt_tokens.append(body["usage"]["prompt_tokens"])
                replies.append(body["choices"][0]["message"]["content"])
                samples.append(rss_bytes(pid))
                if (n + 1) % 10 == 0:
                    print(f"{label}: {n + 1} conversations, RSS {samples[-1] / MB:.0f} MB", flush=True)
    log = (log_dir / f"{label}.log").read_text(errors="replace")
    kept = [
        (int(copies), int(used))
        for copies, used in re.findall(r"wearsim: kept \d+ tokens aside \(\d+ bytes\); (\d+) copies, (\d+) bytes", log)
    ]
    return {
        "rss_start_mb": round(start / MB, 1),
        "rss_max_mb": round(max(samples) / MB, 1),
        "rss_end_mb": round(samples[-1] / MB, 1),
        "rss_mb_after_each": [round(s / MB, 1) for s in samples],
        "prompt_tokens_mean": round(sum(prompt_tokens) / len(prompt_tokens)),
        "copies_made": len(kept),
        "copies_counted_max_mb": round(max((used for _, used in kept), default=0) / MB, 1),
        "copies_held_max": max((copies for copies, _ in kept), default=0),
        "seconds": round(time.monotonic() - started, 1),
        "replies": replies,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=110)
    parser.add_argument("--tokens", type=int, default=1024, help="prompt tokens a conversation has, about")
    parser.add_argument("--budget-mb", type=int, default=llama_memory.BUDGET_BYTES // MB)
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks/results/llama_state_memory.json")
    parser.add_argument("--only", choices=("plain", "memory"), help="run one server only (no difference)")
    args = parser.parse_args()
    if args.conversations < 1 or args.tokens < 200 or args.budget_mb < 1:
        parser.error("--conversations at least 1, --tokens at least 200, --budget-mb at least 1")
    result: dict = {
        "command": " ".join([".venv/bin/python benchmarks/llama_state_memory.py", *sys.argv[1:]]),
        "conversations": args.conversations,
        "budget_mb": args.budget_mb,
        "threads": 1,
    }
    with tempfile.TemporaryDirectory(prefix="llama_state_memory-") as tmp:
        for label, budget in (("plain", 0), ("memory", args.budget_mb * MB)):
            if args.only in (None, label):
                result[label] = run_server(label, budget, args.conversations, args.tokens, Path(tmp))
    if "plain" in result and "memory" in result:
        plain, memory = result["plain"], result["memory"]
        result["memory_over_plain_max_mb"] = round(memory["rss_max_mb"] - plain["rss_max_mb"], 1)
        result["memory_over_plain_end_mb"] = round(memory["rss_end_mb"] - plain["rss_end_mb"], 1)
        result["replies_identical"] = plain["replies"] == memory["replies"]
    for label in ("plain", "memory"):
        result.get(label, {}).pop("replies", None)
    text = json.dumps(result, indent=2)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text + "\n")
    brief = {k: v for k, v in result.items() if k not in ("plain", "memory")}
    for label in ("plain", "memory"):
        if label in result:
            brief[label] = {k: v for k, v in result[label].items() if k != "rss_mb_after_each"}
    print(json.dumps(brief, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
