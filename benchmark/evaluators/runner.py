"""Run a code validator as a subprocess, the way an eval harness would.

The eval data goes in on stdin as JSON; the result comes back as JSON on
stdout. A validator that runs past the timeout (30 s by default) is killed
and reported as `status: error` with `details.reason: "timeout"`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmark.evaluators import VALIDATORS, VALIDATORS_DIR

DEFAULT_TIMEOUT_S = 30.0


def validator_path(name_or_path: str) -> Path:
    if name_or_path in VALIDATORS:
        return VALIDATORS_DIR / VALIDATORS[name_or_path]
    path = Path(name_or_path)
    if not path.exists():
        raise FileNotFoundError(f"no validator {name_or_path!r} (known: {', '.join(VALIDATORS)})")
    return path


def _error(reason: str, **details) -> dict:
    return {"status": "error", "score": 0.0, "passed": False, "details": {"reason": reason, **details}}


def run_validator(name_or_path: str, data: dict, *, timeout: float = DEFAULT_TIMEOUT_S) -> dict:
    path = validator_path(name_or_path)
    try:
        done = subprocess.run([sys.executable, str(path)], input=json.dumps(data), capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return _error("timeout", timeout_s=timeout, validator=path.name)
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        return _error("validator printed no JSON result", exit_code=done.returncode, stderr=done.stderr[-500:])
    if not isinstance(result, dict) or {"status", "score", "passed", "details"} - set(result):
        return _error("validator result is not in the standard format", result=result)
    return result
