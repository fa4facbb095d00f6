"""Writers outside a run dir's own files: the response cache, the describer
cache, `wearsim simulate --log`, and the log files of the in-process
streaming server and the embedded llama.cpp server. Each writes as the run
dir's files are written (`core.safe_files`), so a name in its folder
that is a link to a file elsewhere is refused, never written through, and
the file it points at is left as it was."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from candidates.cache import CACHE_FILE, CachedCandidate, ResponseCache
from candidates.local import LocalLlamaServer
from core.candidate import GenerationConfig, Message, Reply
from core.safe_files import UnsafePathError
from perception.describers import DiskCache, ModelDescriber
from streaming.local_server import running_server
from tests.paths import ROOT

PRECIOUS = "export PATH=$HOME/bin:$PATH  # the user's own file\n"


@pytest.fixture
def victim(tmp_path) -> Path:
    """A file of the user's, outside every folder written here (think ~/.bashrc)."""
    path = tmp_path / "home" / ".bashrc"
    path.parent.mkdir()
    path.write_text(PRECIOUS)
    return path


def untouched(victim: Path) -> bool:
    return victim.read_text() == PRECIOUS


class Echo:
    model_id, family = "openai:echo", "openai"

    async def respond(self, messages, system, config, on_delta=None):
        return Reply(text=f"echo: {messages[-1].text}", model=self.model_id)


@pytest.mark.parametrize("name", [CACHE_FILE, CACHE_FILE + "-wal", CACHE_FILE + "-shm", CACHE_FILE + "-journal"])
def test_the_response_cache_refuses_a_store_or_journal_that_is_a_link(tmp_path, victim, name):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / name).symlink_to(victim)
    cache = ResponseCache(folder)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        cache.check()
    cached = CachedCandidate(Echo(), cache)
    with pytest.raises(UnsafePathError, match=name):
        asyncio.run(cached.respond([Message(role="user", text="hi")], "", GenerationConfig()))
    assert untouched(victim) and (folder / name).is_symlink()


def test_the_response_cache_still_works_in_a_plain_folder(tmp_path):
    cache = ResponseCache(tmp_path / "new" / "cache")  # made on first use
    cached = CachedCandidate(Echo(), cache)
    first = asyncio.run(cached.respond([Message(role="user", text="hi")], "", GenerationConfig()))
    again = asyncio.run(cached.respond([Message(role="user", text="hi")], "", GenerationConfig()))
    assert again.cached and again.text == first.text and (tmp_path / "new" / "cache" / CACHE_FILE).is_file()
    cache.close()


def test_bench_refuses_a_cache_folder_whose_store_is_a_link_before_writing_anything(tmp_path, victim):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / CACHE_FILE).symlink_to(victim)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--model",
            "local",
            "--limit",
            "1",
            "--judge-family",
            "lexical",
            "--cache",
            "--cache-dir",
            str(folder),
            "--output-dir",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ},
    )
    assert done.returncode == 2, done.stderr
    assert "symbolic link" in done.stderr and CACHE_FILE in done.stderr and "nothing was written" in done.stderr
    assert not (tmp_path / "run").exists() and untouched(victim)


def test_the_describer_cache_writes_by_rename_and_refuses_an_entry_or_folder_that_is_a_link(tmp_path, victim):
    cache = DiskCache(tmp_path / "cache")
    key = cache.key(b"\xff\xd8jpeg", "openai", "gpt-x", "rules")
    cache.put(key, "a red mug on a desk")
    assert cache.get(key) == "a red mug on a desk"
    assert [p.name for p in cache.directory.iterdir()] == [f"{key}.json"]  # no temp file left behind
    other = cache.key(b"\xff\xd8other", "openai", "gpt-x", "rules")
    (cache.directory / f"{other}.tmp").symlink_to(victim)  # the fixed temp name it once wrote through
    (cache.directory / f"{other}.json").symlink_to(victim)
    assert cache.get(other) is None  # a link is a miss, never read
    with pytest.raises(UnsafePathError, match="symbolic link"):
        cache.put(other, "written through the link")
    assert untouched(victim)
    # the describe folder itself leading out of the cache folder
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = DiskCache(tmp_path / "cache2")
    moved.root.mkdir()
    moved.directory.symlink_to(elsewhere)
    with pytest.raises(UnsafePathError, match="leads out of"):
        moved.put(key, "text")
    assert list(elsewhere.iterdir()) == []


def test_a_model_describer_refuses_to_cache_through_a_link(tmp_path, victim):
    class Vision(Echo):
        async def respond(self, messages, system, config, on_delta=None):
            return Reply(text="a red mug", model=self.model_id)

    describer = ModelDescriber(Vision(), cache_dir=tmp_path / "cache")
    key = describer.cache.key(b"\xff\xd8jpeg", describer.name, describer.model, describer.style)
    describer.cache.directory.mkdir(parents=True)
    (describer.cache.directory / f"{key}.json").symlink_to(victim)
    with pytest.raises(UnsafePathError):
        asyncio.run(describer.describe(b"\xff\xd8jpeg"))
    assert untouched(victim)


def test_simulate_refuses_a_log_that_is_a_link_before_the_session(tmp_path, victim):
    log = tmp_path / "session.json"
    log.symlink_to(victim)
    done = subprocess.run(
        [sys.executable, "-m", "benchmark", "simulate", "sc-01", "--fast", "--log", str(log)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 2, done.stderr
    assert "--log" in done.stderr and "symbolic link" in done.stderr and "nothing was run" in done.stderr
    assert "starting the streaming server" not in done.stderr and untouched(victim)
    wav = tmp_path / "other-turn2.wav"  # a spoken reply's file beside the log
    wav.symlink_to(victim)
    done = subprocess.run(
        [sys.executable, "-m", "benchmark", "simulate", "sc-01", "--fast", "--log", str(tmp_path / "other.json")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 2 and "other-turn2.wav" in done.stderr and untouched(victim)


def test_the_server_logs_refuse_a_log_file_that_is_a_link(tmp_path, victim):
    logs = tmp_path / "run" / "logs"
    logs.mkdir(parents=True)
    (logs / "server.log").symlink_to(victim)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        with running_server(log_path=logs / "server.log"):
            pass
    (logs / "llama_server.log").symlink_to(victim)
    (tmp_path / "model.gguf").write_bytes(b"GGUF")  # never loaded: the log is refused first
    server = LocalLlamaServer(tmp_path / "model.gguf", log_dir=logs)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        server.start()  # refused before any process is started
    assert server.process is None and untouched(victim)
