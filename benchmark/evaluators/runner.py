"""Run a code validator as a subprocess, the way the spec says: `uv run`.

The validator runs as `uv run --script PATH` (its PEP 723 inline metadata
declares stdlib-only dependencies, so this works offline; `--python` pins the
interpreter this project runs on, so uv never downloads one). The eval data
goes in on stdin as JSON; the result comes back as JSON on stdout. Only when
`uv` is absent (neither on PATH nor beside this interpreter, e.g. in
`.venv/bin/` where `scripts/setup.sh` installs it) does the validator run on
the current interpreter instead. Every result records which ran it in
`details.runner`: `{"via": "uv" | "python", "command": [...]}` plus, for the
fallback, the reason.

A validator that runs past the timeout (30 s by default) is killed with its
whole process group and reported as `status: error` with
`details.reason: "timeout"`. One that prints more than `MAX_OUTPUT_BYTES` on
stdout or stderr is killed the same way as soon as it does.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
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


def find_uv() -> str | None:
    """The `uv` executable: on PATH, or beside the running interpreter (the project's venv)."""
    found = shutil.which("uv")
    if found:
        return found
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


def validator_command(path: Path, uv: str | None = None) -> tuple[list[str], dict]:
    """(argv, runner details) for one validator: `uv run --script` when uv exists, else this interpreter."""
    if uv:
        command = [uv, "run", "--quiet", "--no-project", "--script", "--python", sys.executable, str(path)]
        return command, {"via": "uv", "command": ["uv", "run", "--script", path.name]}
    return [sys.executable, str(path)], {
        "via": "python",
        "command": ["python", path.name],
        "reason": "uv not found (on PATH or beside the interpreter)",
    }


MAX_OUTPUT_BYTES = 1_000_000  # a validator's result is one small JSON object


class _Capped(threading.Thread):
    """Reads a pipe to its end in the background, keeping at most `limit` bytes;
    past that the process's whole group is killed (a runaway validator)."""

    def __init__(self, pipe, limit: int, process):
        super().__init__(daemon=True)
        self.pipe, self.limit, self.process = pipe, limit, process
        self.chunks: list[bytes] = []
        self.size, self.overflow = 0, False
        self.start()

    def run(self) -> None:
        for chunk in iter(lambda: self.pipe.read(65536), b""):
            if self.size + len(chunk) > self.limit:
                if not self.overflow:
                    self.overflow = True
                    _kill_group(self.process)  # at once: a runaway is not left to spin until the timeout
                continue  # drain what is left in the pipe; nothing more is kept
            self.chunks.append(chunk)
            self.size += len(chunk)

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")


def _kill_group(process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)  # uv's child interpreter too
    except ProcessLookupError:
        pass
    process.wait()


def _error(reason: str, runner: dict, **details) -> dict:
    return {
        "status": "error",
        "score": 0.0,
        "passed": False,
        "details": {"reason": reason, **details, "runner": runner},
    }


def run_validator(
    name_or_path: str, data: dict, *, timeout: float = DEFAULT_TIMEOUT_S, uv: str | None | bool = True
) -> dict:
    """The validator's standard result. `uv=True` finds uv; a path uses that one; None or False runs
    on this interpreter (the fallback)."""
    path = validator_path(name_or_path)
    uv_path = find_uv() if uv is True else (uv or None)
    command, runner = validator_command(path, uv_path)
    try:
        payload = json.dumps(data).encode("utf-8")
    except (RecursionError, TypeError, ValueError) as exc:
        return _error(f"eval data cannot be sent as JSON: {type(exc).__name__}", runner, validator=path.name)
    env = {**os.environ, "UV_NO_PROGRESS": "1"}
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env
    )
    out, err = _Capped(process.stdout, MAX_OUTPUT_BYTES, process), _Capped(process.stderr, MAX_OUTPUT_BYTES, process)
    try:
        if process.stdin is not None:  # (always: it was opened with stdin=PIPE)
            process.stdin.write(payload)
            process.stdin.close()
    except BrokenPipeError:
        pass
    try:
        process.wait(timeout=timeout)
        out.join()
        err.join()
    except subprocess.TimeoutExpired:
        _kill_group(process)
        if not (out.overflow or err.overflow):
            return _error("timeout", runner, timeout_s=timeout, validator=path.name)
    if out.overflow or err.overflow:
        return _error(f"validator printed more than {MAX_OUTPUT_BYTES:,} bytes", runner, validator=path.name)
    stdout, stderr = out.text(), err.text()
    try:
        result = json.loads(stdout)
    except json.JSONDecodeError:
        return _error("validator printed no JSON result", runner, exit_code=process.returncode, stderr=stderr[-500:])
    if not isinstance(result, dict) or {"status", "score", "passed", "details"} - set(result):
        return _error("validator result is not in the standard format", runner, result=result)
    if not isinstance(result["details"], dict):
        result["details"] = {"value": result["details"]}
    result["details"]["runner"] = runner
    return result
