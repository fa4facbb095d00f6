# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""JSON structure validator for vision outputs.

Extracts JSON from the output (bare, or inside a ```json fence, or the first
object or array in prose), then validates it: against `schema` (a JSON
Schema, given in the eval data) when there is one, else against the keys and
value types of `expected_output` (a JSON object; nested objects are checked
by dotted path). `expected_output` may be given as a JSON object or as a
string holding one. Score = share of expected keys present with the right
type. Details list `missing_keys` and `type_errors`.

Schemas are checked with `jsonschema` when it can be imported (the
project's own environment has it); the inline metadata above declares no
dependency, so `uv run --script` works offline, and there a built-in subset
checks `type`, `required`, `properties`, `items`, `enum` and
`minimum`/`maximum` (`details.schema_engine` says which ran).

Usage: python json_validator.py '{"output": "...", "expected_output": {...}, "schema": {...}}'
"""

from __future__ import annotations

import json
import re
import sys

TYPE_NAMES = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
    type(None): "null",
}


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


SCHEMA_TYPES = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "integer": (int,),
    "number": (int, float),
}


def _type_ok(value, wanted) -> bool:
    names = wanted if isinstance(wanted, list) else [wanted]
    for name in names:
        kinds = SCHEMA_TYPES.get(name)
        if kinds is None:
            return True  # a type this subset does not know: not checked
        if isinstance(value, bool) and name in ("integer", "number"):
            continue
        if isinstance(value, kinds) and not (name == "integer" and isinstance(value, float) and not value.is_integer()):
            return True
    return False


def _builtin_errors(data, schema: dict, where: list):
    """(validator, path, message, missing key or None) for the schema subset this file checks itself."""
    if not isinstance(schema, dict):
        return
    path = ".".join(str(p) for p in where)
    if "type" in schema and not _type_ok(data, schema["type"]):
        yield "type", path, f"{json.dumps(data)[:60]} is not of type {schema['type']!r}", None
        return
    if "enum" in schema and data not in schema["enum"]:
        yield "enum", path, f"{json.dumps(data)[:60]} is not one of {schema['enum']!r}", None
    if isinstance(data, (int, float)) and not isinstance(data, bool):
        if "minimum" in schema and data < schema["minimum"]:
            yield "minimum", path, f"{data} is less than the minimum of {schema['minimum']}", None
        if "maximum" in schema and data > schema["maximum"]:
            yield "maximum", path, f"{data} is greater than the maximum of {schema['maximum']}", None
    if isinstance(data, dict):
        for key in schema.get("required", []):
            if key not in data:
                yield "required", path, f"'{key}' is a required property", key
        for key, sub in (schema.get("properties") or {}).items():
            if key in data:
                yield from _builtin_errors(data[key], sub, where + [key])
    if isinstance(data, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(data):
            yield from _builtin_errors(item, schema["items"], where + [index])


def _schema_errors(data, schema: dict) -> tuple[list, str]:
    """[(validator, path, message, missing key or None)], and the engine that found them."""
    try:
        import jsonschema
    except ImportError:
        return list(_builtin_errors(data, schema, [])), "builtin subset"
    out = []
    for error in jsonschema.Draft202012Validator(schema).iter_errors(data):
        where = ".".join(str(p) for p in error.absolute_path)
        key = None
        if error.validator == "required":
            name = re.search(r"'(.+?)'", error.message)
            key = name.group(1) if name else error.message
        out.append((error.validator, where, error.message, key))
    return out, "jsonschema"


def _against_schema(data, schema: dict) -> tuple[float, list, list, str]:
    errors, engine = _schema_errors(data, schema)
    missing, type_errors = [], []
    for validator, where, message, key in errors:
        if validator == "required":
            missing.append(f"{where + '.' if where else ''}{key}")
        else:
            type_errors.append({"key": where or "(root)", "error": message})
    properties = list(schema.get("properties", {})) or list(schema.get("required", []))
    bad = {m.split(".")[0] for m in missing} | {str(e["key"]).split(".")[0] for e in type_errors}
    score = (
        (len([p for p in properties if p not in bad]) / len(properties))
        if properties
        else (0.0 if missing or type_errors else 1.0)
    )
    return score, missing, type_errors, engine


def validate(output: str, expected_output: str, input_text: str = "", **kwargs) -> dict:
    try:
        data = extract_json(output)
    except ValueError as exc:
        return {
            "status": "processed",
            "score": 0.0,
            "passed": False,
            "details": {"parseable": False, "reason": str(exc), "missing_keys": [], "type_errors": []},
        }
    schema = kwargs.get("schema")
    engine = None
    if schema:
        if not isinstance(schema, dict):
            return {
                "status": "error",
                "score": 0.0,
                "passed": False,
                "details": {"reason": "schema must be a JSON object (a JSON Schema)"},
            }
        score, missing, type_errors, engine = _against_schema(data, schema)
    else:
        try:
            expected = json.loads(expected_output) if isinstance(expected_output, str) else expected_output
        except json.JSONDecodeError as exc:
            return {
                "status": "error",
                "score": 0.0,
                "passed": False,
                "details": {"reason": f"expected_output is not JSON: {exc.msg}"},
            }
        if not isinstance(expected, dict):
            return {
                "status": "error",
                "score": 0.0,
                "passed": False,
                "details": {"reason": "expected_output must be a JSON object of expected keys"},
            }
        missing, type_errors, ok = [], [], []
        _walk(expected, data, "", missing, type_errors, ok)
        total = len(ok) + len(missing) + len(type_errors)
        score = len(ok) / total if total else 1.0
    threshold = float(kwargs.get("threshold", 1.0))
    details = {"parseable": True, "missing_keys": missing, "type_errors": type_errors}
    if engine:
        details["schema_engine"] = engine
    return {"status": "processed", "score": round(score, 4), "passed": score >= threshold, "details": details}


def main(argv: list[str]) -> int:
    try:
        raw = argv[1] if len(argv) > 1 else sys.stdin.read()
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("eval data must be a JSON object")
        kwargs = {k: v for k, v in data.items() if k not in ("output", "expected_output", "input")}
        expected = data.get("expected_output", "")
        if not isinstance(expected, (dict, list, str)):  # an object stays an object; a string is parsed
            expected = str(expected)
        output = data.get("output", "")
        if not isinstance(output, str):  # the output itself given as JSON
            output = json.dumps(output)
        result = validate(output, expected, str(data.get("input", "")), **kwargs)
    except (ValueError, TypeError, RecursionError) as exc:
        result = {"status": "error", "score": 0.0, "passed": False, "details": {"reason": f"bad input: {exc}"}}
    print(json.dumps(result))
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
