"""A judge checked against reference labels (`wearsim judge-check`): every item judged, at most
`concurrency` at a time, then the figures (`benchmark.labels.figures`) as a dict and as a screen of text.

The judge is any `core.judge.Judge`; an item it leaves unscored counts against its coverage, never as a
disagreement. A judge call that fails (the model's endpoint down, a quota) stops the check: a
`JudgeCallError` naming the item, so no figure stands on a part of the items.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence

from benchmark.judges.kinds import is_offline
from benchmark.labels.agreement import SEED
from benchmark.labels.figures import UNSCORED, figures, kappa_interval
from benchmark.labels.reference import References
from benchmark.stats import MIN_BOOTSTRAP_SCENARIOS
from core.judge import LABELS, Judge, Verdict

DEFAULT_CONCURRENCY = 4


class JudgeCallError(RuntimeError):
    """The judge failed on an item; the message names the item and the failure."""


async def judge_all(
    judge: Judge,
    references: References,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: Callable[[int, int], None] | None = None,
) -> list[Verdict]:
    """The judge's verdict of each item, in the items' order; `progress(done, total)` after each."""
    items = references.items
    verdicts: list[Verdict | None] = [None] * len(items)
    gate = asyncio.Semaphore(max(1, concurrency))
    failed: list[str] = []
    done = 0

    async def one(n: int) -> None:
        nonlocal done
        async with gate:
            if failed:
                return
            try:
                verdicts[n] = await judge.label(items[n].case)
            except Exception as exc:  # the judge's model, not our input: stop, naming the item
                text = " ".join(str(exc).split()) or type(exc).__name__
                failed.append(f"the judge failed on {items[n].key}: {text[:300]}")
                return
        done += 1
        if progress is not None:
            progress(done, len(items))

    await asyncio.gather(*(one(n) for n in range(len(items))))
    if failed:
        raise JudgeCallError(failed[0])
    return [v for v in verdicts if v is not None]


def judge_facts(judge: Judge, endpoint: str | None) -> dict:
    """Which judge was checked: its name and family, the endpoint's host, and an LLM judge's prompt."""
    facts: dict = {"name": judge.name, "family": judge.family, "endpoint": endpoint}
    if not is_offline(judge.family):
        from benchmark.judges.prompt import JUDGE_PROMPT_VERSION, judge_prompt_sha256

        facts["prompt_version"] = JUDGE_PROMPT_VERSION
        facts["prompt_sha256"] = judge_prompt_sha256()
    return facts


def measure(references: References, verdicts: Sequence[Verdict], judge: dict) -> dict:
    """The figures of the verdicts against the references, as the JSON `--output` writes."""
    items = references.items
    truth = [item.reference for item in items]
    guess = [v.label if v.label in LABELS else None for v in verdicts]
    fig = figures(truth, guess)
    interval = kappa_interval([item.scenario_id for item in items], truth, guess)
    reasons = Counter(v.unscored_reason or "no label" for v, g in zip(verdicts, guess) if g is None)
    return {
        "labels_file": str(references.source),
        "shape": references.shape,
        "shape_text": references.described,
        "read": references.read,
        "items": len(items),
        "skipped": references.skipped,
        "judge": judge,
        "coverage": {"labelled": fig.labelled, "items": fig.total, "rate": fig.coverage if fig.total else None},
        "kappa": {
            "value": interval["kappa"],
            "ci_low": interval["kappa_ci_low"],
            "ci_high": interval["kappa_ci_high"],
            "ci_method": interval["ci_method"],
            "scenarios": interval["scenarios"],
        },
        "agreement": interval["agreement"],
        "per_label": {
            label: {
                "precision": fig.precision[label],
                "precision_n": fig.said(label),
                "recall": fig.recall[label],
                "recall_n": fig.found(label),
                "hits": fig.confusion[label][label],
            }
            for label in LABELS
        },
        "confusion": fig.confusion,
        "unscored_reasons": dict(reasons.most_common()),
    }


def _share(value: float | None, hits: int, n: int) -> str:
    return "n/a" if value is None else f"{value:.2f} ({hits}/{n})"


def _interval(kappa: dict) -> str:
    if kappa["value"] is None:
        return "n/a (undefined: no labelled item, or one label throughout)"
    n = kappa["scenarios"]
    if kappa["ci_method"] == "bootstrap":
        method = f"bootstrap over {n} scenarios, seed {SEED}"
    elif n < MIN_BOOTSTRAP_SCENARIOS:
        method = f"Wilson: {n} scenarios, under {MIN_BOOTSTRAP_SCENARIOS}"
    else:
        method = "Wilson: the bootstrap had no width"
    return f"{kappa['value']:.3f}, 95% CI [{kappa['ci_low']:.3f}, {kappa['ci_high']:.3f}] ({method})"


def render(report: dict) -> str:
    """The report as a screen of plain text."""
    skipped = report["skipped"]
    why = "; ".join(f"{n} {reason}" for reason, n in skipped.items())
    judge = report["judge"]
    where = f" at {judge['endpoint']}" if judge.get("endpoint") else ""
    prompt = f", judge prompt {judge['prompt_version']}" if judge.get("prompt_version") else ""
    cover = report["coverage"]
    agreement = report["agreement"]
    lines = [
        f"labels: {report['labels_file']}",
        f"shape: {report['shape_text']}",
        f"items: {report['items']} with a reference label, of {report['read']} read"
        + (f"; skipped {sum(skipped.values())}: {why}" if skipped else "; none skipped"),
        f"judge: {judge['name']} (the offline judge: no model, no endpoint)"
        if is_offline(judge["family"])
        else f"judge: {judge['name']} (family {judge['family']}){where}{prompt}",
        f"coverage: {cover['labelled']}/{cover['items']} labelled by the judge"
        + (f" ({cover['rate']:.1%})" if cover["rate"] is not None else ""),
        f"Cohen's kappa over the labelled: {_interval(report['kappa'])}",
    ]
    if agreement["rate"] is not None:
        lines.append(
            f"agreement: {agreement['k']}/{agreement['n']} ({agreement['rate']:.1%}), "
            f"95% CI [{agreement['ci_low']:.1%}, {agreement['ci_high']:.1%}]"
        )
    lines.append(f"  {'':<10}{'precision':>16}{'recall':>16}")
    for label, row in report["per_label"].items():
        lines.append(
            f"  {label:<10}{_share(row['precision'], row['hits'], row['precision_n']):>16}"
            f"{_share(row['recall'], row['hits'], row['recall_n']):>16}"
        )
    columns = (*LABELS, UNSCORED)
    lines.append("confusion (rows: reference; columns: the judge's label)")
    lines.append(f"  {'':<10}" + "".join(f"{c:>10}" for c in columns))
    for label in LABELS:
        row = report["confusion"][label]
        lines.append(f"  {label:<10}" + "".join(f"{row[c]:>10}" for c in columns))
    return "\n".join(lines)


__all__ = ["DEFAULT_CONCURRENCY", "JudgeCallError", "judge_all", "judge_facts", "measure", "render"]
