"""The in-process server has room for the run (issue 36): `wearsim bench --via stream
--concurrency N` once met a fixed cap of 16 sessions, so at 20 cells at once some
sessions were refused (`server_busy`)."""

import json
import os
import subprocess
import sys

import pytest

from tests.fake_realtime import FakeOpenAIRealtime

CELLS = 20  # more than the server's default cap of 16


@pytest.mark.whisper
def test_a_stream_run_over_the_default_cap_refuses_no_session(tmp_path):
    run = tmp_path / "run"
    with FakeOpenAIRealtime() as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "bench",
                "--model",
                "openai-realtime:gpt-realtime",
                "--base-url",
                server.base_url,
                "--judge-family",
                "lexical",
                "--conditions",
                "baseline",
                "--via",
                "stream",
                "--speed",
                "1",
                "--concurrency",
                str(CELLS),
                "--limit",
                str(CELLS),
                "--no-frames",
                "--output-dir",
                str(run),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "OPENAI_API_KEY": "sk-test-room"},
        )
    records = [json.loads(line) for line in (run / "transcripts.jsonl").read_text().splitlines()]
    assert len(records) == CELLS, done.stderr[-2000:]
    assert [r["error"] for r in records if r["error"]] == []
    log = (run / "logs" / "server.log").read_text()
    assert "server_busy" not in log and "maximum of" not in log
