"""Issue 60, item 2: `wearsim probe` against a Gemini Live server of one's own (the project's conformance
server, self-signed): a local --base-url needs no key, as OpenAI's does; the certificate is trusted with
--ca-file (or SSL_CERT_FILE), which the help and the error name; a failed session's trace ends with the
error."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.fake_gemini_live import FakeGeminiLive

MODEL = "gemini-live:gemini-3.8-live"
KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "SSL_CERT_FILE")


def probe(*argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}  # no key, no trusted certificate
    return subprocess.run(
        [sys.executable, "-m", "benchmark", "probe", MODEL, *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.mark.slow
def test_a_local_gemini_live_url_needs_no_key_and_takes_its_certificate_from_ca_file(tmp_path):
    trace = tmp_path / "ok.jsonl"
    with FakeGeminiLive(tmp_path, reply="It is the screwdriver in your hand.") as server:
        done = probe("--base-url", server.base_url, "--ca-file", str(server.cert), "--trace", str(trace))
    assert done.returncode == 0, done.stderr
    assert "needs an API key" not in done.stderr and "ok  reply to the spoken question" in done.stdout
    assert not any(json.loads(line)["direction"] == "error" for line in trace.read_text().splitlines())


@pytest.mark.slow
def test_an_untrusted_certificate_is_one_line_naming_the_option_and_the_trace_holds_the_error(tmp_path):
    trace = tmp_path / "failed.jsonl"
    with FakeGeminiLive(tmp_path) as server:
        done = probe("--base-url", server.base_url, "--trace", str(trace))
    assert done.returncode == 1
    [line] = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert "certificate is not trusted" in line and "--ca-file PEM" in line and "SSL_CERT_FILE" in line
    assert "Traceback" not in done.stderr
    last = json.loads(trace.read_text().splitlines()[-1])
    assert last["direction"] == "error" and "CERTIFICATE_VERIFY_FAILED" in last["message"]["error"]


def test_a_missing_ca_file_stops_before_any_request_and_the_help_names_both_ways(tmp_path):
    done = probe("--base-url", "https://127.0.0.1:9", "--ca-file", str(tmp_path / "nope.pem"))
    assert done.returncode == 2 and "--ca-file" in done.stderr and "no such file" in done.stderr
    help_text = " ".join(probe("--help").stdout.split())
    assert "--ca-file PEM" in help_text and "SSL_CERT_FILE" in help_text and "https://HOST:PORT" in help_text
