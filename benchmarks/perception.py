"""Perception speed on this machine: ASR real-time factor and the latency
from end of speech to the final transcript when audio is streamed in.

    .venv/bin/python benchmarks/perception.py [--utterances N]

Speech is synthesized with espeak-ng from bank sentences. Writes
benchmarks/results/perception.json and prints a summary.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.scenario import load_bank  # noqa: E402
from media_effects.audio import decode_audio, float_to_pcm16  # noqa: E402
from perception.asr import Transcriber  # noqa: E402
from perception.speech import FinalTranscript, SpeechSegmenter  # noqa: E402

CHUNK_MS = 20


def percentile(values, q):
    return float(np.percentile(np.asarray(values), q)) if values else None


async def stream_latency(transcriber, audio: np.ndarray) -> float:
    """Feed audio + 1.5 s silence in 20 ms chunks at real-time pace; seconds from
    the wall-clock moment the last speech sample was fed to the final transcript."""
    segmenter = SpeechSegmenter(transcriber)
    padded = np.concatenate([np.zeros(4800, np.float32), audio, np.zeros(24000, np.float32)])
    pcm = float_to_pcm16(padded)
    step = 16000 * CHUNK_MS // 1000 * 2
    speech_end_sample = 4800 + len(audio)
    speech_end_wall = None
    start = time.monotonic()
    for index, offset in enumerate(range(0, len(pcm), step)):
        deadline = start + index * CHUNK_MS / 1000
        delay = deadline - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        if speech_end_wall is None and offset // 2 >= speech_end_sample:
            speech_end_wall = time.monotonic()
        for event in await segmenter.feed(pcm[offset : offset + step], offset // 32):
            if isinstance(event, FinalTranscript):
                return time.monotonic() - (speech_end_wall or time.monotonic())
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--utterances", type=int, default=12)
    parser.add_argument("--output", default="benchmarks/results/perception.json")
    args = parser.parse_args()
    bank = load_bank()
    sentences = [t for s in bank.scenarios for t in (s.turn_1_user, s.turn_2_user)][: args.utterances]
    transcriber = Transcriber()
    load_started = time.monotonic()
    transcriber.transcribe_sync(np.zeros(16000, np.float32))
    load_s = time.monotonic() - load_started
    rtfs, latencies = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i, text in enumerate(sentences):
            path = Path(tmp) / f"{i}.wav"
            subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(path), text], check=True)
            audio = decode_audio(path)
            rtfs.append(transcriber.transcribe_sync(audio).rtf)
            latencies.append(asyncio.run(stream_latency(transcriber, audio)))
            print(
                f"{i + 1}/{len(sentences)} rtf {rtfs[-1]:.3f} end-of-speech->final {latencies[-1]:.3f}s",
                file=sys.stderr,
            )
    result = {
        "command": f"python benchmarks/perception.py --utterances {args.utterances:d}",
        "machine": {"cpus": __import__("os").cpu_count(), "python": platform.python_version()},
        "model": "whisper tiny.en int8 (bundled)",
        "first_call_s": round(load_s, 3),
        "utterances": len(sentences),
        "asr_rtf": {
            "mean": round(float(np.mean(rtfs)), 3),
            "p50": round(percentile(rtfs, 50), 3),
            "p95": round(percentile(rtfs, 95), 3),
        },
        "end_of_speech_to_final_s": {
            "p50": round(percentile(latencies, 50), 3),
            "p95": round(percentile(latencies, 95), 3),
            "silence_ms": 600,
        },
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
