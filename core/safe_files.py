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
- `read_user_file` / `open_user_file`: a file a user names (a `--config`,
  an import) is read only when it is a regular file (a link to one is
  fine; a FIFO, a device or a link to one is refused without blocking),
  its size checked on the open file under a cap before a byte is read.
- `read_bounded` / `read_run_file`: every reader of such a tree reads a
  file only when it is a regular file inside the tree, no hard link, under
  the size a real one can have (read from the open file, and at most that
  much is read, so a sparse giant costs nothing), and starts as its kind
  does. A refusal is one reason naming the size and the cap.

This module imports nothing of ours, so every package may use it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO


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
        raise UnsafePathError(
            f"{path}: is a symbolic link; refusing to write through it (remove the link, or write somewhere else)"
        )
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
            raise UnsafePathError(
                f"{path}: is a symbolic link; refusing a dir whose outputs are links "
                "(remove the link, or write somewhere else)"
            )
        if path.is_dir():
            for entry in sorted(path.iterdir()):
                if entry.is_symlink():
                    raise UnsafePathError(
                        f"{entry}: is a symbolic link; refusing a dir whose outputs are links "
                        "(remove the link, or write somewhere else)"
                    )


def inside(path: Path, root: Path) -> bool:
    """Whether `path` is a regular file whose real path lies in `root` (what a reader may inline)."""
    path = Path(path)
    return path.is_file() and not _escapes(path, root)


class RunFileRefused(ValueError):
    """A file of a tree that is not what a real one can be (`read_run_file`): "PATH: why"."""


def megabytes(size: int) -> str:
    return f"{size / (1 << 20):,.1f} MB"


Header = tuple[str, Callable[[bytes], bool]]  # a file format's name, and whether bytes start as it does

PNG: Header = ("PNG", lambda head: head[:8] == b"\x89PNG\r\n\x1a\n")
JPEG: Header = ("JPEG", lambda head: head[:3] == b"\xff\xd8\xff")


def read_bounded(
    path: Path, root: Path, cap: int, what: str, header: Header | None = None
) -> tuple[bytes | None, str | None]:
    """The bytes of the file `path` inside the tree `root`, or (None, why it is refused): not a regular
    file inside the tree, a hard link (a second name may be a file from anywhere), over `cap` bytes
    (said as its size, and sparse when mostly holes), grown past it while read, or not starting as its
    format does (`header`). `what`: the file as the reader names it ("kept JPEG", "plot")."""
    path = Path(path)
    if not inside(path, root):
        return None, "not a regular file inside the folder (a link out, or missing)"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        return None, f"cannot be opened ({exc.strerror or exc})"
    with os.fdopen(fd, "rb") as handle:
        facts = os.fstat(handle.fileno())
        if not stat.S_ISREG(facts.st_mode):
            return None, "not a regular file"
        if facts.st_nlink > 1:
            return None, f"a hard link ({facts.st_nlink} names): its content may be a file from outside the folder"
        if facts.st_size > cap:
            sparse = facts.st_blocks * 512 < facts.st_size // 2
            return None, (
                f"{megabytes(facts.st_size)}, larger than a {what} can be ({megabytes(cap)})"
                + (", and sparse (mostly holes)" if sparse else "")
            )
        data = handle.read(cap + 1)
    if len(data) > cap:
        return None, f"grew past the size a {what} can be ({megabytes(cap)}) while it was read"
    if header is not None and not header[1](data):
        return None, f"not a {header[0]} (its first bytes are not a {header[0]} header)"
    return data, None


def read_run_file(path: Path, root: Path, cap: int, what: str, header: Header | None = None) -> bytes:
    """`read_bounded`'s bytes, or `RunFileRefused` ("PATH: why") when it refuses the file."""
    data, refused = read_bounded(path, root, cap, what, header)
    if refused is not None:
        raise RunFileRefused(f"{path}: {refused}")
    assert data is not None  # read_bounded gives bytes whenever it refuses nothing
    return data


class UserFileRefused(ValueError):
    """A file a user named that cannot be read as one: "PATH: why"."""


def open_user_file(path: Path, cap: int, what: str) -> BinaryIO:
    """`path` open for reading when it is a regular file of at most `cap` bytes (a FIFO or a device,
    or a link to one, is refused without waiting on it); `UserFileRefused` ("PATH: why") otherwise.
    `what`: the file as the reader names it ("config file", "label export"). Read at most `cap` + 1
    bytes from it: `read_user_file` does, and says when it grew past the cap while read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UserFileRefused(f"{path}: no such file") from None
    except OSError as exc:
        raise UserFileRefused(f"{path}: cannot be opened ({exc.strerror or exc})") from None
    handle = os.fdopen(fd, "rb")
    try:
        facts = os.fstat(fd)
        if not stat.S_ISREG(facts.st_mode):
            kind = "a folder" if stat.S_ISDIR(facts.st_mode) else "a FIFO, a device or a socket"
            raise UserFileRefused(f"{path}: is {kind}, not a regular file; a {what} is a regular file")
        if facts.st_size > cap:
            sparse = facts.st_blocks * 512 < facts.st_size // 2
            raise UserFileRefused(
                f"{path}: {megabytes(facts.st_size)}, larger than a {what} can be ({megabytes(cap)})"
                + (", and sparse (mostly holes)" if sparse else "")
            )
        os.set_blocking(fd, True)
    except BaseException:
        handle.close()
        raise
    return handle


def read_user_file(path: Path, cap: int, what: str) -> bytes:
    """The bytes of the regular file `path`, at most `cap` of them (`open_user_file`)."""
    with open_user_file(path, cap, what) as handle:
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise UserFileRefused(f"{path}: grew past the size a {what} can be ({megabytes(cap)}) while it was read")
    return data
