"""Can a model tell a paused line from a finished one? The scores behind the
end-of-turn decision (issue 36), for the audio model, a text model, and both.

    .venv/bin/python benchmarks/turn_scores.py [--limit N]

Each of the bank's Turn 1 and Turn 2 lines is spoken by espeak-ng twice, as
`benchmarks/turn_pauses.py` speaks them: with a 400-800 ms pause after its
middle word (half after a filler "um", half mid-clause), and whole. A model
asked 250 ms into the pause hears the words before it; asked 250 ms after a
whole line, it hears the line. Two models score both:

- audio: Smart Turn v3.2 (`perception.turn_end`), the probability that the
  speaker sounds finished;
- text: Whisper's transcript of the same audio, and the bundled SmolLM2's
  probability that the user's message ends after it (the chat template's
  end-of-message token next; run in-process on llama.cpp, one thread).

For each pair of thresholds (audio at or above A, text at or above T; 0:
that model not asked) the script counts the paused lines the rule would end
inside their pause (premature) and the whole lines it would end at once
(caught). A rule is worth having only if premature stays within 2 points
of the fixed silence's 0 and it still catches lines. Writes
benchmarks/results/turn_scores.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.append(str(Path(__file__).resolve().parent))  # after the project: benchmarks/perception.py is no package

from turn_pauses import bank_lines, paused_line, speak  # noqa: E402

from candidates.local import bundled_gguf  # noqa: E402
from media_effects.audio import SAMPLE_RATE  # noqa: E402
from perception.asr import Transcriber  # noqa: E402
from perception.turn_end import shared_model  # noqa: E402

ASKED_AFTER_S = 0.25  # silence heard when the models are asked
AUDIO_THRESHOLDS = (0.0, 0.5, 0.7, 0.9, 0.95)
TEXT_THRESHOLDS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)


class MessageEnd:
    """SmolLM2's probability that a user message ends after the given text."""

    def __init__(self):
        import llama_cpp

        self.model = llama_cpp.Llama(
            model_path=str(bundled_gguf()), n_ctx=256, n_threads=1, logits_all=True, verbose=False
        )
        self.end = self.model.tokenize(b"<|im_end|>", add_bos=False, special=True)[0]

    def probability(self, text: str) -> float:
        tokens = self.model.tokenize(f"<|im_start|>user\n{text}".encode(), add_bos=False, special=True)
        self.model.reset()
        self.model.eval(tokens)
        logits = np.asarray(self.model.scores[self.model.n_tokens - 1], dtype=np.float64)
        odds = np.exp(logits - logits.max())
        return float(odds[self.end] / odds.sum())


def ends(scores: dict, audio_at_least: float, text_at_least: float) -> bool:
    """The rule ends the turn: both models at or above their thresholds."""
    return scores["audio"] >= audio_at_least and scores["text"] >= text_at_least


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=0, help="only the first N lines (0: all)")
    parser.add_argument("--output", default="benchmarks/results/turn_scores.json")
    args = parser.parse_args()
    lines = bank_lines(args.limit)
    audio_model, text_model, whisper = shared_model(), MessageEnd(), Transcriber()
    asked_after = np.zeros(int(ASKED_AFTER_S * SAMPLE_RATE), np.float32)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for index, text in enumerate(lines):
            clip, resume, kind, pause_ms = paused_line(text, index, folder)
            before_pause = clip[: resume - int(pause_ms * SAMPLE_RATE / 1000) + len(asked_after)]
            whole = np.concatenate([np.zeros(int(0.3 * SAMPLE_RATE), np.float32), speak(text, folder), asked_after])
            row = {"line": text, "kind": kind, "pause_ms": pause_ms}
            for name, audio in (("paused", before_pause), ("whole", whole)):
                heard = whisper.transcribe_batch_sync([audio])[0].text
                row[name] = {
                    "heard": heard,
                    "audio": round(audio_model.probability(audio), 4),
                    "text": round(text_model.probability(heard), 4),
                }
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    table = []
    for a in AUDIO_THRESHOLDS:
        for t in TEXT_THRESHOLDS:
            premature = sum(ends(r["paused"], a, t) for r in rows)
            caught = sum(ends(r["whole"], a, t) for r in rows)
            table.append(
                {
                    "audio_at_least": a,
                    "text_at_least": t,
                    "premature_pct": round(100 * premature / len(rows), 1),
                    "whole_caught_pct": round(100 * caught / len(rows), 1),
                }
            )
    usable = [row for row in table if row["premature_pct"] <= 2.0 and (row["audio_at_least"] or row["text_at_least"])]
    best = max(usable, key=lambda row: row["whole_caught_pct"], default=None)
    out = {
        "command": "python benchmarks/turn_scores.py" + (f" --limit {args.limit}" if args.limit else ""),
        "lines": len(rows),
        "asked_after_s": ASKED_AFTER_S,
        "table": table,
        "best_within_2_points": best,
        "rows": rows,
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=2) + "\n")
    print(f"{'audio >=':>9} {'text >=':>8} {'premature':>10} {'whole caught':>13}")
    for row in table:
        print(
            f"{row['audio_at_least']:>9} {row['text_at_least']:>8} {row['premature_pct']:>9}% "
            f"{row['whole_caught_pct']:>12}%"
        )
    print("best rule within 2 points of premature ends:", json.dumps(best))
    return 0


if __name__ == "__main__":
    sys.exit(main())
