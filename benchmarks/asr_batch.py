"""Speech recognition for many sessions: the plain decode against the shared,
batched decode queue (issue 36).

    .venv/bin/python benchmarks/asr_batch.py [--lines 16] [--together 1,4,8,16] [--max-batch 4]

The bank's first lines are spoken by espeak-ng. Per clip: `transcribe_sync`
(faster-whisper's own transcribe, 30 s window; the path before issue 36) and
`transcribe_batch_sync` of the clip alone (10 s window). Then N clips asked for
at once through `Transcriber.transcribe` (the sessions' path): the wall time
until the last caller has its text, and the mean word error rate against the
authored lines. Writes benchmarks/results/asr_batch.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.scenario import load_bank  # noqa: E402
from core.words import word_error_rate  # noqa: E402
from media_effects.audio import decode_audio  # noqa: E402
from media_effects.tts import synthesize  # noqa: E402
from perception import asr  # noqa: E402
from perception.asr import Transcriber  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=16)
    parser.add_argument("--together", default="1,4,8,16")
    parser.add_argument("--max-batch", type=int, default=asr.MAX_BATCH, help="clips in one pass (perception.asr)")
    parser.add_argument("--output", default="benchmarks/results/asr_batch.json")
    args = parser.parse_args()
    asr.MAX_BATCH = args.max_batch
    bank = load_bank().select("bank")
    texts = [t for s in bank.scenarios for t in (s.turn_1_user, s.turn_2_user)][: args.lines]
    with tempfile.TemporaryDirectory() as tmp:
        clips = [decode_audio(synthesize(t, Path(tmp) / f"{i}.wav", root=Path(tmp))) for i, t in enumerate(texts)]
    transcriber = Transcriber()
    transcriber.transcribe_sync(clips[0])  # the model loads
    transcriber.transcribe_batch_sync([clips[0]])
    plain, plain_wer, alone, alone_wer = [], [], [], []
    for text, clip in zip(texts, clips):
        started = time.perf_counter()
        plain_wer.append(word_error_rate(text, transcriber.transcribe_sync(clip).text))
        plain.append(time.perf_counter() - started)
        started = time.perf_counter()
        alone_wer.append(word_error_rate(text, transcriber.transcribe_batch_sync([clip])[0].text))
        alone.append(time.perf_counter() - started)
    together = []
    for n in (int(x) for x in args.together.split(",")):
        picked = [(texts[i % len(texts)], clips[i % len(clips)]) for i in range(n)]

        async def ask(picked=picked):
            return await asyncio.gather(*(transcriber.transcribe(clip) for _, clip in picked))

        started = time.perf_counter()
        transcripts = asyncio.run(ask())
        wall = time.perf_counter() - started
        together.append(
            {
                "clips": n,
                "wall_s": round(wall, 3),
                "per_clip_s": round(wall / n, 3),
                "mean_wer": round(
                    float(np.mean([word_error_rate(t, r.text) for (t, _), r in zip(picked, transcripts)])), 3
                ),
            }
        )
    out = {
        "command": f"python benchmarks/asr_batch.py --lines {args.lines} --together {args.together} "
        f"--max-batch {args.max_batch}",
        "max_batch": args.max_batch,
        "cores": os.cpu_count(),
        "clips": len(clips),
        "clip_seconds_mean": round(float(np.mean([len(c) / 16000 for c in clips])), 2),
        "plain_30s_window": {
            "p50_s": round(float(np.median(plain)), 3),
            "mean_wer": round(float(np.mean(plain_wer)), 3),
        },
        "batched_path_alone": {
            "p50_s": round(float(np.median(alone)), 3),
            "mean_wer": round(float(np.mean(alone_wer)), 3),
        },
        "asked_together": together,
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
