"""Memory a closed session freed, handed back to the system.

A session with large camera frames allocates tens of megabytes per frame in
worker threads (a 4096x2160 frame is 26.5 MB decoded), and glibc keeps what
is freed there: it raises its mmap threshold after each large block freed
(up to 32 MB), so the next frames come from its per-thread arenas, which
keep their pages. After such sessions closed the idle server held over
300 MB more than before them (docs/performance.md, "Memory after large
frames"). Two glibc calls, through ctypes, each a no-op where the C library
lacks it (not glibc):

- `fix_mmap_threshold()` (at server start): blocks of `MMAP_THRESHOLD`
  (4 MiB) or more are always mapped apart, and unmapped when freed;
- `Trimmer` asks `malloc_trim(0)`, which returns the free pages of every
  arena, once sessions have closed: `delay_s` after the latest close (so the
  frame steps a closing session left in threads finish first), one trim for
  several closes, in a worker thread.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging

log = logging.getLogger("wearsim.server")


def _malloc_trim():
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
    except OSError:
        return None
    trim = getattr(libc, "malloc_trim", None)
    if trim is not None:
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


MALLOC_TRIM = _malloc_trim()
M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter; setting it also stops the threshold from moving
MMAP_THRESHOLD = 4 * 2**20


def fix_mmap_threshold(size: int = MMAP_THRESHOLD) -> bool:
    """Blocks of `size` bytes or more mapped apart and returned when freed, for the whole process;
    False where the C library has no `mallopt` of glibc's kind."""
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    if MALLOC_TRIM is None:  # not glibc: its mallopt numbers may mean something else
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, size) == 1


def trim() -> bool:
    """Return the C heap's free pages to the system; False where that cannot be asked."""
    if MALLOC_TRIM is None:
        return False
    MALLOC_TRIM(0)
    return True


class Trimmer:
    """One trim `delay_s` after the latest session closed (a later close moves it)."""

    def __init__(self, delay_s: float = 1.0):
        self.delay_s = delay_s
        self.trims = 0
        self._pending: asyncio.Task | None = None

    def session_closed(self) -> None:
        if MALLOC_TRIM is None:
            return
        if self._pending is not None and not self._pending.done():
            self._pending.cancel()
        self._pending = asyncio.get_running_loop().create_task(self._later(), name="malloc-trim")

    async def _later(self) -> None:
        await asyncio.sleep(self.delay_s)
        try:
            if await asyncio.to_thread(trim):
                self.trims += 1
        except Exception as exc:  # never a reason for a session or the server to fail
            log.warning("returning freed memory failed: %r", exc)

    def cancel(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
