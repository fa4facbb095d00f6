"""Progress in a log: on a terminal the line is redrawn in place; anywhere else (`bench ... > log.txt`,
a CI log) one plain line per tenth of the cells or per 30 s, whichever comes first, with the same facts."""

from __future__ import annotations

import io

from core.judge import Verdict
from core.records import TrialRecord


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def record(index: int) -> TrialRecord:
    return TrialRecord(
        scenario_id=f"sc-{index:02d}",
        condition="baseline",
        trial=0,
        target_context="current",
        cue_type="object_in_hand",
        turn_2_judge=Verdict(label="current", rationale="names the right object", judge="lexical"),
    )


def play(stream, cells: int, seconds: float, clock: Clock, *, slow_start_s: float = 0.0):
    """`cells` cells over `seconds` (after a `slow_start_s` wait for the first), ticked once a second as
    the runner ticks the line."""
    from benchmark.run.progress import Progress

    progress = Progress(cells, stream=stream, clock=clock)
    finish = [slow_start_s + (i + 1) * seconds / cells for i in range(cells)]
    elapsed = 0.0
    while finish:
        elapsed += 0.25
        clock.now += 0.25
        while finish and finish[0] <= elapsed:
            finish.pop(0)
            progress.update(record(cells - len(finish)))
        if elapsed % 1.0 == 0:
            progress.tick()
    progress.close()
    return progress


def test_a_redirected_main_job_writes_at_most_15_plain_lines():
    for seconds, slow_start in ((112, 0), (112, 25), (150, 40), (40, 0)):
        out = io.StringIO()
        play(out, 50, seconds, Clock(), slow_start_s=slow_start)
        lines = out.getvalue().splitlines()
        assert "\r" not in out.getvalue()
        assert 10 <= len(lines) <= 15, (seconds, slow_start, lines)
        assert lines[-1].startswith("cells 50/50 ") and "pass 50 miss 0 unscored 0 error 0" in lines[-1]
        assert "requests 0 in flight, 0 waiting" in lines[-1] and "eta 0s" in lines[-1]


def test_a_log_gets_a_line_after_30_quiet_seconds_with_no_eta_before_a_cell_finished():
    from benchmark.run.progress import Progress

    out, clock = io.StringIO(), Clock()
    progress = Progress(50, stream=out, clock=clock)
    for _ in range(29):
        clock.now += 1
        progress.tick()
    assert out.getvalue() == ""  # a tick a second writes nothing in a log until 30 s have passed
    clock.now += 1
    progress.tick()
    assert (
        out.getvalue() == "cells 0/50 after 30s  last -  pass 0 miss 0 unscored 0 error 0  "
        "requests 0 in flight, 0 waiting  eta ?\n"
    )


def test_a_terminal_still_gets_the_bar_redrawn_in_place():
    out, clock = Terminal(), Clock()
    play(out, 10, 20, clock)
    text = out.getvalue()
    assert text.count("\r") >= 20 and text.endswith("\n") and text.count("\n") == 1
    assert "[########################] 10/10 sc-10 baseline" in text


def test_media_synth_progress_in_a_log_is_plain_lines(tmp_path, capsys):
    from benchmark.cli.media import _Shown

    shown = _Shown("speech")
    for done in range(1, 201):
        shown(done, 200, tmp_path / "sc-01" / "turn_1.wav")
    shown.pace.close()
    err = capsys.readouterr().err
    assert "\r" not in err and len(err.splitlines()) == 10 and err.splitlines()[-1] == "speech 200/200 sc-01/turn_1.wav"


def test_rescore_progress_in_a_log_is_plain_lines(capsys):
    from benchmark.cli.rescore import _Progress

    progress = _Progress()
    for n in range(1, 301):
        progress(f"rescored {n}/300: sc-01 [baseline] trial {n} -> current")
    progress.close()
    err = capsys.readouterr().err
    assert "\r" not in err and len(err.splitlines()) == 10
    assert err.splitlines()[-1] == "rescored 300/300: sc-01 [baseline] trial 300 -> current"
