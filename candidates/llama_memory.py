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
Copies are kept most recently used first, within `BUDGET_BYTES` per server.
This file imports nothing of ours: the boot loads it by its path.
"""

from __future__ import annotations

import ctypes
import functools
from collections import OrderedDict

import numpy as np

KEEP_FROM_TOKENS = 128  # a shorter context is evaluated again about as fast as it is put back
SLACK_TOKENS = 16  # a continuation may differ in its last few tokens (a reply's end, retokenised)
BUDGET_BYTES = 256 * 1024 * 1024  # the copies one server keeps


def shared(a: np.ndarray, b: np.ndarray) -> int:
    """The length of the prefix two token arrays share."""
    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


class Memory:
    """The conversations one context held, copied aside: (tokens, state, bytes), least recently kept first."""

    def __init__(self, llama_cpp, budget: int = BUDGET_BYTES):
        self.api, self.budget = llama_cpp, budget
        self.kept: OrderedDict[int, tuple[np.ndarray, object, int]] = OrderedDict()
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
        state = (ctypes.c_uint8 * size)()
        size = self.api.llama_state_get_data(llama._ctx.ctx, state, size)
        self.kept[self._next] = (held, state, size)
        self._next += 1
        self.used += size
        while self.used > self.budget:
            self._drop(next(iter(self.kept)))

    def _put_back(self, llama, key: int) -> None:
        tokens, state, size = self.kept[key]
        self._drop(key)  # the context holds it now; it is copied again if it is thrown away
        if self.api.llama_state_set_data(llama._ctx.ctx, state, size) != size:
            llama.reset()  # the context is unknown now: the prompt is evaluated from the start
            return
        llama.input_ids[: len(tokens)] = tokens
        llama.n_tokens = len(tokens)
        llama._requires_eval = True  # the last token is evaluated again, so its logits are fresh

    def _drop(self, key: int) -> None:
        self.used -= self.kept.pop(key)[2]


def install(llama_class, llama_cpp) -> bool:
    """Wrap `llama_class.generate`; False (nothing changed) when the calls it needs are not there."""
    generate = getattr(llama_class, "generate", None)
    needed = ("llama_state_get_size", "llama_state_get_data", "llama_state_set_data")
    if generate is None or getattr(generate, "wearsim_memory", False) or not all(hasattr(llama_cpp, n) for n in needed):
        return False

    @functools.wraps(generate)
    def remembering_generate(self, tokens, *args, **kwargs):
        memory = self.__dict__.get("_wearsim_memory")
        if memory is None:
            memory = self._wearsim_memory = Memory(llama_cpp)
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
