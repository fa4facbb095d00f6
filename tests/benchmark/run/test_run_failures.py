"""Reliability of `wearsim bench` under faults: a failed run says so, SIGTERM
and SIGINT leave no llama.cpp server behind, a torn last line does not block
the run, resume refuses changed settings, one process per run dir, an atomic
manifest, duplicate scenario ids, --ids, the embedded model's file."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmark.run.errors import RunDirBusy
from benchmark.run.lock import RunDirLock
from benchmark.run.manifest import write_manifest
from benchmark.scoring.trials import TranscriptError, load_trials
from core.records import TrialRecord
from tests.fake_openai import FakeOpenAI
from tests.paths import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def env_without_keys() -> dict:
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "OPENAI_BASE_URL"}


def bench_command(run_dir: Path, *extra: str, server: FakeOpenAI | None = None) -> list[str]:
    command = [
        sys.executable,
        "-m",
        "benchmark",
        "bench",
        "--judge-family",
        "lexical",
        "--conditions",
        "baseline",
        "--output-dir",
        str(run_dir),
        *extra,
    ]
    if server is not None:
        command += ["--model", "openai:fake", "--base-url", server.base_url]
    return command


def bench(run_dir: Path, *extra: str, server: FakeOpenAI | None = None, timeout: float = 300):
    return subprocess.run(
        bench_command(run_dir, *extra, server=server),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env_without_keys(),
    )


def records(run_dir: Path) -> list[TrialRecord]:
    lines = (run_dir / "transcripts.jsonl").read_text(encoding="utf-8").splitlines()
    return [TrialRecord.from_json(json.loads(line)) for line in lines if line.strip()]


# ------------------------------------------------------------ 1. a failed run says so


@pytest.mark.slow
def test_a_run_with_too_many_errored_cells_exits_3_and_findings_lead_with_the_errors(tmp_path):
    # the first 5 requests answer 429: the first cell's five attempts fail, the other two cells pass
    with FakeOpenAI(fail_first=5, retry_after="0") as server:
        out = bench(tmp_path / "run", "--limit", "3", "--concurrency", "1", server=server)
    assert out.returncode == 3, out.stderr
    failure = [line for line in out.stderr.splitlines() if "cells errored" in line]
    assert len(failure) == 1
    assert "1 of 3 cells errored" in failure[0] and "--max-error-rate 5%" in failure[0] and "429" in failure[0]
    findings = (tmp_path / "run" / "findings.md").read_text(encoding="utf-8").splitlines()
    assert findings[2].startswith("**Turns OK: ") and "1 rate_limited" in findings[2]  # the 429s, by category
    assert findings[4].startswith("**1 of 3 cells errored** (33.3%)")
    assert "not a measurement" in findings[6] or "Balanced Turn 2 accuracy" in findings[6]

    with FakeOpenAI(fail_first=5, retry_after="0") as server:
        tolerant = bench(
            tmp_path / "tolerant", "--limit", "3", "--concurrency", "1", "--max-error-rate", "0.5", server=server
        )
    assert tolerant.returncode == 0, tolerant.stderr
    assert "cells errored" not in tolerant.stderr


@pytest.mark.slow
def test_a_run_without_errors_leads_with_its_headline(tmp_path):
    with FakeOpenAI() as server:
        out = bench(tmp_path / "run", "--ids", "sc-04,sc-02", server=server)
    assert out.returncode == 0, out.stderr
    assert sorted(r.scenario_id for r in records(tmp_path / "run")) == ["sc-02", "sc-04"]
    findings = (tmp_path / "run" / "findings.md").read_text(encoding="utf-8").splitlines()
    assert findings[2].startswith("**Turns OK: ") and "cells errored" not in findings[4]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["scenario_ids"] == ["sc-02", "sc-04"] and manifest["candidate_model_file"] is None


def test_unknown_ids_are_named(tmp_path):
    out = bench(
        tmp_path / "run", "--ids", "sc-05,sc-99,nope", "--model", "openai:fake", "--base-url", "http://127.0.0.1:9/v1"
    )
    assert out.returncode == 2
    assert "sc-99, nope" in out.stderr and "sc-05," not in out.stderr.split("no scenario")[1]
    assert not (tmp_path / "run").exists()


# ------------------------------------------------------------ 3. signals stop the llama server too


def _children(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the live processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append((int(entry.name), cmdline))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :].split()[0] != "Z"


def _llama_child(process: subprocess.Popen, deadline: float) -> int:
    while time.monotonic() < deadline:
        servers = [pid for pid, cmd in _children(process.pid) if "llama_cpp.server" in cmd]
        if servers:
            return servers[0]
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.05)
    raise AssertionError("the llama.cpp server never started")


@pytest.mark.clock
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_bench_and_its_llama_server(tmp_path, signum):
    run_dir = tmp_path / "run"
    # 20 scenarios x 3 conditions, one at a time: far more cells than can finish between the event the test
    # waits for (the server started, or one cell written) and the signal, so the run is still going when it comes
    command = [
        sys.executable,
        "-m",
        "benchmark",
        "bench",
        "--limit",
        "20",
        "--concurrency",
        "1",
        "--max-tokens",
        "40",
        "--output-dir",
        str(run_dir),
    ]
    process = subprocess.Popen(
        command, cwd=ROOT, env=env_without_keys(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 240
        server = _llama_child(process, deadline)
        transcripts = run_dir / "transcripts.jsonl"
        if signum == signal.SIGTERM:  # after a finished cell; SIGINT comes while the server may still be starting
            while time.monotonic() < deadline and not (transcripts.exists() and transcripts.read_text().strip()):
                assert process.poll() is None, process.stderr.read()
                time.sleep(0.05)
        os.kill(process.pid, signum)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 128 + signum, err
    assert f"stopped by {signal.Signals(signum).name}" in err and "Traceback" not in err
    deadline = time.monotonic() + 5
    while _alive(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(server), "the llama.cpp server outlived bench"
    assert not (run_dir / ".lock").exists()
    if signum == signal.SIGTERM:
        kept = records(run_dir)
        assert 1 <= len(kept) < 60 and all(r.error is None for r in kept)  # finished cells stay
        manifest = json.loads((run_dir / "manifest.json").read_text())
        assert manifest["candidate_model"] == "local" and manifest["candidate_model_file"] == GGUF


# ------------------------------------------------------------ 4. a torn last line


@pytest.mark.clock
def test_a_torn_last_line_is_skipped_by_report_and_cut_by_resume(tmp_path):
    run_dir = tmp_path / "run"
    transcripts = run_dir / "transcripts.jsonl"
    with FakeOpenAI() as server:
        assert bench(run_dir, "--limit", "3", server=server).returncode == 0
        whole = transcripts.read_bytes()
        transcripts.write_bytes(whole[: len(whole) - 500])  # a disk-full or hand-truncated last line

        trial_set = load_trials(run_dir)
        assert len(trial_set.trials) == 2 and "line 3" in trial_set.warnings[0]
        report = subprocess.run(
            [sys.executable, "-m", "benchmark", "report", str(run_dir)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
        assert report.returncode == 0, report.stderr
        assert "line 3" in report.stderr and "cut off" in report.stderr

        resumed = bench(run_dir, "--limit", "3", "--resume", server=server)
    assert resumed.returncode == 0, resumed.stderr
    assert "cut off" in resumed.stderr and "1 cells to run (2 already finished)" in resumed.stderr
    lines = transcripts.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and all(json.loads(line) for line in lines)
    assert sorted(r.scenario_id for r in records(run_dir)) == ["sc-01", "sc-02", "sc-03"]


@pytest.mark.slow
def test_an_invalid_line_before_the_last_stays_an_error(tmp_path):
    good = (FIXTURES / "transcripts" / "schema1_direct" / "transcripts.jsonl").read_text().splitlines()
    path = tmp_path / "transcripts.jsonl"
    path.write_text(good[0] + "\n" + good[1][:200] + "\n" + good[2] + "\n")
    with pytest.raises(TranscriptError, match=rf"{path}: line 2: invalid JSON"):
        load_trials(path)
    run_dir = tmp_path / "run"
    with FakeOpenAI() as server:
        assert bench(run_dir, "--limit", "2", server=server).returncode == 0
        first, second = (run_dir / "transcripts.jsonl").read_text().splitlines()
        (run_dir / "transcripts.jsonl").write_text(first[:100] + "\n" + second + "\n")
        out = bench(run_dir, "--limit", "2", "--resume", server=server)
    assert out.returncode == 2
    assert f"{run_dir / 'transcripts.jsonl'}: line 1: invalid JSON" in out.stderr


# ------------------------------------------------------------ 5. resume settings, the lock, the manifest


@pytest.mark.slow
def test_resume_refuses_changed_settings_but_not_concurrency(tmp_path):
    run_dir = tmp_path / "run"
    with FakeOpenAI() as server:
        base = ("--limit", "1", "--conditions", "baseline,track_current_frame")
        assert bench(run_dir, *base, server=server).returncode == 0
        manifest = (run_dir / "manifest.json").read_bytes()
        for extra, key in (
            (("--max-tokens", "60"), "max_tokens"),
            (("--ranking-judge-family", "lexical"), "ranking_judge_family"),
            (("--ranking-condition", "track_current_frame"), "ranking_condition"),
            (("--temperature", "0.7"), "temperature"),
        ):
            out = bench(run_dir, *base, *extra, "--resume", server=server)
            assert out.returncode == 2, (extra, out.stderr)
            assert f"different {key}" in out.stderr
            assert (run_dir / "manifest.json").read_bytes() == manifest
        same = bench(run_dir, *base, "--concurrency", "1", "--resume", server=server)
    assert same.returncode == 0, same.stderr
    assert "0 cells to run (2 already finished)" in same.stderr
    assert json.loads((run_dir / "manifest.json").read_text())["max_tokens"] == 300


@pytest.mark.clock
def test_two_bench_processes_cannot_share_a_run_dir(tmp_path):
    run_dir = tmp_path / "run"
    with FakeOpenAI(delay=0.2) as server:
        first = subprocess.Popen(
            bench_command(run_dir, "--limit", "4", "--concurrency", "1", server=server),
            cwd=ROOT,
            env=env_without_keys(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 120
            while not (run_dir / "manifest.json").exists() and time.monotonic() < deadline:
                assert first.poll() is None, first.stderr.read()
                time.sleep(0.05)
            second = bench(run_dir, "--limit", "4", "--concurrency", "1", "--resume", server=server)
            _, first_err = first.communicate(timeout=120)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
    assert second.returncode == 2
    line = [entry for entry in second.stderr.splitlines() if entry.strip()][-1]
    assert line.startswith("error: ") and "in use by another wearsim bench" in line and f"pid {first.pid}" in line
    assert first.returncode == 0, first_err
    cells = [r.cell for r in records(run_dir)]
    assert len(cells) == len(set(cells)) == 4
    assert not (run_dir / ".lock").exists()


def test_the_lock_is_exclusive_and_a_dir_it_made_is_removed_when_empty(tmp_path):
    run_dir = tmp_path / "new"
    lock = RunDirLock(run_dir).acquire()
    with pytest.raises(RunDirBusy, match=f"pid {os.getpid()}"):
        RunDirLock(run_dir).acquire()
    lock.release()
    assert not run_dir.exists()
    RunDirLock(run_dir).acquire().release()  # free again


def test_the_manifest_is_replaced_atomically(tmp_path, monkeypatch):
    path = tmp_path / "manifest.json"
    write_manifest(path, {"candidate_model": "openai:one"})

    def disk_full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError):
        write_manifest(path, {"candidate_model": "openai:two", "padding": "x" * 100_000})
    assert json.loads(path.read_text()) == {"candidate_model": "openai:one"}
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]  # no temp file left


# ------------------------------------------------------------ 6. duplicate scenario ids


def test_bench_refuses_a_bank_with_duplicate_ids(tmp_path):
    source = (FIXTURES / "banks" / "spec_vocab.jsonl").read_text(encoding="utf-8").splitlines()
    bank = tmp_path / "bank.jsonl"
    bank.write_text("\n".join([*source, source[0]]) + "\n", encoding="utf-8")
    scenario_id = json.loads(source[0])["scenario_id"]
    out = bench(
        tmp_path / "run", "--scenarios", str(bank), "--model", "openai:fake", "--base-url", "http://127.0.0.1:9/v1"
    )
    assert out.returncode == 2
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"{scenario_id} (2 times)" in lines[0] and "wearsim validate" in lines[0]
    assert not (tmp_path / "run").exists()
