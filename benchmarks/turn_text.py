"""Which reader of the early transcript tells a finished turn from the words
before a pause: the text end of turn's rule (`perception.turn_text`) or the
bundled SmolLM2-135M's probability that the user's message ends there (the
way LiveKit's turn detector reads text, without its fine-tuning).

    .venv/bin/python benchmarks/turn_text.py [--limit N]

Each of the bank's Turn 1 and Turn 2 lines is spoken by espeak-ng with a pause
after its middle word, as `benchmarks/turn_pauses.py` speaks it; Whisper
(the bundled tiny.en) transcribes the words before the pause with the 300 ms
of silence after them (the clip the early decode hears when a pause has
begun) and the whole line spoken without a pause. A reader should call the
whole lines finished and the words before the pause not. Reports, for the
rule and for the model at several thresholds, how many of each it calls
finished. Nothing here was tuned on these lines: the rule's word list was
written before any transcript was read, and the model's thresholds are a
fixed grid. Writes benchmarks/results/turn_text.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.turn_pauses import bank_lines, paused_line, speak  # noqa: E402
from candidates.local import bundled_gguf  # noqa: E402
from media_effects.audio import SAMPLE_RATE  # noqa: E402
from perception.asr import Transcriber  # noqa: E402
from perception.turn_text import sounds_complete  # noqa: E402

THRESHOLDS = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
POST_ROLL_S = 0.3


class EndOfMessage:
    """SmolLM2-135M's probability of `<|im_end|>` right after the user's words (ChatML, a short system turn)."""

    PREFIX = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"

    def __init__(self):
        import llama_cpp

        self.llm = llama_cpp.Llama(
            model_path=str(bundled_gguf()), n_ctx=512, n_threads=1, logits_all=True, verbose=False
        )
        [self.end] = self.llm.tokenize(b"<|im_end|>", add_bos=False, special=True)

    def probability(self, text: str) -> float:
        tokens = self.llm.tokenize((self.PREFIX + text.strip()).encode(), add_bos=False, special=True)
        self.llm.reset()
        self.llm.eval(tokens)
        logits = np.asarray(self.llm.scores[self.llm.n_tokens - 1], dtype=np.float64)
        odds = np.exp(logits - logits.max())
        return float(odds[self.end] / odds.sum())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=0, help="only the first N lines (0: all)")
    parser.add_argument("--output", default="benchmarks/results/turn_text.json")
    args = parser.parse_args()
    transcriber, model, rows = Transcriber(), EndOfMessage(), []
    pad = np.zeros(int(POST_ROLL_S * SAMPLE_RATE), np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for index, line in enumerate(bank_lines(args.limit)):
            clip, resume, kind, pause_ms = paused_line(line, index, folder)
            loud = np.nonzero(np.abs(clip[:resume]) > 0.01)[0]
            before = clip[: loud[-1] + 1 + len(pad)]
            whole = np.concatenate([pad, speak(line, folder), pad])
            before_text, whole_text = (t.text for t in transcriber.transcribe_batch_sync([before, whole]))
            row = {
                "line": line,
                "kind": kind,
                "pause_ms": pause_ms,
                "before_pause": {
                    "text": before_text,
                    "rule": sounds_complete(before_text),
                    "model": round(model.probability(before_text), 4),
                },
                "whole": {
                    "text": whole_text,
                    "rule": sounds_complete(whole_text),
                    "model": round(model.probability(whole_text), 4),
                },
            }
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)

    def called(part: str, finished) -> int:
        return sum(bool(finished(r[part])) for r in rows)

    readers = {"rule": lambda r: r["rule"]}
    readers.update({f"model>={t}": (lambda r, t=t: r["model"] >= t) for t in THRESHOLDS})
    summary = {
        name: {"whole_lines_finished": called("whole", f), "before_pause_finished": called("before_pause", f)}
        for name, f in readers.items()
    }
    out = {
        "command": "python benchmarks/turn_text.py" + (f" --limit {args.limit}" if args.limit else ""),
        "lines": len(rows),
        "summary": summary,
        "rows": rows,
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({"lines": len(rows), "summary": summary}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
