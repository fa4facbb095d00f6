"""Shared test rules. Under CI=true a skipped test fails: a missing install
step must not hide behind a skip."""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("CI") == "true" and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, which counts as a failure: {reason}"


@pytest.fixture(scope="session")
def local_llama_url(tmp_path_factory):
    """One real llama.cpp server with the bundled SmolLM2 GGUF for the whole session."""
    from benchmark.candidates.local import LocalLlamaServer

    with LocalLlamaServer(log_dir=tmp_path_factory.mktemp("llama")) as server:
        yield server.base_url


@pytest.fixture(scope="module")
def backend():
    """An OpenAI-compatible chat backend (tests/fake_openai.py), one per test module."""
    from tests.fake_openai import FakeOpenAI

    with FakeOpenAI(reply="It is the one in your hand now.") as server:
        yield server


@pytest.fixture(scope="module")
def server_url(backend):
    """A streaming server in-process with `backend` behind it, one per test module."""
    from streaming.app import ServerSettings
    from streaming.local_server import running_server

    with running_server(ServerSettings(backend_base_url=backend.base_url)) as url:
        yield url


@pytest.fixture
def gemini_env(monkeypatch, tmp_path):
    """`start(**options)`: a Gemini Live conformance server (tests/fake_realtime.py), with the
    test key set and its self-signed certificate trusted by the SDK."""
    from tests.fake_realtime import TEST_KEY, FakeGeminiLive

    def start(**options):
        server = FakeGeminiLive(tmp_path, **options)
        monkeypatch.setenv("GEMINI_API_KEY", TEST_KEY)
        monkeypatch.setenv("SSL_CERT_FILE", str(server.cert))
        return server
    return start
