"""Whether the run's judge was checked against people, in one line.

`read_human_check(run_dir, what)` reads the run's agreement file (written by
`wearsim agreement`: `agreement.json` for Turn 2, `agreement_remarks.json`
for a proactive run's remarks; a link, a file over `MAX_AGREEMENT_BYTES` or
one that does not read as such is taken as no check) into the summary's
`human_check` block: the number of human labels, of people, the run
judge's kappa against their majority with its interval, and whether
`wearsim agreement`'s verdict found enough items to say. `human_check_line`
is what findings.md and the viewer print: that figure, or that the judge
has not been checked against people on this run, with the commands to do it.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmark.scoring.summary_parts import HumanCheck

MAX_AGREEMENT_BYTES = 8 * 2**20


def agreement_stem(what: str) -> str:
    """The name (without suffix) of `wearsim agreement`'s files for one kind of item."""
    return "agreement" if what == "turn2" else f"agreement_{what}"


def read_human_check(run_dir: Path, what: str = "turn2") -> dict:
    run_dir = Path(run_dir)
    path = run_dir / f"{agreement_stem(what)}.json"
    unchecked = {"checked": False, "what": what}
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_AGREEMENT_BYTES:
            return unchecked
        data = json.loads(path.read_bytes())
        judge = data["against_people"][0]
        block = {
            "checked": True,
            "what": what,
            "human_labels": int(data["human_labels"]),
            "people": len(data["annotators"]),
            "judge": str(judge["judge"])[:200],
            "n": int(judge["n"]),
            "kappa": judge["kappa"],
            "ci_low": judge["kappa_ci_low"],
            "ci_high": judge["kappa_ci_high"],
            "ci_method": judge["ci_method"],
            "enough": (data.get("verdict") or {}).get("enough") is not False,
            "sample": "disagreements" if data.get("sample") == "disagreements" else "random",
        }
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return unchecked
    numbers = [block[k] for k in ("kappa", "ci_low", "ci_high")]
    if not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in numbers):
        return unchecked
    return block


def human_check_line(block: HumanCheck) -> str:
    run = "RUN_DIR"  # this run's folder: findings are rendered from the summary alone, wherever it is
    what = " --what remarks" if block.what == "remarks" else ""
    if not block.checked:
        return (
            f"The judge has not been checked against people on this run: label a sample with "
            f"`wearsim annotate {run}{what}`, then measure with `wearsim agreement {run}{what}`."
        )
    if not block.n:
        figure = "no item yet has two people agreeing on its label"
    elif block.kappa is None:
        figure = "kappa undefined (every label the same)"
    else:
        method = " (Wilson fallback)" if block.ci_method == "wilson" else ""
        low = "n/a" if block.ci_low is None else f"{block.ci_low:.2f}"
        high = "n/a" if block.ci_high is None else f"{block.ci_high:.2f}"
        figure = f"kappa {block.kappa:.2f} [{low}, {high}]{method}"
    people = "1 person" if block.people == 1 else f"{block.people} people"
    sample = (
        " of a disagreement sample (the judges' hard items first: where the judge errs, not how often)"
        if block.sample == "disagreements"
        else ""
    )
    return (
        f"Judge checked against {block.human_labels} human label{'' if block.human_labels == 1 else 's'}"
        f"{sample} by {people}: {figure} "
        f"({block.judge} against the people's majority on {block.n} items"
        f"{'' if block.enough else ', too few to say yet'}; "
        f"{agreement_stem(block.what)}.md)."
    )
