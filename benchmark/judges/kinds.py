"""The judge table: each offline judge kind, in one place.

A model judge's family comes from the provider table (`candidates.providers`, read by
`benchmark.judges.family`). An offline judge labels a reply with no model, no server and no key;
each is a row of `JUDGE_KINDS`, and the rest of the code asks this table about a family
(`offline_kind`, `is_offline`, `offline_fallback`) rather than spelling a kind's name. A row's
`opener` is imported only when the judge opens, so importing this module imports nothing but the
standard library (and `core.named`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.named import named_object

if TYPE_CHECKING:
    from core.judge import Judge


@dataclass(frozen=True, kw_only=True)
class JudgeKind:
    """An offline judge: it needs no model and no key, so `--judge-family NAME` always resolves."""

    name: str  # the family `--judge-family` takes, and the judge's name and family in records
    publication: bool  # may grade a run whose numbers are published
    opener: str  # "module:Class" of the `Judge`, built with no arguments
    method: str  # how it labels, in a few words, for findings.md and the viewer
    unlabelled_why: str  # why it leaves a reply unlabelled, after "the `NAME` judge"
    remark_rule: str  # when a proactive remark conveys the event, by its reading
    fallback: bool = False  # the kind used when no judge family has credentials (exactly one row)

    @property
    def caveat(self) -> str:
        """What a text naming this judge adds: " (not the publication judge)", or nothing."""
        return "" if self.publication else " (not the publication judge)"

    def open(self) -> Judge:
        """A new judge of this kind, importing its module now."""
        return named_object(self.opener)()


LEXICAL = JudgeKind(
    name="lexical",
    publication=False,
    opener="benchmark.judges.lexical:LexicalJudge",
    method="answer-list matching",
    unlabelled_why="only looks for each scenario's answer words, and leaves a reply unlabelled rather than guess",
    remark_rule=(
        "a remark conveys the event when it names one of the event's expected keys in words of its own "
        "(not words copied from the camera block); one that names none does not (a false alarm); one it "
        "cannot decide is unscored (neither hit nor false alarm)"
    ),
    fallback=True,
)

JUDGE_KINDS: dict[str, JudgeKind] = {kind.name: kind for kind in (LEXICAL,)}


def offline_kind(family: str | None) -> JudgeKind | None:
    """The row of `family` (as typed: case and spaces do not matter); None for a model family."""
    return JUDGE_KINDS.get((family or "").strip().lower())


def is_offline(family: str | None) -> bool:
    """`family` labels without a model, a server or a key."""
    return offline_kind(family) is not None


def offline_fallback() -> str:
    """The offline kind used when no judge family has credentials."""
    (name,) = (kind.name for kind in JUDGE_KINDS.values() if kind.fallback)
    return name
