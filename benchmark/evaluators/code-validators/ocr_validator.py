# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""OCR validator: how closely extracted text matches the expected text.

An extraction is often embedded in a sentence ("The slide reads: Project
Proposal Q1 2026"). The validator therefore compares the expected text with
the best matching window of the output: every run of consecutive output
words of about the expected length (its word count, give or take a quarter,
at least two). Case, spacing and punctuation are ignored. The similarity is
the larger of the whole output's and the best window's (difflib ratio; an
exact extraction scores 1.0); with `keywords` given (a list or a comma
string) the score is the mean of similarity and keyword recall, keywords
being looked for in the whole output. Details carry the similarity, the best
window and its character error rate (edit distance / expected length), the
whole output's similarity and character error rate, and which keywords were
found.

Usage: python ocr_validator.py '{"output": "...", "expected_output": "...", "keywords": [...]}'
"""

from __future__ import annotations

import difflib
import json
import re
import sys


def normalise(text: str) -> str:
    text = re.sub(r"[^\w\s]", " ", (text or "").lower())
    return re.sub(r"\s+", " ", text).strip()


MAX_CHARS = 4_000  # longer output or expected text is refused: this is the text of one image
EXACT_CER_CELLS = 1_000_000  # beyond this many cells the edit distance is read off a word alignment
MAX_WINDOW_WORDS = 200  # a longer expected text is compared with the whole output only


def character_errors(a: str, b: str) -> int:
    """Levenshtein distance for short texts; for long ones the edits of difflib's
    alignment (an upper bound of it), so a long text costs seconds, not minutes."""
    if len(a) * len(b) <= EXACT_CER_CELLS:
        return edit_distance(a, b)
    wa, wb = a.split(), b.split()  # align words, count the characters of the words that differ
    matcher = difflib.SequenceMatcher(None, wa, wb, autojunk=False)
    return sum(
        max(len(" ".join(wa[i1:i2])), len(" ".join(wb[j1:j2])))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    )


def edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


LONG_CHARS = 600  # above this, texts are aligned word by word (characters cost quadratic time)


def _units(a: str, b: str):
    return (a.split(), b.split()) if len(a) + len(b) > LONG_CHARS else (a, b)


def ratio(a: str, b: str) -> float:
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(None, *_units(a, b), autojunk=False).ratio()


def best_window(got: str, want: str) -> tuple[str, float]:
    """The run of consecutive words of `got` most similar to `want`, and its ratio."""
    words, size = got.split(), len(want.split())
    if not words or not size or size > MAX_WINDOW_WORDS:
        return got, ratio(got, want)
    spread = max(1, size // 4)
    best, best_ratio = got, ratio(got, want)
    for length in range(max(1, size - spread), size + spread + 1):
        if length > len(words):
            break
        for start in range(len(words) - length + 1):
            window = " ".join(words[start : start + length])
            value = ratio(window, want)
            if value > best_ratio or (value == best_ratio and len(window) < len(best)):
                best, best_ratio = window, value
    return best, best_ratio


def validate(output: str, expected_output: str, input_text: str = "", **kwargs) -> dict:
    if len(output) > MAX_CHARS or len(expected_output) > MAX_CHARS:
        raise ValueError(f"output and expected_output may be at most {MAX_CHARS:,} characters each")
    got, want = normalise(output), normalise(expected_output)
    if not want:
        raise ValueError("expected_output has no words to compare with")
    whole = ratio(got, want)
    window, similarity = best_window(got, want)
    details = {
        "similarity": round(similarity, 4),
        "best_window": window,
        "character_error_rate": round(character_errors(window, want) / max(len(want), 1), 4),
        "whole_output_similarity": round(whole, 4),
        "whole_output_character_error_rate": round(character_errors(got, want) / max(len(want), 1), 4),
    }
    keywords = kwargs.get("keywords") or []
    if isinstance(keywords, str):
        keywords = [k.strip() for k in keywords.split(",") if k.strip()]
    score = similarity
    if keywords:
        found = [k for k in keywords if re.search(r"\b" + re.escape(normalise(k)) + r"\b", got)]
        recall = len(found) / len(keywords)
        details.update(
            keyword_recall=round(recall, 4),
            keywords_found=found,
            keywords_missing=[k for k in keywords if k not in found],
        )
        score = (similarity + recall) / 2
    threshold = float(kwargs.get("threshold", 0.8))
    return {"status": "processed", "score": round(score, 4), "passed": score >= threshold, "details": details}


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
