#!/usr/bin/env bash
# The test command's body (README, .ci/run): lint, format, types, then the tests. Arguments go to pytest,
# so `bash scripts/check.sh -m quick` is the quick tier with the same gates in front.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "check: ruff lint"
.venv/bin/ruff check --quiet .
echo "check: ruff format"
.venv/bin/ruff format --check --quiet .
echo "check: mypy (the packages; config in pyproject.toml)"
.venv/bin/mypy
echo "check: pytest"
.venv/bin/python -m pytest -q "$@"
