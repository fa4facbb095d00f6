"""Reports: summary.json, findings.md and plots/ of a run dir."""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
from pathlib import Path

from benchmark.report.findings import render_findings
from core.safe_files import make_dirs, refuse_links, write_atomic

# what a report writes into a run dir (the viewer's index.html too): none of them may be a link
REPORT_OUTPUTS = ("summary.json", "findings.md", "plots", "index.html")


def read_manifest(directory: Path) -> dict:
    """The run dir's manifest.json ({} when there is none); a ValueError naming the file when it is
    over `MAX_MANIFEST_BYTES`, a link out, or not a JSON object."""
    from benchmark.report.run_files import MAX_MANIFEST_BYTES, read_json_file

    path = directory / "manifest.json"
    if not path.exists() and not path.is_symlink():
        return {}
    return read_json_file(path, directory, MAX_MANIFEST_BYTES, "manifest")


def write_report(run_dir: Path, *, transcripts: Path | None = None, output_dir: Path | None = None) -> dict:
    """Score a run and write summary.json, findings.md and plots/; return summary.json as written (its
    readers take it as `RunSummary.from_json(summary)`).

    `run_dir` holds transcripts.jsonl and manifest.json. With `transcripts`
    given (a file from any implementation of the benchmark), that file is read
    instead and the manifest is taken from `run_dir` when it has one.
    Outputs go to `output_dir` (default `run_dir`).

    When `start_worker(run_dir)` started a worker for this run dir, the worker
    writes the report; if it fails, the report is written here.
    """
    worker = _WORKERS.pop(Path(run_dir).resolve(), None) if transcripts is None and output_dir is None else None
    if worker is not None:
        summary = worker.finish()
        if summary is not None:
            return summary
    return _write_report(run_dir, transcripts=transcripts, output_dir=output_dir)


def _write_report(run_dir: Path, *, transcripts: Path | None = None, output_dir: Path | None = None) -> dict:
    from benchmark.cost.budget import read_budget
    from benchmark.report.human_check import read_human_check
    from benchmark.report.plots import draw_plots
    from benchmark.report.proactive_findings import is_proactive
    from benchmark.scoring import build_summary, load_trials
    from benchmark.scoring.summary_view import RunSummary

    run_dir = Path(run_dir)
    source = Path(transcripts) if transcripts is not None else run_dir / "transcripts.jsonl"
    trial_set = load_trials(source)
    manifest = read_manifest(run_dir) if run_dir.is_dir() else {}
    if not manifest:
        manifest = {"source_transcripts": str(source)}
    summary = build_summary(trial_set, manifest, read_budget(run_dir) if run_dir.is_dir() else None)
    # the judge checked against people (wearsim agreement): on Turn 2, or on a proactive run's remarks
    what = "remarks" if is_proactive(RunSummary.from_json(summary)) else "turn2"
    summary["human_check"] = read_human_check(run_dir, what)
    out = Path(output_dir) if output_dir is not None else run_dir
    out.mkdir(parents=True, exist_ok=True)
    refuse_links(out, REPORT_OUTPUTS)
    written = json.dumps(summary, indent=2) + "\n"
    write_atomic(out / "summary.json", written, out)
    run = RunSummary.from_json(json.loads(written))  # the findings and plots read summary.json as written
    write_atomic(out / "findings.md", render_findings(run), out)
    draw_plots(run, make_dirs(out / "plots", out))
    return summary


# ---- the report worker: the report's imports done while the cells run -------

_WORKERS: dict[Path, ReportWorker] = {}


def start_worker(run_dir: Path) -> None:
    """Start the process that will write `run_dir`'s report when `write_report(run_dir)` is called.

    `wearsim bench` calls this as its cells start: the worker imports numpy,
    Pillow and the scoring (about 0.2 s of CPU) and draws a throwaway chart
    (fonts, PNG writer) while the cells wait on the model, instead of after
    the last one. A worker never asked is stopped when this process exits.
    """
    key = Path(run_dir).resolve()
    if key not in _WORKERS:
        _WORKERS[key] = ReportWorker(Path(run_dir))


@atexit.register
def _stop_workers() -> None:
    while _WORKERS:
        _WORKERS.popitem()[1].stop()


class ReportWorker:
    """`_write_report` of one run dir in a child process started ahead of time.

    A child process, not a thread: two threads importing at once can deadlock
    on Python's module locks. The child reads one request line on stdin and
    answers with one JSON line on stdout: the summary, and what it printed on
    stderr (load_trials' warnings), which the parent prints on its own stderr.
    If it fails, its error is not shown: `write_report` then writes the report
    itself and raises what the child would have.
    """

    def __init__(self, run_dir: Path):
        import benchmark

        self.run_dir = run_dir  # as given: the child has our working directory, so its messages name the same paths
        root = str(Path(benchmark.__file__).resolve().parents[1])  # first on its path: the same `benchmark` as ours
        code = "import sys; sys.path.insert(0, sys.argv[1]); from benchmark.report import _serve; _serve()"
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")  # numpy's import starts no idle BLAS threads (half its CPU)
        # its own session: a Ctrl-C meant for `wearsim bench` does not print a traceback from the worker
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, root],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )

    def finish(self) -> dict | None:
        """Ask for the report and wait for it: the summary, or None when the worker failed."""
        request = json.dumps({"run_dir": str(self.run_dir)}).encode() + b"\n"
        try:
            out, _ = self.process.communicate(request)
        except OSError:  # it died before reading the request
            self.process.wait()
            return None
        try:
            reply = json.loads(out.splitlines()[-1]) if self.process.returncode == 0 else None
        except (IndexError, ValueError):
            reply = None
        if reply is None:
            return None
        sys.stderr.write(reply["stderr"])
        return reply["summary"]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def _serve() -> None:
    """The worker's side (`python -c`): load what the report needs, then write the one report asked for."""
    import io

    from benchmark import stats
    from benchmark.report.chart import warm_up

    warm_up()
    stats.bootstrap_balanced_accuracy(
        [stats.ScenarioCounts(scenario_id="warm-up", passes=(1,), totals=(1,))], draws=10
    )  # numpy's first calls
    line = sys.stdin.readline()
    if not line:  # the parent exited without asking
        return
    run_dir = Path(json.loads(line)["run_dir"])
    sys.stderr = io.StringIO()
    summary = _write_report(run_dir)
    sys.stdout.write(json.dumps({"summary": summary, "stderr": sys.stderr.getvalue()}) + "\n")
    sys.stdout.flush()
    os._exit(0)  # the report is on disk: skip tearing down numpy and Pillow (the parent waits for the exit)


__all__ = ["render_findings", "write_report", "read_manifest", "start_worker"]
