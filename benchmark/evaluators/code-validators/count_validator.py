# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""Object count validator: pairs every expected count with its object noun.

"5 bottles, 3 cans" against "5 bottles, 8 cans" scores 0.5: each expected
(count, noun) pair is looked up by its noun in the output, so a number that
belongs to another object, or a stray number elsewhere, does not match.
Number words ("five", "a dozen", "a couple of") count as numbers.

Usage: python count_validator.py '{"output": "...", "expected_output": "..."}'
       echo '{...}' | python count_validator.py
Prints {"status", "score", "passed", "details"}; exit 0 when passed, 1 when not.
"""

from __future__ import annotations

import json
import re
import sys

UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
PHRASES = {
    "half a dozen": 6,
    "a dozen": 12,
    "one dozen": 12,
    "two dozen": 24,
    "a couple of": 2,
    "a pair of": 2,
    "a single": 1,
    "a hundred": 100,
    "one hundred": 100,
}
WORDS = {word: value for value, word in enumerate(UNITS)} | TENS
# words that may stand between a count and its noun ("5 green glass bottles")
MAX_ADJECTIVES = 2
# words that end a "count noun" phrase: a count never reaches past them
BREAK_WORDS = (
    "is|are|was|were|has|have|had|holds|hold|contains|contain|shows|show|with|and|or|of|the|on|in|at|to|"
    "for|from|by|more|fewer|less|than|but|only|about|shelf|row|page|step"
)
STOP_NOUNS = {"and", "or", "of", "the", "with", "in", "on", "at", "to", "more", "less", "than", "total", "percent"}

NUMBER = (
    r"(?P<phrase>" + "|".join(re.escape(p) for p in sorted(PHRASES, key=len, reverse=True)) + r")"
    r"|(?P<digits>\d+(?:,\d{3})*)"
    r"|(?P<word>(?:"
    + "|".join(sorted(TENS, key=len, reverse=True))
    + r")(?:[- ](?:"
    + "|".join(UNITS[1:10])
    + r"))?|"
    + "|".join(sorted(UNITS, key=len, reverse=True))
    + r")"
)
PAIR = re.compile(
    r"\b(?:" + NUMBER + r")\b\s+((?:[a-z-]+\s+){0," + str(MAX_ADJECTIVES) + r"}?)(?P<noun>[a-z]+)\b", re.IGNORECASE
)


# irregular plurals (and -f/-fe -> -ves) a count is often written with
IRREGULAR = {
    "knives": "knife",
    "leaves": "leaf",
    "loaves": "loaf",
    "halves": "half",
    "shelves": "shelf",
    "wolves": "wolf",
    "wives": "wife",
    "lives": "life",
    "calves": "calf",
    "scarves": "scarf",
    "people": "person",
    "children": "child",
    "men": "man",
    "women": "woman",
    "feet": "foot",
    "teeth": "tooth",
    "geese": "goose",
    "mice": "mouse",
    "dice": "die",
    "oxen": "ox",
}


def singular(noun: str) -> str:
    noun = noun.lower()
    if noun in IRREGULAR:
        return IRREGULAR[noun]
    if noun.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if noun.endswith(("ches", "shes", "sses", "xes", "zes")):
        return noun[:-2]
    if noun.endswith("s") and not noun.endswith("ss"):
        return noun[:-1]
    return noun


def _value(match: re.Match) -> int:
    if match.group("phrase"):
        return PHRASES[match.group("phrase").lower()]
    if match.group("digits"):
        return int(match.group("digits").replace(",", ""))
    word = match.group("word").lower()
    parts = re.split(r"[- ]", word)
    return sum(WORDS[p] for p in parts)


def count_pairs(text: str) -> dict[str, int]:
    """noun (singular) -> count, for every 'count noun' phrase in the text."""
    pairs: dict[str, int] = {}
    for match in PAIR.finditer(text or ""):
        noun = singular(match.group("noun"))
        if noun in STOP_NOUNS:
            continue
        pairs.setdefault(noun, _value(match))
    return pairs


def _noun_forms(noun: str) -> str:
    noun = singular(noun)
    forms = {noun, noun + "s", noun + "es"} | {plural for plural, one in IRREGULAR.items() if one == noun}
    if noun.endswith("y"):
        forms.add(noun[:-1] + "ies")
    return "|".join(sorted(forms, key=len, reverse=True))


def count_of(text: str, noun: str) -> int | None:
    """The count written next to `noun` (up to two words between), or None."""
    pattern = re.compile(
        r"\b(?:"
        + NUMBER
        + r")\b\s+(?:(?!(?:"
        + BREAK_WORDS
        + r")\b)[a-z-]+\s+){0,"
        + str(MAX_ADJECTIVES)
        + r"}?(?:"
        + _noun_forms(noun)
        + r")\b",
        re.IGNORECASE,
    )
    match = pattern.search(text or "")
    return _value(match) if match else None


def validate(output: str, expected_output: str, input_text: str = "", **kwargs) -> dict:
    expected = count_pairs(expected_output)
    found = {noun: count_of(output, noun) for noun in expected}
    if not expected:
        return {
            "status": "skipped",
            "score": 0.0,
            "passed": False,
            "details": {"reason": "no 'count noun' pair in expected_output"},
        }
    per_object = {}
    for noun, count in expected.items():
        got = found[noun]
        per_object[noun] = {"expected": count, "found": got, "match": got == count}
    matched = sum(1 for item in per_object.values() if item["match"])
    score = matched / len(expected)
    threshold = float(kwargs.get("threshold", 1.0))
    return {
        "status": "processed",
        "score": round(score, 4),
        "passed": score >= threshold,
        "details": {
            "matched": matched,
            "expected_pairs": len(expected),
            "objects": per_object,
            "counts_in_output": count_pairs(output),
        },
    }


def main(argv: list[str]) -> int:
    try:
        raw = argv[1] if len(argv) > 1 else sys.stdin.read()
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("eval data must be a JSON object")
        kwargs = {k: v for k, v in data.items() if k not in ("output", "expected_output", "input")}
        result = validate(
            str(data.get("output", "")), str(data.get("expected_output", "")), str(data.get("input", "")), **kwargs
        )
    except (ValueError, TypeError, RecursionError) as exc:
        result = {"status": "error", "score": 0.0, "passed": False, "details": {"reason": f"bad input: {exc}"}}
    print(json.dumps(result))
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
