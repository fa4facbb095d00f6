# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""Chart data validator: currency amounts, percentages and dates.

Every value found in `expected_output` must appear in the output:
- amounts match within a relative tolerance (default 15%, `tolerance`),
  whatever their spelling: "$2.4M", "2,400,000", "2.4 million", "EUR 2.4m",
  "£2.4bn"; when both sides name a currency they must name the same one;
- percentages match exactly ("58%" = "58.0 %" = "58 percent");
- dates match after normalising to YYYY-MM-DD ("March 1, 2024", "1 Mar 2024",
  "2024-03-01", "03/01/2024" read as month/day), or YYYY-MM for "March 2024".
Score = matched expected values / expected values.

Usage: python chart_validator.py '{"output": "Q4: $2.4M", "expected_output": "$2.4M"}'
"""

from __future__ import annotations

import json
import re
import sys

MONTHS = {
    m: i
    for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)
}
MONTH = (
    r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
DATE_PATTERNS = [
    re.compile(r"\b(?P<year>\d{4})-(?P<mnum>\d{1,2})-(?P<day>\d{1,2})\b"),
    re.compile(r"\b(?P<mnum>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4})\b"),
    re.compile(r"\b" + MONTH + r"\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<year>\d{4})\b", re.IGNORECASE),
    re.compile(r"\b(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+" + MONTH + r",?\s+(?P<year>\d{4})\b", re.IGNORECASE),
    re.compile(r"\b" + MONTH + r"\s+(?P<year>\d{4})\b", re.IGNORECASE),
]
CURRENCY = {
    "$": "USD",
    "usd": "USD",
    "us$": "USD",
    "€": "EUR",
    "eur": "EUR",
    "£": "GBP",
    "gbp": "GBP",
    "¥": "JPY",
    "jpy": "JPY",
}
SCALE = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mm": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "t": 1e12,
    "trillion": 1e12,
}
NUMBER = r"(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
PERCENT = re.compile(NUMBER + r"\s*(?:%|percent\b|per cent\b)", re.IGNORECASE)
AMOUNT = re.compile(
    r"(?P<pre>us\$|\$|€|£|¥|\b(?:usd|eur|gbp|jpy)\b)?\s*"
    + NUMBER
    + r"(?:\s*(?P<scale>thousand|million|billion|trillion|bn|mn|mm|k|m|b|t)\b)?"
    r"(?:\s*(?P<post>\b(?:usd|eur|gbp|jpy|dollars|euros|pounds)\b))?",
    re.IGNORECASE,
)
POST_NAMES = {"dollars": "USD", "euros": "EUR", "pounds": "GBP"}


def find_dates(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    found, spans = [], []
    for pattern in DATE_PATTERNS:
        for m in pattern.finditer(text):
            if any(a <= m.start() < b for a, b in spans):
                continue
            groups = m.groupdict()
            month = int(groups["mnum"]) if groups.get("mnum") else MONTHS[groups["month"][:3].lower()]
            value = f"{int(groups['year']):04d}-{month:02d}"
            if groups.get("day"):
                value += f"-{int(groups['day']):02d}"
            found.append(value)
            spans.append(m.span())
    return found, spans


def _blank(text: str, spans) -> str:
    for a, b in spans:
        text = text[:a] + " " * (b - a) + text[b:]
    return text


def extract(text: str) -> dict:
    """{"dates": [...], "percentages": [...], "amounts": [(value, currency or None)]}"""
    text = text or ""
    dates, spans = find_dates(text)
    text = _blank(text, spans)
    percentages = [float(m.group("number").replace(",", "")) for m in PERCENT.finditer(text)]
    text = _blank(text, [m.span() for m in PERCENT.finditer(text)])
    amounts = []
    for m in AMOUNT.finditer(text):
        pre, scale, post = m.group("pre"), m.group("scale"), m.group("post")
        raw = m.group("number")
        # a bare small integer with no currency, scale or thousands separator is a label, not an amount
        if not (pre or scale or post or "," in raw or "." in raw):
            continue
        value = float(raw.replace(",", "")) * SCALE.get((scale or "").lower(), 1.0)
        currency = (
            CURRENCY.get((pre or "").lower())
            or POST_NAMES.get((post or "").lower())
            or CURRENCY.get((post or "").lower())
        )
        amounts.append((value, currency))
    return {"dates": dates, "percentages": percentages, "amounts": amounts}


def validate(output: str, expected_output: str, input_text: str = "", **kwargs) -> dict:
    tolerance = float(kwargs.get("tolerance", 0.15))
    want, got = extract(expected_output), extract(output)
    results = []
    for date in want["dates"]:
        results.append({"kind": "date", "expected": date, "match": date in got["dates"]})
    for pct in want["percentages"]:
        results.append({"kind": "percentage", "expected": pct, "match": any(pct == g for g in got["percentages"])})
    for value, currency in want["amounts"]:
        close = [
            g
            for g, c in got["amounts"]
            if abs(g - value) <= tolerance * abs(value) and (currency is None or c is None or c == currency)
        ]
        results.append(
            {
                "kind": "amount",
                "expected": value,
                "currency": currency,
                "match": bool(close),
                "found": close[0] if close else None,
            }
        )
    if not results:
        return {
            "status": "skipped",
            "score": 0.0,
            "passed": False,
            "details": {"reason": "no amount, percentage or date in expected_output"},
        }
    score = sum(r["match"] for r in results) / len(results)
    threshold = float(kwargs.get("threshold", 1.0))
    return {
        "status": "processed",
        "score": round(score, 4),
        "passed": score >= threshold,
        "details": {"values": results, "tolerance": tolerance, "extracted_from_output": got},
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
