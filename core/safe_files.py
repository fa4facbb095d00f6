"""Writing into, and reading from, a directory that may come from someone else.

A run dir, a media root or the studio's record dir can be downloaded,
unpacked or shared, so any name in it may be a symbolic link to a file
elsewhere (`findings.md -> ~/.bashrc`). The rules, used by every writer:

- `write_atomic` / `atomic_file`: the content goes to a temp file with a
  unique name in the target's own folder, which is then renamed over the
  target. A rename replaces the directory entry and never follows a link.
  The target is refused when it is a link or not a regular file, and when
  its folder is reached through a link that leads out of `root` (the tree
  being written: the run dir, the media root).
- `open_append`: appends (transcripts.jsonl, logs) open with O_NOFOLLOW, so
  a linked file is refused rather than written.
- `make_dirs`: creates folders under `root`, refusing any that leads out of it.
- `refuse_links`: a tree whose output names are links is refused before
  anything is written.
- `inside`: readers that copy a file's bytes into a page (the run viewer)
  take only regular files whose real path is in the tree.

This module imports nothing of ours, so every package may use it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator


class UnsafePathError(ValueError):
    """A write or read that would go through a link or out of its tree."""


def _escapes(path: Path, root: Path) -> bool:
    """Whether `path`, its links followed, lies outside `root` (links followed too)."""
    return not Path(path).resolve().is_relative_to(Path(root).resolve())


def check_target(path: Path, root: Path | None = None) -> Path:
    """`path` when a file may be written there, else `UnsafePathError`."""
    path = Path(path)
    root = Path(root) if root is not None else path.parent
    if path.is_symlink():
        raise UnsafePathError(f"{path}: is a symbolic link; refusing to write through it "
                              "(remove the link, or write somewhere else)")
    if path.exists() and not path.is_file():
        raise UnsafePathError(f"{path}: exists and is not a regular file; refusing to replace it")
    if _escapes(path.parent, root):
        raise UnsafePathError(f"{path.parent}: leads out of {root} through a symbolic link; refusing to write there")
    return path


def make_dirs(path: Path, root: Path | None = None) -> Path:
    """`mkdir -p path`, refusing a folder that is, or is reached through, a link leading out of `root`."""
    path = Path(path)
    root = Path(root) if root is not None else path
    if path != root and _escapes(path, root):
        raise UnsafePathError(f"{path}: leads out of {root} through a symbolic link; refusing to write there")
    path.mkdir(parents=True, exist_ok=True)
    if path != root and _escapes(path, root):  # a link swapped in while we made it
        raise UnsafePathError(f"{path}: leads out of {root} through a symbolic link; refusing to write there")
    return path


def temp_name(path: Path) -> Path:
    """A unique hidden temp file beside `path` (two writers never share one)."""
    path = Path(path)
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")


@contextlib.contextmanager
def atomic_file(path: Path, root: Path | None = None, *, sync: bool = False) -> Iterator[BinaryIO]:
    """A binary file handle whose content replaces `path` when the block ends
    without an error (nothing is left behind when it raises)."""
    path = check_target(path, root)
    tmp = temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path: Path, data: str | bytes, root: Path | None = None, *, sync: bool = False) -> Path:
    """Write `data` (text as UTF-8) to `path` by temp file and rename; see `atomic_file`."""
    with atomic_file(path, root, sync=sync) as handle:
        handle.write(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(path)


def open_append(path: Path, root: Path | None = None, *, text: bool = False):
    """`path` opened to append (created when missing); a link or a folder out of `root` is refused."""
    path = check_target(path, root)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(f"{path}: is a symbolic link; refusing to write through it") from None
        raise
    return os.fdopen(fd, "a", encoding="utf-8") if text else os.fdopen(fd, "ab")


def refuse_links(root: Path, names: Iterable[str]) -> None:
    """`UnsafePathError` naming the first of `root/name` that is a symbolic link
    (a file a writer would replace, or a folder it would write into), or
    anything in such a folder that is."""
    root = Path(root)
    for name in names:
        path = root / name
        if path.is_symlink():
            raise UnsafePathError(f"{path}: is a symbolic link; refusing a dir whose outputs are links "
                                  "(remove the link, or write somewhere else)")
        if path.is_dir():
            for entry in sorted(path.iterdir()):
                if entry.is_symlink():
                    raise UnsafePathError(f"{entry}: is a symbolic link; refusing a dir whose outputs are links "
                                          "(remove the link, or write somewhere else)")


def inside(path: Path, root: Path) -> bool:
    """Whether `path` is a regular file whose real path lies in `root` (what a reader may inline)."""
    path = Path(path)
    return path.is_file() and not _escapes(path, root)
