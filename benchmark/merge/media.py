"""What `wearsim merge` copies of a shard's kept media: only what a kept frame or WAV can be.

A shard's dir may come from someone else, and a record names its files. A
file is copied only when it is a regular file inside the shard (no link out,
no hard link: a second name may be a file from anywhere on that machine),
under the size a kept file can have (a 160 px thumbnail is about 5 KB; a WAV
of speech or a spoken reply a few MB), and starts as its kind does (JPEG:
FF D8 FF; WAV: RIFF....WAVE). The size is read from the open file and at
most the cap is read, so a sparse giant or a file that grows while it is
read is refused, never copied. Each refusal is a reason, which merge names.
"""

from __future__ import annotations

from pathlib import Path

from core.safe_files import make_dirs, read_bounded, write_atomic

MAX_FRAME_BYTES = 1 << 20  # a kept thumbnail (160 px JPEG) is about 5 KB
MAX_WAV_BYTES = 32 << 20  # about 11 minutes of a 24 kHz PCM16 mono reply, 17 of the glasses' 16 kHz speech
MAX_LOG_BYTES = 64 << 20  # a response-cache log: a short JSON line per cell
KINDS = {
    ".jpg": ("JPEG", MAX_FRAME_BYTES),
    ".jpeg": ("JPEG", MAX_FRAME_BYTES),
    ".wav": ("WAV", MAX_WAV_BYTES),
    ".jsonl": ("cache log", MAX_LOG_BYTES),
}


def _header_ok(kind: str, head: bytes) -> bool:
    if kind == "JPEG":
        return head[:3] == b"\xff\xd8\xff"
    if kind == "cache log":
        return not head or head[:1] == b"{"
    return head[:4] == b"RIFF" and head[8:12] == b"WAVE"


def read_kept(origin: Path, root: Path) -> tuple[bytes | None, str | None]:
    """The bytes of a kept frame or WAV at `origin` inside the shard `root`, or (None, why it is refused)."""
    kind, cap = KINDS.get(origin.suffix.lower(), (None, 0))
    if kind is None:
        return None, "not a .jpg, .wav or cache log"
    return read_bounded(origin, root, cap, f"kept {kind}", (kind, lambda head: _header_ok(kind, head)))


def copy_kept(origin: Path, root: Path, target: Path, out: Path) -> str | None:
    """Copy a kept file from the shard `root` to `target` in the merged dir `out`; None, or why not."""
    data, refused = read_kept(origin, root)
    if refused:
        return refused
    if data is None:  # (read_kept gives the bytes, or why they are refused)
        raise RuntimeError(f"{origin}: read neither its bytes nor why not")
    make_dirs(target.parent, out)
    write_atomic(target, data, out)
    return None


__all__ = ["MAX_FRAME_BYTES", "MAX_LOG_BYTES", "MAX_WAV_BYTES", "copy_kept", "read_kept"]
