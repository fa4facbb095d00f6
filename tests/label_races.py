"""Label writers racing in forked processes (issue 57 row 1's tests): each waits on a shared start, saves its
share of the keys and puts on a shared queue how many labels it was answered saved."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from pathlib import Path

from benchmark.labels.store import import_labels, make_label


def import_share(run_dir: str, keys: list[str], known: dict[str, str], start, done) -> None:
    """`labels import` of `keys` for annotator ana, labelled prior, once the race starts."""
    labels = [make_label(key, "prior", "ana", known, "test", time="2026-01-01T00:00:00Z") for key in keys]
    start.wait()
    done.put(import_labels(Path(run_dir), labels, known)["ana"][0])


def race(writers: list[tuple[Callable, tuple]], timeout: float) -> int:
    """Each writer `(target, args)` in a forked process, called as `target(*args, start, done)`; all start at
    once. The labels they were answered saved, in all; every process must end cleanly."""
    ctx = multiprocessing.get_context("fork")
    start, done = ctx.Event(), ctx.Queue()
    workers = [ctx.Process(target=target, args=(*args, start, done)) for target, args in writers]
    for worker in workers:
        worker.start()
    start.set()
    answered = sum(done.get(timeout=timeout) for _ in workers)
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    return answered
