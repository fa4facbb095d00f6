"""`RunDirLock`: one process writes a run dir at a time (flock on `RUN_DIR/.lock`)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from benchmark.run.errors import RunDirBusy, RunDirError
from benchmark.run.outputs import LOCK_NAME


class RunDirLock:
    """An exclusive lock on a run dir (flock on RUN_DIR/.lock), so two
    `wearsim bench` processes never write one run dir at once. The lock file
    holds the owner's pid and is removed on release; a run dir this lock
    created is removed again if nothing else was written to it."""

    def __init__(self, run_dir: Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_NAME
        self.created_dir = False
        self._fd: int | None = None

    def acquire(self) -> RunDirLock:
        import fcntl

        self.created_dir = not self.run_dir.exists()
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunDirError(
                f"cannot create the run dir {self.run_dir}: {exc.strerror}; choose another --output-dir"
            ) from None
        while True:
            try:  # never through a link: a downloaded run dir's .lock -> ~/.bashrc would be truncated
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
                raise RunDirError(
                    f"{self.path}: is a symbolic link; refusing a run dir whose outputs are links "
                    "(remove the link, or choose another --output-dir)"
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
                os.close(fd)
                who = f" (pid {holder})" if holder.isdigit() else ""
                raise RunDirBusy(
                    f"{self.run_dir} is in use by another wearsim bench{who}; wait for it to finish "
                    "or choose another --output-dir"
                ) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # its owner removed the file as we opened it: take the new one
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None
        if self.created_dir:
            try:
                self.run_dir.rmdir()  # only when empty: nothing was written
            except OSError:
                pass
