#!/usr/bin/env bash
# The test command's body (README, .ci/run): lint, format, types and the tests. Arguments go to pytest,
# so `bash scripts/check.sh -m quick` is the quick tier with the same gates in front. mypy runs beside the
# tests (most of the tests' time is spent waiting on clocks and servers) and its verdict counts the same.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "check: ruff lint"
.venv/bin/ruff check --quiet .
echo "check: ruff format"
.venv/bin/ruff format --check --quiet .
echo "check: mypy (the packages; config in pyproject.toml), beside the tests"
mypy_log=$(mktemp)
trap 'rm -f "$mypy_log"' EXIT
.venv/bin/mypy >"$mypy_log" 2>&1 &
mypy_pid=$!
echo "check: pytest"
status=0
.venv/bin/python -m pytest -q "$@" || status=$?
if wait "$mypy_pid"; then
  echo "check: mypy: $(tail -1 "$mypy_log")"
else
  echo "check: mypy failed:"
  cat "$mypy_log"
  status=1
fi
exit "$status"
