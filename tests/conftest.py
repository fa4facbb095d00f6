"""Shared test rules. Under CI=true a skipped test fails: a missing install
step must not hide behind a skip.

The suite runs under pytest-xdist (`-n 2 --dist loadgroup` in pyproject's
addopts). Every server a test starts takes a free loopback port and every
file goes under its worker's own tmp_path, so tests need no coordination,
with two exceptions handled here:

- the tests that use `local_llama_url` share one xdist group, so one worker
  starts the llama.cpp server and they take turns on it (a second request
  would queue behind the first and break their timing);
- a test marked `alone` (it loads the CPU on purpose, or races against the
  clock) runs while no other test of the run does: it takes a lock every
  other test holds shared.
"""

from __future__ import annotations

import fcntl
import os

import pytest

# llama.cpp and CTranslate2 use OpenMP, whose idle threads spin by default: with
# more busy threads than the 2 cores, the spinning starved the threads doing the
# work (the local-model judge test took 2.5x as long next to other work).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


# what a test needs that makes it slow; a test with none of these is `quick` (`pytest -m quick`)
HEAVY = {
    "browser": "drives a headless Chromium",
    "llama": "runs the bundled model on a llama.cpp server",
    "whisper": "runs the Whisper model",
    "clock": "waits on a real clock (paced streams, timeouts)",
    "slow": "computes for more than a second or so (whole runs, many frames)",
}


def pytest_configure(config):
    config.addinivalue_line("markers", "alone: runs while no other test of an xdist run does")
    for name, why in HEAVY.items():
        config.addinivalue_line("markers", f"{name}: {why}")
    config.addinivalue_line("markers", "quick: needs none of " + ", ".join(HEAVY) + " (given by tests/conftest.py)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "local_llama_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("local_llama"))
            item.add_marker(pytest.mark.llama)
        if not any(item.get_closest_marker(name) for name in HEAVY):
            item.add_marker(pytest.mark.quick)


_LOCK_FILES: tuple | None = None


def _lock_files(config):
    """(gate, lock): two files in the folder the run's workers share (each has its own basetemp in it)."""
    global _LOCK_FILES
    if _LOCK_FILES is None:
        root = config._tmp_path_factory.getbasetemp().parent  # what `tmp_path_factory` gives tests
        _LOCK_FILES = open(root / "alone.gate", "a"), open(root / "alone.lock", "a")
    return _LOCK_FILES


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Under xdist, an `alone` test holds the run's lock exclusively, any other test shared.
    The gate keeps tests from starting while an `alone` test waits for the others to end."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    gate, lock = _lock_files(item.config)
    fcntl.flock(gate, fcntl.LOCK_EX)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX if item.get_closest_marker("alone") else fcntl.LOCK_SH)
    finally:
        fcntl.flock(gate, fcntl.LOCK_UN)
    try:
        yield
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)


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
    from candidates.local import LocalLlamaServer

    with LocalLlamaServer(log_dir=tmp_path_factory.mktemp("llama"), threads=1) as server:  # the fastest for 135M
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
    from streaming.local_server import running_server
    from streaming.server_settings import ServerSettings

    with running_server(ServerSettings(backend_base_url=backend.base_url)) as url:
        yield url


@pytest.fixture
def gemini_env(monkeypatch, tmp_path):
    """`start(**options)`: a Gemini Live conformance server (tests/fake_gemini_live.py), with the
    test key set and its self-signed certificate trusted by the SDK."""
    from tests.fake_gemini_live import FakeGeminiLive
    from tests.fake_realtime import TEST_KEY

    def start(**options):
        server = FakeGeminiLive(tmp_path, **options)
        monkeypatch.setenv("GEMINI_API_KEY", TEST_KEY)
        monkeypatch.setenv("SSL_CERT_FILE", str(server.cert))
        return server

    return start


@pytest.fixture
def serve_without_listening(monkeypatch):
    """`wearsim serve ARGS` run to the point of starting uvicorn, which is replaced (and its port
    bound as a free one): returns (serve(argv) -> exit status, the uvicorn configs it was given)."""
    import argparse

    from benchmark.cli import serve

    seen = []

    class Server:
        def __init__(self, config):
            seen.append(config)

        def run(self, sockets=()):
            for sock in sockets:
                sock.close()

    monkeypatch.setattr("uvicorn.Server", Server)
    # the port named is not bound (parallel workers, or a real server, may hold it): a free one stands in
    real_bind = serve.bind_port
    monkeypatch.setattr(serve, "bind_port", lambda host, port: real_bind(host, 0))
    parser = argparse.ArgumentParser()
    serve.register(parser.add_subparsers())
    return (lambda argv: serve.run(parser.parse_args(["serve", *argv]))), seen
