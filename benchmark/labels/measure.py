"""`measure_agreement`: every rater of a run's items put side by side.

The people are the label files in `RUN_DIR/labels/`; the judges are the
run's own (the labels in its records) and those of the rescore dirs given.
A rescore dir is matched to the run by item key: it must hold the same
trials (`wearsim rescore RUN --output-dir DIR` writes such a dir). The
people's majority of an item needs two people giving it the same label
(`agreement.PEOPLE_AGREEING`). The result is the dict written as
agreement.json (`agreement_report`), with the run judge's `verdict`.

The people's labels of one sample only (`sample`: `random`, or
`disagreements`, the judges' hard items first): a disagreement sample is
chosen where the judges disagree, so its agreement says where the judge
errs, not how often, and the two are never pooled. Without `sample`, the
sample the labels are of; labels of both are refused with one line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

from benchmark.labels import SAMPLES
from benchmark.labels.agreement import INTERVAL_RULE, PEOPLE_AGREEING, cohen, fleiss, majority, per_label
from benchmark.labels.items import CANNOT_TELL, CHOICES, LabelError, items_of
from benchmark.labels.store import read_all_labels
from benchmark.labels.verdict import verdict

UNSCORED = "unscored"


MAX_PAIR_RATERS = 12  # annotators and judges together; past it the pairwise table is left out


def judge_name(manifest: dict, fallback: str) -> str:
    return str(manifest.get("judge_model") or manifest.get("judge_family") or fallback)


def _rescore_labels(directory: Path, run, what: str) -> tuple[str, dict[str, str | None]]:
    """A rescore dir's judge: its name and its label of each item of the run."""
    from benchmark.report import read_manifest
    from benchmark.scoring.trials import TranscriptError, load_trials

    directory = Path(directory)
    try:
        records = load_trials(directory).trials
    except TranscriptError as exc:
        raise LabelError(f"--judges {directory}: {exc.problems[0] if exc.problems else exc}") from None
    labels = {item.key: item.judge_label for item in items_of(records, run.bank, what, directory)}
    missing = [item.key for item in run.items(what) if item.key not in labels]
    if missing:
        raise LabelError(
            f"--judges {directory}: no record of {len(missing)} item(s) of {run.run_dir}, e.g. "
            f"{missing[0]!r} (give a rescore dir of this run)"
        )
    return judge_name(read_manifest(directory), directory.name), labels


def _unique(name: str, taken: set[str]) -> str:
    base, n = name, 2
    while name in taken:
        name, n = f"{base} ({n})", n + 1
    taken.add(name)
    return name


def which_sample(given: dict, sample: str | None, where: Path) -> str:
    """The sample to measure: `sample`, else the one the labels `given` (annotator -> key -> label) are of;
    labels of two samples without `sample` are a `LabelError` of one line."""
    counts = Counter(label.sample for labels in given.values() for label in labels.values())
    if sample is not None:
        return sample
    if len(counts) > 1:
        found = ", ".join(f"{counts[s]} of the {s} sample" for s in SAMPLES if counts[s])
        raise LabelError(
            f"{where}: labels of two samples ({found}); a disagreement sample is drawn where the judges "
            "disagree, so the two are never pooled: give --sample random or --sample disagreements"
        )
    return next(iter(counts), "random")


def measure_agreement(run, what: str, judge_dirs: Sequence[Path] = (), sample: str | None = None) -> dict:
    """Agreement among the annotators and of each judge with them, on the run's items of kind `what`
    labelled in one sample (`which_sample`)."""
    items = {item.key: item for item in run.items(what)}
    labels = tuple(c[0] for c in CHOICES[what])
    people_files = {
        name: {key: label for key, label in given.items() if key in items}
        for name, given in read_all_labels(run.run_dir, run.known).items()
    }
    sample = which_sample(people_files, sample, run.run_dir / "labels")
    people = {
        name: {key: label.label for key, label in given.items() if label.sample == sample}
        for name, given in people_files.items()
    }
    people = {name: given for name, given in people.items() if given}
    if not people:
        raise LabelError(
            f"{run.run_dir / 'labels'}: no labels of {what} items in the {sample} sample yet (wearsim annotate "
            f"{run.run_dir} --what {what} --annotator NAME"
            + (" --sample disagreements)" if sample == "disagreements" else ")")
        )
    taken = set(people)
    judges = {
        _unique(f"judge {judge_name(run.manifest, 'of the run')}", taken): {
            key: item.judge_label for key, item in items.items()
        }
    }
    sources = {next(iter(judges)): str(run.run_dir)}
    for directory in judge_dirs:
        name, given = _rescore_labels(directory, run, what)
        name = _unique(f"judge {name}", taken)
        judges[name], sources[name] = given, str(directory)

    def valid(given: dict) -> dict:
        return {k: v for k, v in given.items() if v in labels}

    raters = {
        **{name: valid(given) for name, given in people.items()},
        **{name: valid(given) for name, given in judges.items()},
    }
    pairs = []
    pairs_left_out = None
    if len(raters) > MAX_PAIR_RATERS:  # pairs grow with the square of the raters: a crowd gets Fleiss' kappa
        pairs_left_out = (
            f"{len(raters)} raters make {len(raters) * (len(raters) - 1) // 2:,} pairs; Cohen's kappa of every "
            f"pair is given up to {MAX_PAIR_RATERS} raters: here Fleiss' kappa over the annotators and each "
            "judge against their majority stand for it"
        )
    for a, b in combinations(raters, 2) if pairs_left_out is None else ():
        common = sorted(set(raters[a]) & set(raters[b]))
        result = cohen([(items[k].scenario_id, raters[a][k], raters[b][k]) for k in common], labels)
        pairs.append({"a": a, "b": b, **result})

    valid_people = {name: valid(given) for name, given in people.items()}
    everyone = sorted(set.intersection(*(set(g) for g in valid_people.values())))
    fleiss_result = fleiss(
        [(items[k].scenario_id, [valid_people[p][k] for p in valid_people]) for k in everyone], labels
    )
    majorities = {}
    no_majority = one_person = 0
    for key in sorted({k for given in valid_people.values() for k in given}):
        votes = [given[key] for given in valid_people.values() if key in given]
        winner = majority(votes, PEOPLE_AGREEING)
        if winner is None:
            no_majority += 1
            one_person += len(votes) == 1
        else:
            majorities[key] = winner

    against, disagreements = [], []
    for name, given in judges.items():
        scored = valid(given)  # the judge's labels that are one of `labels`
        rows = [(items[k].scenario_id, m, scored[k]) for k, m in majorities.items() if k in scored]
        unscored = sum(given.get(k) not in labels for k in majorities)
        confusion = {m: {j: 0 for j in (*labels, UNSCORED)} for m in labels}
        for key, m in majorities.items():
            confusion[m][scored[key] if key in scored else UNSCORED] += 1
            if given.get(key) != m:
                item = items[key]
                disagreements.append(
                    {
                        "judge": name,
                        "trial_key": key,
                        "scenario_id": item.scenario_id,
                        "judge_label": given.get(key) or UNSCORED,
                        "majority": m,
                        "people": {p: people[p][key] for p in people if key in people[p]},
                        "link": f"index.html#{item.anchor}",
                    }
                )
        against.append(
            {
                "judge": name,
                "source": sources[name],
                "unscored": unscored,
                **cohen(rows, labels),
                "per_label": per_label(rows, labels),
                "confusion": confusion,
            }
        )

    given_labels = [label for given in people.values() for label in given.values()]
    result = {
        "what": what,
        "sample": sample,
        "labels": labels,
        "interval_rule": INTERVAL_RULE,
        "annotators": sorted(people),
        "judges": [{"name": n, "source": sources[n]} for n in judges],
        "items": len(items),
        "items_labelled": len({k for given in people.values() for k in given}),
        "human_labels": sum(label in labels for label in given_labels),
        "cannot_tell": sum(label == CANNOT_TELL for label in given_labels),
        "majority_items": len(majorities),
        "no_majority": no_majority,
        "one_person": one_person,
        "pairs": pairs,
        "pairs_left_out": pairs_left_out,
        "fleiss": fleiss_result,
        "against_people": against,
        "disagreements": disagreements,
    }
    result["verdict"] = verdict(result)
    return result
