"""The curated list of common object nouns a camera block must not contain.

The list is data (`object_nouns.txt`, one singular noun per line). Matching
is word-bounded and case-insensitive, and accepts the regular plurals
(-s, -es, -y -> -ies, -f/-fe -> -ves), so "knives" and "brushes" are found
but "panel" does not match "pan". Framing words that talk about the camera
itself ("Camera view of ...", "camera shows", "Camera: ...") are not object
names and are skipped.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

NOUNS_FILE = Path(__file__).with_name("object_nouns.txt")
FRAMING = re.compile(r"(?<!\w)camera(?:\s+(?:view|frame|feed|image|shot|shows|sees)(?!\w)|\s*:)", re.IGNORECASE)


def load_nouns(path: Path = NOUNS_FILE) -> tuple[str, ...]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return tuple(line.strip().lower() for line in lines if line.strip() and not line.startswith("#"))


def _plural_forms(noun: str) -> set[str]:
    forms = {noun, noun + "s", noun + "es"}
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        forms.add(noun[:-1] + "ies")
    if noun.endswith("fe"):
        forms.add(noun[:-2] + "ves")
    elif noun.endswith("f"):
        forms.add(noun[:-1] + "ves")
    return forms


@lru_cache(maxsize=4)
def _pattern(path: Path = NOUNS_FILE) -> tuple[re.Pattern[str], dict[str, str]]:
    form_to_noun: dict[str, str] = {}
    for noun in load_nouns(path):
        for form in _plural_forms(noun):
            form_to_noun.setdefault(form, noun)
    alternatives = sorted(form_to_noun, key=len, reverse=True)
    body = "|".join(re.escape(form).replace(r"\ ", r"\s+") for form in alternatives)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE), form_to_noun


def object_nouns_in(text: str | None, path: Path = NOUNS_FILE) -> list[str]:
    """The listed nouns found in `text`, as their singular list entries, in order."""
    if not text:
        return []
    return list(_nouns_in(text, path))


@lru_cache(maxsize=1 << 14)
def _nouns_in(text: str, path: Path) -> tuple[str, ...]:
    """`object_nouns_in`, remembered per text: a bank repeats its answer tokens and camera phrases."""
    pattern, form_to_noun = _pattern(path)
    found: list[str] = []
    for match in pattern.finditer(FRAMING.sub(" ", text)):
        noun = form_to_noun[re.sub(r"\s+", " ", match.group(0).lower())]
        if noun not in found:
            found.append(noun)
    return tuple(found)


def as_object_noun(text: str, path: Path = NOUNS_FILE) -> str | None:
    """The list entry that `text` is as a whole (e.g. "Knives" -> "knife"), else None."""
    _, form_to_noun = _pattern(path)
    return form_to_noun.get(re.sub(r"\s+", " ", text.strip().lower()))
