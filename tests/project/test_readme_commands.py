"""Issue 60: the README's command blocks work as written, in a fresh virtualenv made by their own set-up lines.

The blocks are read from the README's "Two commands" section (its indented lines that start with
`bash scripts/setup.sh`: the main job, the Tests line and the quick tier), so the test runs whatever the
README says today. The project's files (tracked, and untracked ones git does not ignore, as they are in the
working tree: uncommitted edits count) are copied to a temporary folder without a `.venv`, and each block
runs there with `bash -c`, the way a newcomer would paste it:

- the main job first, as written: its `bash scripts/setup.sh` makes the virtualenv, then the run must exit
  0 and write `summary.json` and `findings.md` in its output folder;
- every other block then starts from the virtualenv the main job's set-up made (a copy of it is put back
  before each), so each one has to bring its own set-up: a README line that lacked `--test` would fail
  here with "No module named pytest", as issue 60 found;
- each of those blocks without its set-up must fail in that virtualenv, which shows the test can see a
  missing step at all.

The Tests block runs `bash scripts/check.sh`, which passes its arguments to pytest: the whole suite cannot
run inside one of its own tests, so a single quick test file (`CHECK_SELECTION`) is appended. ruff and
mypy still run over the whole tree, so the block still shows the test set-up installed them.

No network: pip sees only the wheelhouse `scripts/setup.sh` keeps (`.venv/wheelhouse`, the real project's)
through PIP_NO_INDEX and PIP_FIND_LINKS. The inner runs get `CI=true` whatever the outer run has, so an
inner test that skips fails: in a virtualenv made by the set-up lines, a skip is what a missing install
step looks like. The pytest and coverage variables of this run are not passed on (an inner pytest must not
take itself for one of this run's xdist workers).

About 6 minutes on 2 cores: `slow`, and `alone`, since the main job and the inner pytest use both cores.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.paths import ROOT

WHEELHOUSE = ROOT / ".venv" / "wheelhouse"
SET_UP = "bash scripts/setup.sh"
MAIN_SET_UP = SET_UP + " && "
# what the Tests block's check.sh gives pytest here (see the module's docstring)
CHECK_SELECTION = ["tests/project/test_readme.py"]
TAIL_LINES = 40
# a block that hangs fails the test (the main job takes one to two minutes on 2 cores)
BLOCK_TIMEOUT_S = 1200


def readme_blocks(text: str) -> list[str]:
    """The indented command lines of the "Two commands" section that start with the set-up script."""
    start = text.index("\n## Two commands\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end >= 0 else None]
    lines = [line.strip() for line in section.splitlines() if line.startswith("    ")]
    return [line for line in lines if line.startswith(SET_UP)]


def split_set_up(block: str) -> tuple[str, str]:
    """('bash scripts/setup.sh --test', 'bash scripts/check.sh') for the Tests block."""
    set_up, sep, command = block.partition(" && ")
    assert sep and command, f"a README block with no command after its set-up: {block!r}"
    return set_up, command


def tracked_files() -> list[str]:
    """The project's files as the working tree has them: tracked (with their uncommitted edits) and
    untracked ones git does not ignore; a tracked file deleted in the tree is left out."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted({name for name in listed.split("\0") if name and (ROOT / name).is_file()})


def copy_project(target: Path) -> None:
    for name in tracked_files():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name)


def offline_env() -> dict[str, str]:
    dropped = ("PYTEST_", "COV_CORE_")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(dropped) and key not in {"PYTHONPATH", "VIRTUAL_ENV"}
    }
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(WHEELHOUSE), CI="true")
    return env


def run_block(command: str, project: Path) -> subprocess.CompletedProcess[str]:
    """`bash -c command` in its own process group, which is killed whole if it passes BLOCK_TIMEOUT_S."""
    with subprocess.Popen(
        ["bash", "-c", command],
        cwd=project,
        env=offline_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            output, _ = process.communicate(timeout=BLOCK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            output += f"\n(killed after {BLOCK_TIMEOUT_S} s)"
    return subprocess.CompletedProcess(command, process.returncode, output)


def outcome(command: str, done: subprocess.CompletedProcess[str]) -> str:
    tail = "\n".join(done.stdout.splitlines()[-TAIL_LINES:])
    head = f"README block:\n    {command}\nexit code {done.returncode}"
    return f"{head}; the last {TAIL_LINES} lines of its output:\n{tail}"


def output_dir(command: str) -> str:
    found = re.search(r"--output-dir\s+(\S+)", command)
    assert found, f"the main job names no --output-dir: {command!r}"
    return found.group(1)


def test_readme_blocks_are_read_from_the_two_commands_section():
    blocks = readme_blocks(ROOT.joinpath("README.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 3, f"expected the main job, the Tests line and the quick tier in the README: {blocks}"
    assert sum(block.startswith(MAIN_SET_UP) for block in blocks) == 1, blocks
    assert any("scripts/check.sh" in block for block in blocks) and any("-m quick" in block for block in blocks)


def test_the_readers_see_a_made_up_readme():
    text = (
        "# x\n\n## Two commands\n\n    bash scripts/setup.sh && run\n\n    ls\n\n## Next\n\n    bash scripts/setup.sh\n"
    )
    assert readme_blocks(text) == ["bash scripts/setup.sh && run"]
    assert split_set_up("bash scripts/setup.sh --test && a && b") == ("bash scripts/setup.sh --test", "a && b")
    assert output_dir("wearsim bench --output-dir runs/first --limit 2") == "runs/first"


@pytest.mark.slow
@pytest.mark.alone
def test_each_readme_block_runs_in_a_fresh_virtualenv_from_its_own_set_up(tmp_path):
    if not (WHEELHOUSE / ".installed-test").is_file():
        pytest.fail(
            f"no complete wheelhouse at {WHEELHOUSE} (the test installs from it, without the network): "
            "run `bash scripts/setup.sh --test` in the project first"
        )
    blocks = readme_blocks(ROOT.joinpath("README.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 3, f"expected the main job, the Tests line and the quick tier in the README: {blocks}"
    [main_job] = [block for block in blocks if block.startswith(MAIN_SET_UP)]
    others = [block for block in blocks if block != main_job]

    project, snapshot = tmp_path / "project", tmp_path / "venv-after-main-job"
    project.mkdir()
    copy_project(project)
    assert not (project / ".venv").exists()
    venv = project / ".venv"
    try:
        done = run_block(main_job, project)
        assert done.returncode == 0, outcome(main_job, done)
        results = project / output_dir(main_job)
        for name in ("summary.json", "findings.md"):
            assert (results / name).is_file(), f"{name} missing from {results}\n" + outcome(main_job, done)

        # the main job's set-up alone is not enough for the others: without their own set-up they fail
        for block in others:
            command = split_set_up(block)[1]
            bare = run_block(command, project)
            assert bare.returncode != 0, (
                "run without its set-up after the main job's, this command should have failed "
                "(the test could not tell a missing step):\n" + outcome(command, bare)
            )

        shutil.copytree(venv, snapshot, symlinks=True)
        for i, block in enumerate(others):
            if i:  # back to the virtualenv the main job's set-up made
                shutil.rmtree(venv)
                if i == len(others) - 1:
                    snapshot.rename(venv)
                else:
                    shutil.copytree(snapshot, venv, symlinks=True)
            command = block
            if split_set_up(block)[1].endswith("scripts/check.sh"):
                command = f"{block} {' '.join(CHECK_SELECTION)}"
            done = run_block(command, project)
            assert done.returncode == 0, outcome(command, done)
    finally:
        # a virtualenv and a wheelhouse, about 2 GB each time: not left in pytest's kept temporary folders
        shutil.rmtree(project, ignore_errors=True)
        shutil.rmtree(snapshot, ignore_errors=True)
