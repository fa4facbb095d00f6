"""Fit the held-sound threshold of the text end of turn (`perception.turn_text.HELD_SOUND_FLUX`).

    .venv/bin/python benchmarks/turn_hold_fit.py

Each line of benchmarks/data/turn_fit_lines.txt (written for this, none from
the scenario bank) is spoken by espeak-ng in five voices and rates (`VOICES`),
each two ways, as `benchmarks/turn_pauses.py` speaks the bank's: whole, and
with "um" and a pause after its middle word. The clip the early decode would
get (the voice up to the pause, or the whole line, then 300 ms of silence) is
measured with `perception.turn_text.spectral_flux`. The threshold is the flux
that misclassifies the fewest clips, a filler clip missed counting three
times a whole line held (a missed filler ends a turn too early; a whole line
held only waits the fixed silence). The bank's lines are not read; the same
measure on them, held out, is printed per voice (`--bank`). Writes
benchmarks/results/turn_hold_fit.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from turn_pauses import LEAD_S, bank_lines, paused_line, speak  # noqa: E402

from media_effects.audio import SAMPLE_RATE  # noqa: E402
from perception.speech import POST_ROLL_MS  # noqa: E402
from perception.turn_text import HELD_S, spectral_flux  # noqa: E402

LINES = Path(__file__).with_name("data") / "turn_fit_lines.txt"
VOICES = (("en-us", 150), ("en-gb", 150), ("en-us+f3", 150), ("en-us", 120), ("en-us", 185))
MISSED_FILLER_COST = 3


def fit_lines() -> list[str]:
    return [line.strip() for line in LINES.read_text().splitlines() if line.strip() and not line.startswith("#")]


def early_clip(voice: np.ndarray) -> np.ndarray:
    """The clip an early decode of `voice` gets: a lead of silence, the voice, `POST_ROLL_MS` of silence."""
    lead = np.zeros(int(LEAD_S * SAMPLE_RATE), np.float32)
    tail = np.zeros(POST_ROLL_MS * SAMPLE_RATE // 1000, np.float32)
    return np.concatenate([lead, voice, tail])


def before_pause(clip: np.ndarray, resume: int) -> np.ndarray:
    loud = np.nonzero(np.abs(clip[:resume]) > 0.01)[0]
    return clip[loud[0] : loud[-1] + 1]


def threshold(held: list[float], spoken: list[float]) -> float:
    """The flux below which a clip is held, with the fewest errors (`MISSED_FILLER_COST` per filler missed)."""
    candidates = sorted(held + spoken)
    errors = [MISSED_FILLER_COST * sum(h >= c for h in held) + sum(s < c for s in spoken) for c in candidates]
    return candidates[int(np.argmin(errors))]


def measured(lines: list[str], voice: str, rate: int, folder: Path) -> dict[str, list[float]]:
    """Flux of each line's whole clip and of its words before "um" and a pause, in one voice and rate."""
    whole = [spectral_flux(early_clip(speak(text, folder, voice=voice, rate=rate))) for text in lines]
    filler = []
    for i, text in enumerate(lines):  # an even index: "um" before the pause
        clip, resume, _, _ = paused_line(text, 2 * i, folder, voice=voice, rate=rate)
        filler.append(spectral_flux(early_clip(before_pause(clip, resume))))
    return {"whole": whole, "filler": filler}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bank", action="store_true", help="also the bank's lines, held out, per voice")
    args = parser.parse_args()
    sets = {"fit": fit_lines()} | ({"bank": bank_lines()} if args.bank else {})
    flux: dict[str, dict[str, dict[str, list[float]]]] = {name: {} for name in sets}
    with tempfile.TemporaryDirectory() as tmp:
        for name, lines in sets.items():
            for voice, rate in VOICES:
                flux[name][f"{voice} {rate}"] = measured(lines, voice, rate, Path(tmp))
                print(f"{name}: {voice} at {rate} words a minute", file=sys.stderr)
    held = [x for v in flux["fit"].values() for x in v["filler"]]
    spoken = [x for v in flux["fit"].values() for x in v["whole"]]
    value = threshold(held, spoken)

    def counts(by_voice):
        return {
            voice: {
                "fillers_held": f"{sum(x < value for x in v['filler'])} of {len(v['filler'])}",
                "whole_lines_held": f"{sum(x < value for x in v['whole'])} of {len(v['whole'])}",
            }
            for voice, v in by_voice.items()
        }

    out = {
        "command": "python benchmarks/turn_hold_fit.py" + (" --bank" if args.bank else ""),
        "held_s": HELD_S,
        "threshold": round(value, 4),
        "fit_lines": len(sets["fit"]),
        "fit": counts(flux["fit"]),
        "bank_held_out": counts(flux["bank"]) if args.bank else None,
        "flux": {
            name: {voice: {k: [round(x, 4) for x in xs] for k, xs in v.items()} for voice, v in by_voice.items()}
            for name, by_voice in flux.items()
        },
    }
    path = Path(__file__).parent / "results" / "turn_hold_fit.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "flux"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
