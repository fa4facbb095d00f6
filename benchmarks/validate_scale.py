"""How long `wearsim validate` takes on a large bank and on huge camera blocks.

Builds, in a temporary directory, (a) a bank of N scenarios (the shipped ones
repeated with new ids and a few extra words of speech) and (b) two scenarios
whose Turn 1 camera block is about 100 KB, runs the validator's checks on
each and prints the seconds. Usage:

    .venv/bin/python benchmarks/validate_scale.py --scenarios 500
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import time
from pathlib import Path

from benchmark.bank.validate import validate_bank
from core.scenario import load_bank

WORDS = "red green blue tall short round square wooden metal glass paper cloth left right top bottom near far".split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=500)
    args = parser.parse_args()
    bank = load_bank()
    rng = random.Random(1)
    many = dataclasses.replace(
        bank,
        scenarios=tuple(
            dataclasses.replace(
                s,
                scenario_id=f"x-{i:03d}",
                subset="bank",
                turn_2_user=s.turn_2_user + " " + " ".join(rng.choice(WORDS) for _ in range(6)),
            )
            for i, s in enumerate((bank.scenarios * (args.scenarios // len(bank.scenarios) + 1))[: args.scenarios])
        ),
    )
    huge = dataclasses.replace(
        bank,
        scenarios=tuple(
            dataclasses.replace(s, turn_1_image=" ".join(rng.choice(WORDS) for _ in range(17000)))
            for s in bank.scenarios[:2]
        ),
    )
    results = {}
    for name, candidate in ((f"{args.scenarios} scenarios", many), ("2 scenarios with 100 KB camera blocks", huge)):
        started = time.perf_counter()
        checks = validate_bank(candidate)
        results[name] = {
            "seconds": round(time.perf_counter() - started, 2),
            "problems": sum(len(c.problems) for c in checks),
        }
        print(f"{name}: {results[name]['seconds']} s, {results[name]['problems']} problems reported")
    out = Path(__file__).parent / "results" / "validate_scale.json"
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
