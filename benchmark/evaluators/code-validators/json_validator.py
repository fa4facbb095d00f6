# /// script
# requires-python = ">=3.9"
# dependencies = ["jsonschema>=4"]
# ///
"""JSON structure validator for vision outputs.

Extracts JSON from the output (bare, or inside a ```json fence, or the first
object or array in prose), then validates it: against `schema` (a JSON
Schema, given in the eval data) when there is one, else against the keys and
value types of `expected_output` (a JSON object; nested objects are checked
by dotted path). Score = share of expected keys present with the right type.
Details list `missing_keys` and `type_errors`.

Usage: python json_validator.py '{"output": "...", "expected_output": "{...}", "schema": {...}}'
"""

from __future__ import annotations

import json
import re
import sys

TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number",
              type(None): "null"}


def extract_json(text: str):
    """The first JSON value in the text, or raise ValueError."""
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text or "", re.DOTALL | re.IGNORECASE)
    candidates = [fenced.group(1)] if fenced else []
    candidates.append(text or "")
    decoder = json.JSONDecoder()
    for candidate in candidates:
        candidate = candidate.strip()
        for start, char in enumerate(candidate):
            if char in "{[":
                try:
                    return decoder.raw_decode(candidate[start:])[0]
                except json.JSONDecodeError:
                    continue
    raise ValueError("no JSON object or array found in the output")


def _type_name(value) -> str:
    return TYPE_NAMES.get(type(value), type(value).__name__)


def _walk(expected: dict, actual, prefix: str, missing: list, type_errors: list, ok: list) -> None:
    for key, want in expected.items():
        path = f"{prefix}{key}"
        if not isinstance(actual, dict) or key not in actual:
            missing.append(path)
            continue
        got = actual[key]
        if _type_name(got) != _type_name(want):
            type_errors.append({"key": path, "expected": _type_name(want), "found": _type_name(got)})
        elif isinstance(want, dict) and want:
            _walk(want, got, path + ".", missing, type_errors, ok)
        else:
            ok.append(path)


def _against_schema(data, schema: dict) -> tuple[float, list, list]:
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    missing, type_errors = [], []
    for error in validator.iter_errors(data):
        where = ".".join(str(p) for p in error.absolute_path)
        if error.validator == "required":
            name = re.search(r"'(.+?)'", error.message)
            missing.append(f"{where + '.' if where else ''}{name.group(1) if name else error.message}")
        else:
            type_errors.append({"key": where or "(root)", "error": error.message})
    properties = list(schema.get("properties", {})) or list(schema.get("required", []))
    bad = {m.split(".")[0] for m in missing} | {str(e["key"]).split(".")[0] for e in type_errors}
    score = (len([p for p in properties if p not in bad]) / len(properties)) if properties else \
        (0.0 if missing or type_errors else 1.0)
    return score, missing, type_errors


def validate(output: str, expected_output: str, input_text: str = "", **kwargs) -> dict:
    try:
        data = extract_json(output)
    except ValueError as exc:
        return {"status": "processed", "score": 0.0, "passed": False,
                "details": {"parseable": False, "reason": str(exc), "missing_keys": [], "type_errors": []}}
    schema = kwargs.get("schema")
    if schema:
        try:
            score, missing, type_errors = _against_schema(data, schema)
        except ImportError:
            return {"status": "error", "score": 0.0, "passed": False,
                    "details": {"reason": "schema validation needs jsonschema (uv run installs it)"}}
    else:
        try:
            expected = json.loads(expected_output) if isinstance(expected_output, str) else expected_output
        except json.JSONDecodeError as exc:
            return {"status": "error", "score": 0.0, "passed": False,
                    "details": {"reason": f"expected_output is not JSON: {exc.msg}"}}
        if not isinstance(expected, dict):
            return {"status": "error", "score": 0.0, "passed": False,
                    "details": {"reason": "expected_output must be a JSON object of expected keys"}}
        missing, type_errors, ok = [], [], []
        _walk(expected, data, "", missing, type_errors, ok)
        total = len(ok) + len(missing) + len(type_errors)
        score = len(ok) / total if total else 1.0
    threshold = float(kwargs.get("threshold", 1.0))
    return {"status": "processed", "score": round(score, 4), "passed": score >= threshold,
            "details": {"parseable": True, "missing_keys": missing, "type_errors": type_errors}}


def main(argv: list[str]) -> int:
    try:
        raw = argv[1] if len(argv) > 1 else sys.stdin.read()
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("eval data must be a JSON object")
        kwargs = {k: v for k, v in data.items() if k not in ("output", "expected_output", "input")}
        result = validate(str(data.get("output", "")), str(data.get("expected_output", "")),
                          str(data.get("input", "")), **kwargs)
    except (ValueError, TypeError) as exc:
        result = {"status": "error", "score": 0.0, "passed": False, "details": {"reason": f"bad input: {exc}"}}
    print(json.dumps(result))
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
