"""Runs inside the embedded llama.cpp server's process (`local.py`'s boot), never in ours.

A llama.cpp context holds one conversation: the tokens it evaluated last.
llama-cpp-python keeps the longest prefix a new prompt shares with them and
evaluates the rest, so when a server answers another session in between
(another user, a proactive probe), the next turn evaluates its whole
conversation again: 1.8 s for 580 tokens of the bundled model on one thread.

`install` wraps `Llama.generate` (one call per completion, made under the
server's lock) with a `Memory`: before a prompt that would throw away what the
context holds, the context's state is copied aside (about 24 KB a token of the
bundled model: 8 ms for 580 tokens); when a copy shares a longer prefix with a
prompt than the context does, it is put back (4 ms) and only the rest is
evaluated. The replies are the same as with the conversation never evicted.
Copies are kept most recently used first, within `BUDGET_BYTES` per server
(the server's environment may set another, `BUDGET_VARIABLE`; 0 is the plain
server), the oldest dropped before a new one is made.

Each copy is an anonymous mapping of its own, unmapped when the copy is
dropped or put back, so the budget holds for the process's RSS too. Copies
in malloc'd ctypes buffers (glibc serves them from the heap once a freed one
has raised its mmap threshold) left their freed blocks in the heap: 110
distinct conversations of 1,024 tokens took the server 483 MB past the plain
one with 249 MB of copies counted (docs/performance.md, "The state memory's
RSS (issue 57 row 17)").
This file imports nothing of ours: the boot loads it by its path.
"""

from __future__ import annotations

import ctypes
import functools
import mmap
import os
from collections import OrderedDict

import numpy as np

KEEP_FROM_TOKENS = 128  # a shorter context is evaluated again about as fast as it is put back
SLACK_TOKENS = 16  # a continuation may differ in its last few tokens (a reply's end, retokenised)
BUDGET_BYTES = 256 * 1024 * 1024  # the copies one server keeps
# the server's environment may set another budget in bytes, 0 for none: the memory is then not installed
BUDGET_VARIABLE = "WEARSIM_LLAMA_MEMORY_BYTES"


def budget_from(environ) -> int:
    """The budget `environ` sets (`BUDGET_VARIABLE`), else `BUDGET_BYTES`; a value that is not a whole
    number of bytes is refused at the server's start rather than read as something else."""
    value = environ.get(BUDGET_VARIABLE, "").strip()
    if not value:
        return BUDGET_BYTES
    if not value.isdigit():
        raise ValueError(f"{BUDGET_VARIABLE}={value!r}: a whole number of bytes (0 turns the state memory off)")
    return int(value)


def shared(a: np.ndarray, b: np.ndarray) -> int:
    """The length of the prefix two token arrays share."""
    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


class Memory:
    """The conversations one context held, copied aside: (tokens, state, bytes), least recently kept first."""

    def __init__(self, llama_cpp, budget: int = BUDGET_BYTES):
        self.api, self.budget = llama_cpp, budget
        self.kept: OrderedDict[int, tuple[np.ndarray, mmap.mmap, int]] = OrderedDict()
        self.used = 0
        self._next = 0
        self.working = True

    def before(self, llama, prompt: np.ndarray) -> None:
        """Called with the context as the last completion left it, before `prompt` is evaluated."""
        held = llama.input_ids[: llama.n_tokens].copy()
        now = shared(held, prompt)
        if len(held) >= KEEP_FROM_TOKENS and now < len(held) - SLACK_TOKENS:
            self._keep(llama, held)
        best = max(self.kept, key=lambda key: shared(self.kept[key][0], prompt), default=None)
        if best is not None and shared(self.kept[best][0], prompt) > now + SLACK_TOKENS:
            self._put_back(llama, best)

    def _keep(self, llama, held: np.ndarray) -> None:
        """A copy of the context's state, which holds the tokens `held`. A copy whose tokens begin
        another's is not kept beside it: the longer serves every prompt the shorter did."""
        if any(shared(tokens, held) == len(held) for tokens, _, _ in self.kept.values()):
            return
        for key in [k for k, (tokens, _, _) in self.kept.items() if shared(tokens, held) == len(tokens)]:
            self._drop(key)
        size = self.api.llama_state_get_size(llama._ctx.ctx)
        if size > self.budget:
            return
        while self.kept and self.used + size > self.budget:  # room first: the copies never exceed the budget
            self._drop(next(iter(self.kept)))
        state = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)  # anonymous: its pages go back to the OS at close
        try:
            size = self._call(self.api.llama_state_get_data, llama, state, size)
        except BaseException:
            state.close()
            raise
        self.kept[self._next] = (held, state, size)
        self._next += 1
        self.used += size
        print(
            f"wearsim: kept {len(held)} tokens aside ({size} bytes); {len(self.kept)} copies, {self.used} bytes "
            f"of {self.budget}",
            flush=True,
        )

    def _put_back(self, llama, key: int) -> None:
        tokens, state, size = self.kept.pop(key)  # the context holds it now; it is copied again if thrown away
        self.used -= size
        try:
            done = self._call(self.api.llama_state_set_data, llama, state, size)
        finally:
            state.close()
        if done != size:
            llama.reset()  # the context is unknown now: the prompt is evaluated from the start
            return
        llama.input_ids[: len(tokens)] = tokens
        llama.n_tokens = len(tokens)
        llama._requires_eval = True  # the last token is evaluated again, so its logits are fresh

    @staticmethod
    def _call(function, llama, state: mmap.mmap, size: int) -> int:
        """`function(ctx, state, size)`, the mapping seen as a C array only during the call: a mapping
        with a view on it could not be closed."""
        view = (ctypes.c_uint8 * len(state)).from_buffer(state)
        try:
            return function(llama._ctx.ctx, view, size)
        finally:
            del view

    def _drop(self, key: int) -> None:
        _, state, size = self.kept.pop(key)
        state.close()  # unmapped now, not left to the collector or kept by malloc for later
        self.used -= size


def install(llama_class, llama_cpp, environ=os.environ) -> bool:
    """Wrap `llama_class.generate`; False (nothing changed) when the calls it needs are not there. With a
    budget of 0 in `environ` nothing is wrapped: the plain server, said in its log."""
    budget = budget_from(environ)
    if budget == 0:
        print(f"wearsim: the state memory is off ({BUDGET_VARIABLE}=0)", flush=True)
        return True
    generate = getattr(llama_class, "generate", None)
    needed = ("llama_state_get_size", "llama_state_get_data", "llama_state_set_data")
    if generate is None or getattr(generate, "wearsim_memory", False) or not all(hasattr(llama_cpp, n) for n in needed):
        return False

    @functools.wraps(generate)
    def remembering_generate(self, tokens, *args, **kwargs):
        memory = self.__dict__.get("_wearsim_memory")
        if memory is None:
            memory = self._wearsim_memory = Memory(llama_cpp, budget)
        if kwargs.get("reset", True) and memory.working:  # reset=False continues the context as it is
            try:
                memory.before(self, np.asarray(tokens, dtype=np.intc))
            except Exception as exc:  # never fail a reply for its sake: the prompt is evaluated instead
                memory.working = False
                self.reset()
                print(f"wearsim: keeping conversations aside failed ({exc!r}); it is off for this server", flush=True)
        return (yield from generate(self, tokens, *args, **kwargs))

    remembering_generate.__dict__["wearsim_memory"] = True  # a mark `install` checks before wrapping again
    llama_class.generate = remembering_generate
    return True
