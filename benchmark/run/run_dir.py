"""A run dir locked and checked before anything is written to it (`open_run_dir`), so a run that cannot
start leaves nothing behind; `PreparedRun.start()` cuts a torn last line and writes the manifest.

A last line cut short (a kill, a full disk) is truncated on resume with a warning; an invalid line before
it refuses the resume, naming file and line."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmark.run.errors import RunDirError
from benchmark.run.lock import RunDirLock
from benchmark.run.manifest import resume_differences, write_manifest
from benchmark.run.outputs import LOCK_NAME, MANIFEST, RUN_OUTPUTS, TRANSCRIPTS
from benchmark.scoring.trials import TornTail, scan_transcripts
from core.safe_files import UnsafePathError, refuse_links


@dataclass(kw_only=True)
class PreparedRun:
    """A locked, checked run dir; `start()` writes to it, `close()` unlocks it."""

    run_dir: Path
    manifest: dict
    done: set
    lock: RunDirLock
    torn_tail: TornTail | None = None
    resuming: bool = False

    def start(self) -> None:
        """The run can start: cut a torn last line, write the manifest."""
        transcripts = self.run_dir / TRANSCRIPTS
        if self.torn_tail is not None:
            with transcripts.open("rb+") as handle:
                handle.truncate(self.torn_tail.offset)
                handle.flush()
                os.fsync(handle.fileno())
            print(f"warning: {self.torn_tail.describe()}; removed it, that cell runs again", file=sys.stderr)
            self.torn_tail = None
        if self.resuming:
            print(f"resuming the run in {self.run_dir} (same bank, model and settings)", file=sys.stderr)
        write_manifest(self.run_dir / MANIFEST, self.manifest)

    def close(self) -> None:
        self.lock.release()


def open_run_dir(run_dir: Path, manifest: dict, resume: bool = False) -> PreparedRun:
    """Lock the run dir and check it can take this run, writing nothing: a
    manifest of another run (any RESUME_KEYS differing), transcripts without
    a manifest, or an invalid line before the last one is refused. A torn
    last line is noted; `PreparedRun.start()` truncates it."""
    run_dir = Path(run_dir)
    _refuse_a_folder_that_is_no_run(run_dir)  # before the lock: a refused folder gets nothing written
    lock = RunDirLock(run_dir).acquire()
    try:
        return _check_run_dir(run_dir, dict(manifest), lock)
    except BaseException:
        lock.release()
        raise


def _refuse_a_folder_that_is_no_run(run_dir: Path) -> None:
    """`RunDirError` when `run_dir` is a folder holding anything (besides our lock file) but no run:
    no manifest.json, or one that is not a wearsim manifest (no `benchmark_version`). A run never
    writes into someone's folder, so its files are never overwritten."""
    from benchmark.report import REPORT_OUTPUTS

    if run_dir.is_symlink() or not run_dir.is_dir():
        return  # a link or a file: the lock says why it cannot be a run dir
    try:
        refuse_links(run_dir, (*RUN_OUTPUTS, *REPORT_OUTPUTS))
    except UnsafePathError as exc:
        raise RunDirError(str(exc)) from None
    held = sorted(entry.name for entry in run_dir.iterdir() if entry.name != LOCK_NAME)
    if not held:
        return
    refusal = (
        f"{run_dir} is not empty and holds no wearsim run ({', '.join(held[:3])}{', ...' if len(held) > 3 else ''}"
    )
    if MANIFEST not in held:
        raise RunDirError(f"{refusal}, no manifest.json); choose a new or empty --output-dir (nothing was written)")
    old = _read_old_manifest(run_dir)
    if "benchmark_version" not in old:
        raise RunDirError(
            f"{refusal}: its manifest.json is not a wearsim run's); choose a new or empty --output-dir "
            "(nothing was written)"
        )


def _read_old_manifest(run_dir: Path) -> dict:
    """The run dir's manifest.json, read as a regular file under the size a manifest can have; a
    `RunDirError` naming the file otherwise."""
    from benchmark.report import read_manifest

    try:
        return read_manifest(run_dir)
    except ValueError as exc:
        raise RunDirError(f"{exc}; choose another --output-dir (nothing was written)") from None


def _check_run_dir(run_dir: Path, manifest: dict, lock: RunDirLock) -> PreparedRun:
    from benchmark.report import REPORT_OUTPUTS

    try:
        refuse_links(run_dir, (*RUN_OUTPUTS, *REPORT_OUTPUTS))
    except UnsafePathError as exc:
        raise RunDirError(str(exc)) from None
    manifest_path = run_dir / MANIFEST
    transcripts = run_dir / TRANSCRIPTS
    has_trials = transcripts.exists() and transcripts.stat().st_size > 0
    old = None
    if manifest_path.exists() or manifest_path.is_symlink():
        old = _read_old_manifest(run_dir)
        differing = resume_differences(old, manifest)
        if differing:
            raise RunDirError(
                f"{run_dir} holds a run made with different {', '.join(differing)}; rerun with the same "
                "settings or choose another --output-dir (nothing was changed)"
            )
        manifest["timestamp_utc"] = old.get("timestamp_utc", manifest["timestamp_utc"])
    elif has_trials:
        raise RunDirError(f"{run_dir} has transcripts.jsonl but no manifest.json; choose another --output-dir")
    done: set = set()
    torn = None
    if has_trials:
        scanned = scan_transcripts(transcripts)
        if scanned.problems:
            more = f" (and {len(scanned.problems) - 1} more)" if len(scanned.problems) > 1 else ""
            raise RunDirError(
                f"cannot resume: {scanned.problems[0]}{more}; fix or delete that line, or choose another --output-dir"
            )
        torn = scanned.torn_tail
        done = {(r.condition, r.scenario_id, r.trial, r.sweep) for r in scanned.records if not r.errored}
    return PreparedRun(
        run_dir=run_dir,
        manifest=manifest,
        done=done,
        lock=lock,
        torn_tail=torn,
        resuming=old is not None and has_trials,
    )
