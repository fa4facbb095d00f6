"""A run dir opened for labelling, and one annotator's side of it.

`open_label_run(run_dir, scenarios)` reads the records and the bank once;
`LabelRun.items(what)` and `LabelRun.known` (every item key of the run and
its kind, what a label file is checked against) come from them.
`AnnotatorDesk` is what the labelling page talks to (`streaming.annotate_app`):
the sample's items as the page may show them, this annotator's own labels
and nobody else's, and `save`, which writes each label as it is given.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from benchmark.labels import WHATS
from benchmark.labels.items import (
    CANNOT_TELL,
    CANNOT_TELL_TEXT,
    CHOICES,
    RUBRIC_NOTES,
    LabelError,
    LabelItem,
    cell_key,
    items_of,
    run_bank,
)
from benchmark.labels.sample import SampleChoice, disagreements_first, draw_sample
from benchmark.labels.store import (
    check_annotator,
    label_path,
    labels_locked,
    make_label,
    now,
    read_label_file,
    write_labels,
)


@dataclass(kw_only=True)
class LabelRun:
    run_dir: Path
    records: tuple
    bank: dict
    manifest: dict

    def items(self, what: str) -> list[LabelItem]:
        return items_of(self.records, self.bank, what, self.run_dir)

    @cached_property
    def known(self) -> dict[str, str]:
        return {item.key: item.what for what in WHATS for item in self.items(what)}

    def sample(self, what: str, n: int | None, seed: int) -> list[LabelItem]:
        return draw_sample(self.items(what), n, seed)

    def sample_of(self, what: str, choice: SampleChoice, seed: int) -> list[LabelItem]:
        """The items of `--sample`: a random draw, or the disagreement sample (`disagreements_first`)."""
        if choice.kind == "random":
            return self.sample(what, choice.n, seed)
        return disagreements_first(self.items(what), self.offline_labels(what), choice.n, seed)

    def offline_labels(self, what: str) -> dict[str, str | None]:
        """The offline judge's label of each Turn 2 or Turn 3 item, run now (None: it is unsure)."""
        from benchmark.judges.lexical import LexicalJudge

        if what not in ("turn2", "turn3"):
            raise LabelError(
                "--sample disagreements is for Turn 2 and Turn 3 replies: the offline judge does not label remarks"
            )
        judge, turn = LexicalJudge(), 2 if what == "turn2" else 3
        keys = {item.key for item in self.items(what)}
        labels: dict[str, str | None] = {}
        for record in self.records:
            key = cell_key(record) + ("|turn3" if turn == 3 else "")
            if key in keys:
                labels[key] = judge.label_now(record.judge_case(self.bank[record.scenario_id], turn)).label
        return labels


def open_label_run(run_dir: str | Path, scenarios: str | Path | None = None) -> LabelRun:
    """The run dir's records (every problem a `LabelError`), its manifest and its bank."""
    from benchmark.report import read_manifest
    from benchmark.scoring.trials import TranscriptError, load_trials
    from core.scenario import BankError

    run_dir = Path(run_dir)
    if not (run_dir / "transcripts.jsonl").is_file():
        raise LabelError(f"{run_dir}: not a run dir (no transcripts.jsonl)")
    try:
        records = load_trials(run_dir).trials
        manifest = read_manifest(run_dir)
        bank = run_bank(run_dir, scenarios, manifest)
    except TranscriptError as exc:
        raise LabelError(exc.problems[0] if exc.problems else str(exc)) from None
    except BankError as exc:
        raise LabelError(exc.problems[0] if exc.problems else str(exc)) from None
    return LabelRun(run_dir=run_dir, records=tuple(records), bank=bank, manifest=manifest)


def choices_json(what: str) -> list[dict]:
    """The buttons of the page: label, key, text and the rubric's definition, `cannot tell` last."""
    return [
        *(
            {"label": label, "key": key, "text": text, "definition": definition}
            for label, key, text, definition in CHOICES[what]
        ),
        {"label": CANNOT_TELL, "key": "u", "text": CANNOT_TELL_TEXT[0], "definition": CANNOT_TELL_TEXT[1]},
    ]


@dataclass(kw_only=True)
class AnnotatorDesk:
    """One annotator's labelling of one sample of one run."""

    run: LabelRun
    annotator: str
    what: str
    sample: list[LabelItem]
    sample_kind: str = "random"  # how the sample was drawn (SAMPLES): saved with every label
    lock: threading.Lock = field(default_factory=threading.Lock)
    saves: int = 0  # labels saved through this desk (wearsim annotate measures again at its end when any)

    def __post_init__(self):
        check_annotator(self.annotator)
        labels = self.run.run_dir / "labels"
        if labels.is_dir() and not labels.is_symlink():
            with labels_locked(self.run.run_dir):  # removes the temp files a killed save left behind
                pass
        self.in_sample = {item.key for item in self.sample}

    @property
    def path(self) -> Path:
        return label_path(self.run.run_dir, self.annotator)

    def own_labels(self) -> dict[str, dict]:
        """This annotator's labels of the sample's items (read from the file: what is on disk is what shows)."""
        if not (self.path.exists() or self.path.is_symlink()):
            return {}
        labels = read_label_file(self.path, self.run.run_dir, self.run.known)
        return {
            key: {"label": label.label, "note": label.note} for key, label in labels.items() if key in self.in_sample
        }

    def page(self) -> dict:
        """What the page gets: who labels, what kind of item, the choices, the items and this annotator's
        own labels. Never a judge's label, never another annotator's."""
        with self.lock:
            return {
                "annotator": self.annotator,
                "what": self.what,
                "choices": choices_json(self.what),
                "rubric": list(RUBRIC_NOTES[self.what]),
                "items": [item.page_json() for item in self.sample],
                "labels": self.own_labels(),
            }

    def save(self, key: str, label: str, note: str = "") -> int:
        """Write one label to this annotator's file now; returns how many of the sample are labelled."""
        if not isinstance(key, str) or key not in self.in_sample:
            raise LabelError(f"trial key {str(key)[:80]!r} is not in this sample")
        given = make_label(key, label, self.annotator, self.run.known, "the page", note, now(), self.sample_kind)
        with self.lock:
            write_labels(self.run.run_dir, self.annotator, [given], self.run.known)
            self.saves += 1
            return len(self.own_labels())
