"""Every user-facing failure is one clear line naming what to fix, never a
traceback (`wearsim --debug` shows it instead); a run that cannot start
writes nothing; `wearsim --version`, `wearsim models` and the bench help."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from benchmark import cli
from tests.paths import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
SECRET = "sk-test-never-print-this-value"
KEY_NAMES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "ANTHROPIC_API_KEY")


def no_keys(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in KEY_NAMES}
    return {**env, **extra}


def wearsim(*argv: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchmark", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env or no_keys(),
    )


def assert_one_line(err: str, *needles: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err, err
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert SECRET not in err
    return lines[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_bench_without_the_key_names_the_variable_and_writes_nothing(tmp_path):
    run_dir = tmp_path / "run"
    # a key of another provider is set: its value must not appear either
    out = wearsim(
        "bench",
        "--model",
        "openai:gpt-4o-mini",
        "--limit",
        "1",
        "--output-dir",
        str(run_dir),
        env=no_keys(GEMINI_API_KEY=SECRET),
    )
    assert out.returncode == 2
    assert_one_line(out.stderr, "OPENAI_API_KEY", "--base-url")
    assert not run_dir.exists()  # no manifest, no logs, no dir

    run_dir.mkdir()  # an existing, empty run dir stays empty
    out = wearsim(
        "bench",
        "--model",
        "gemini:gemini-2.5-flash",
        "--limit",
        "1",
        "--output-dir",
        str(run_dir),
        env=no_keys(OPENAI_API_KEY=SECRET),
    )
    assert out.returncode == 2
    assert_one_line(out.stderr, "GEMINI_API_KEY")
    assert list(run_dir.iterdir()) == []


def test_rescore_eval_and_validate_without_the_key(tmp_path):
    out = wearsim(
        "rescore",
        str(FIXTURES / "transcripts" / "ours_small"),
        "--judge-family",
        "openai",
        "--output-dir",
        str(tmp_path / "rescored"),
    )
    assert out.returncode == 2
    assert_one_line(out.stderr, "OPENAI_API_KEY", "--judge-base-url")
    assert not (tmp_path / "rescored").exists()

    out = wearsim(
        "rescore",
        str(FIXTURES / "transcripts" / "ours_small"),
        "--judge-family",
        "claude",
        "--output-dir",
        str(tmp_path / "rescored"),
        env=no_keys(OPENAI_API_KEY=SECRET),
    )
    assert out.returncode == 2
    assert_one_line(out.stderr, "ANTHROPIC_API_KEY")

    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"output": "a red mug", "expected_output": "a red mug"}) + "\n")
    out = wearsim(
        "eval", "--evaluator", "image-description", "--data", str(cases), "--judge-model", "gemini:gemini-2.5-flash"
    )
    assert out.returncode == 2
    assert_one_line(out.stderr, "GEMINI_API_KEY", "--judge-model")

    out = wearsim("validate", "--semantic", "--model", "openai:gpt-4o-mini")
    assert out.returncode == 2
    assert_one_line(out.stderr, "OPENAI_API_KEY", "--semantic")


def test_simulate_with_an_unreachable_server_is_one_line_and_debug_shows_the_traceback():
    url = f"ws://127.0.0.1:{free_port()}"
    out = wearsim("simulate", "sc-01", "--server", url, "--fast")
    assert out.returncode == 2
    assert_one_line(out.stderr, "cannot connect to the streaming server", url, "wearsim serve")
    debug = wearsim("--debug", "simulate", "sc-01", "--server", url, "--fast")
    assert debug.returncode != 0 and "Traceback" in debug.stderr


@pytest.mark.skipif(os.path.exists("/dev/video57"), reason="a camera exists at index 57")
def test_simulate_with_no_camera_is_one_line():
    out = wearsim("simulate", "sc-01", "--camera", "57", "--fast")
    assert out.returncode == 2
    assert_one_line(out.stderr, "--camera 57", "no camera")


def test_an_unexpected_failure_is_one_line_unless_debug(monkeypatch, capsys):
    from benchmark.cli import models

    def broken(args):
        raise RuntimeError("the index file is unreadable\nsecond detail line")

    monkeypatch.setattr(models, "run", broken)
    assert cli.main(["models"]) == 1
    err = capsys.readouterr().err
    line = assert_one_line(err, "wearsim models: the index file is unreadable", "--debug")
    assert "second detail line" not in line
    with pytest.raises(RuntimeError, match="index file"):
        cli.main(["--debug", "models"])


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("wearsim ") and "benchmark v1" in out


def test_models_lists_the_id_forms_and_which_keys_are_set(monkeypatch, capsys):
    for name in KEY_NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    assert cli.main(["models"]) == 0
    out = capsys.readouterr().out
    for form in (
        "openai:MODEL",
        "gemini:MODEL",
        "anthropic:MODEL",
        "openai-realtime:MODEL",
        "gemini-live:MODEL",
        "local ",
        "local:PATH.gguf",
        "replay:RUN_DIR",
    ):
        assert form in out, form
    rows = {line.split()[0]: line.split()[1:3] for line in out.splitlines() if line.strip().startswith(KEY_NAMES)}
    assert rows["ANTHROPIC_API_KEY"][0] == "set"
    assert rows["OPENAI_API_KEY"] == ["not", "set"] and rows["GEMINI_API_KEY"] == ["not", "set"]
    assert "SmolLM2-135M-Instruct" in out  # the embedded model file
    assert SECRET not in out
    assert cli.main(["models", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["variables_set"]["ANTHROPIC_API_KEY"] is True and data["variables_set"]["OPENAI_API_KEY"] is False


def test_bench_help_explains_the_flags_and_lists_the_conditions(capsys):
    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    from core.scenario import load_bank

    for condition in load_bank().conditions:
        assert condition.name in out
    for flag, words in (
        ("--trials", "repeats of every (scenario, condition) cell"),
        ("--concurrency", "changes speed, not results"),
        ("--ranking-condition", "headline"),
        ("--max-error-rate", "exit with status 3"),
        ("--ids", "sc-05,sc-12"),
    ):
        assert flag in out and words in out, flag


def test_a_text_only_model_cannot_judge_images(tmp_path):
    import subprocess
    import sys

    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"output": "a red mug", "image": "mug.jpg"}\n')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "eval",
            "--evaluator",
            "image-description",
            "--data",
            str(cases),
            "--judge-model",
            "local",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "reads text only" in done.stderr and "Traceback" not in done.stderr


def test_an_endpoint_with_nothing_listening_stops_the_run_before_any_cell(tmp_path):
    port = free_port()  # nothing listens there
    done = wearsim(
        "bench",
        "--model",
        "openai:qwen2.5",
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--judge-family",
        "lexical",
        "--output-dir",
        str(tmp_path / "run"),
    )
    assert done.returncode == 2
    assert_one_line(done.stderr, f"nothing is listening at 127.0.0.1:{port} (connection refused)", "--base-url")
    assert not (tmp_path / "run").exists()


def test_every_missing_key_is_named_at_once(tmp_path):
    done = wearsim(
        "bench", "--model", "openai:gpt-4o-mini", "--judge-family", "gemini", "--output-dir", str(tmp_path / "run")
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "OPENAI_API_KEY" in done.stderr and "GEMINI_API_KEY" in done.stderr
    assert not (tmp_path / "run").exists()


def test_serve_refuses_at_start_up_a_backend_or_describer_without_its_key():
    done = wearsim(
        "serve",
        "--backend",
        "openai-realtime:gpt-realtime",
        "--describer",
        "gemini:gemini-2.5-flash",
        "--port",
        str(free_port()),
        timeout=60,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--backend openai-realtime:gpt-realtime" in done.stderr and "OPENAI_API_KEY" in done.stderr
    assert "--describer gemini:gemini-2.5-flash" in done.stderr and "GEMINI_API_KEY" in done.stderr
    help_text = wearsim("serve", "--help").stdout
    assert "replace the default" in " ".join(help_text.split())


def test_bench_help_examples_keep_their_line_breaks(capsys):
    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])
    lines = capsys.readouterr().out.splitlines()
    assert not any("8000/v1   " in line for line in lines)  # no gap mid-line where the backslash was eaten
    assert any(line.rstrip().endswith("\\") for line in lines)


def test_an_unknown_describer_exits_2_before_any_cell_and_the_help_lists_ocr(tmp_path, capsys):
    """Issue 34, item 6: `--describer nosuch` used to start the run and fail every cell as a fault of ours."""
    for bad in ("nosuch", "openai:", "claude:some-model"):
        done = wearsim(
            "bench",
            "--via",
            "stream",
            "--conditions",
            "baseline",
            "--limit",
            "1",
            "--describer",
            bad,
            "--output-dir",
            str(tmp_path / "run"),
            timeout=60,
        )
        assert done.returncode == 2, done.stderr
        assert_one_line(done.stderr, f"--describer {bad}", "opencv", "authored", "ocr", "openai:MODEL")
        assert not (tmp_path / "run").exists()
    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "ocr (reads the text in the pixels, offline)" in out  # the registry's words


def test_serve_on_a_busy_port_is_one_line_naming_port_without_announcing_the_page():
    """Issue 34, item 5: the server printed its page's URL, then "address already in use", exit 3."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = wearsim("serve", "--port", str(port), timeout=120)
    assert done.returncode not in (0, None)
    line = assert_one_line(done.stderr, f"--port {port}", "in use")
    assert "http://" not in done.stderr and "live page" not in done.stderr, line
