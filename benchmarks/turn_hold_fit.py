"""Fit the held-sound threshold of the text end of turn (`perception.turn_text.HELD_SOUND_FLUX`).

    .venv/bin/python benchmarks/turn_hold_fit.py

Each line of benchmarks/data/turn_fit_lines.txt (written for this, none from
the scenario bank) is spoken by espeak-ng three ways, as
`benchmarks/turn_pauses.py` speaks the bank's: whole; with "um" and a pause
after its middle word; with a pause there and no filler. The clip the early
decode would get (the voice up to the pause, or the whole line, then 300 ms
of silence) is measured with `perception.turn_text.spectral_flux`. The
threshold is the midpoint between the highest flux of a filler clip and the
lowest of a whole line, when the two do not overlap (else the value that
misclassifies the fewest, whole lines counting as much as fillers). The bank's
lines are not read. Writes benchmarks/results/turn_hold_fit.json.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from turn_pauses import LEAD_S, paused_line, speak  # noqa: E402

from media_effects.audio import SAMPLE_RATE  # noqa: E402
from perception.turn_text import spectral_flux  # noqa: E402

LINES = Path(__file__).with_name("data") / "turn_fit_lines.txt"
POST_ROLL_S = 0.3


def fit_lines() -> list[str]:
    return [line.strip() for line in LINES.read_text().splitlines() if line.strip() and not line.startswith("#")]


def early_clip(voice: np.ndarray) -> np.ndarray:
    """The clip an early decode of `voice` gets: a lead of silence, the voice, 300 ms of silence."""
    lead, tail = np.zeros(int(LEAD_S * SAMPLE_RATE), np.float32), np.zeros(int(POST_ROLL_S * SAMPLE_RATE), np.float32)
    return np.concatenate([lead, voice, tail])


def before_pause(clip: np.ndarray, resume: int) -> np.ndarray:
    loud = np.nonzero(np.abs(clip[:resume]) > 0.01)[0]
    return clip[loud[0] : loud[-1] + 1]


def threshold(held: list[float], spoken: list[float]) -> float:
    if max(held) < min(spoken):
        return (max(held) + min(spoken)) / 2
    candidates = sorted(held + spoken)
    errors = [sum(h >= c for h in held) + sum(s < c for s in spoken) for c in candidates]
    return candidates[int(np.argmin(errors))]


def main() -> int:
    lines = fit_lines()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i, text in enumerate(lines):
            row = {"line": text, "whole": spectral_flux(early_clip(speak(text, folder)))}
            for index in (2 * i, 2 * i + 1):  # turn_pauses: an even index is spoken with "um", an odd one without
                clip, resume, kind, _ = paused_line(text, index, folder)
                row[kind] = spectral_flux(early_clip(before_pause(clip, resume)))
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    held, spoken, cut = [r["filler"] for r in rows], [r["whole"] for r in rows], [r["mid-clause"] for r in rows]
    value = threshold(held, spoken)

    def share(values, below):
        return round(sum(v < below for v in values) / len(values), 3)

    out = {
        "command": "python benchmarks/turn_hold_fit.py",
        "lines": len(rows),
        "threshold": round(value, 4),
        "held_below_threshold": share(held, value),
        "whole_below_threshold": share(spoken, value),
        "mid_clause_below_threshold": share(cut, value),
        "quantiles_5_50_95": {
            name: [round(float(np.percentile(v, q)), 4) for q in (5, 50, 95)]
            for name, v in (("filler", held), ("whole", spoken), ("mid-clause", cut))
        },
        "rows": rows,
    }
    path = Path(__file__).parent / "results" / "turn_hold_fit.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "rows"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
