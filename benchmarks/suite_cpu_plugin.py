"""A pytest plugin for benchmarks/suite_cpu.py: each test's wall time and the CPU its worker and the
processes it waited for used while it ran, one JSON line a test, appended to $SUITE_CPU_OUT."""

from __future__ import annotations

import json
import os
import resource
import time

import pytest


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, started = _cpu(), time.monotonic()
    yield
    line = {
        "test": item.nodeid,
        "cpu_s": round(_cpu() - cpu, 2),
        "wall_s": round(time.monotonic() - started, 2),
        "worker": os.environ.get("PYTEST_XDIST_WORKER"),
    }
    with open(os.environ["SUITE_CPU_OUT"], "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
