"""Reading a run dir's own files, which may come from someone else: only what a real run writes.

Each kind of file has a cap far above what a run writes, and is read by
`core.safe_files.read_bounded` (a regular file inside the run dir, no hard
link, its size checked on the open file before a byte is read, its first
bytes checked where the format has a header). A JSON file over its cap, or
not valid JSON, stops the reader with one line naming the file; findings.md,
a plot or a frame that is refused is left out of the page and named there.
One page inlines at most `MAX_INLINE_IMAGES` images and `MAX_INLINE_BYTES`
of them in all (`InlineBudget`): 40 sparse plots each just under the plot
cap once made a 448 MB page and a 1.39 GB peak.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from core.safe_files import JPEG, PNG, RunFileRefused, read_bounded, read_run_file

# a real run's manifest is tens of KB, its summary a few hundred KB, findings.md tens of KB, a plot 30-300 KB
MAX_MANIFEST_BYTES = 8 << 20
MAX_SUMMARY_BYTES = 32 << 20
MAX_FINDINGS_BYTES = 4 << 20
MAX_PLOT_BYTES = 8 << 20
MAX_FRAME_BYTES = 4 << 20  # a scenario frame of the media library (640x480 JPEG: about 50 KB)
# one page's images in all (plots, then frames); a real run's page: about 10 plots and 210 frames, 15 MB
MAX_INLINE_IMAGES = 400
MAX_INLINE_BYTES = 32 << 20
IMAGE_HEADERS = {".jpg": ("image/jpeg", JPEG), ".jpeg": ("image/jpeg", JPEG), ".png": ("image/png", PNG)}


def read_json_file(path: Path, root: Path, cap: int, what: str) -> dict:
    """A JSON object file of the run dir `root`; `RunFileRefused` or `ValueError` naming the file."""
    data = read_run_file(path, root, cap, what)
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}") from None
    except (RecursionError, ValueError) as exc:  # nested past the parser's depth, or a number too long
        raise ValueError(f"{path}: cannot be read as JSON ({type(exc).__name__}: {str(exc)[:120]})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return value


def read_findings(path: Path, root: Path) -> tuple[str, str | None]:
    """findings.md to show in a page ("" when there is none), or ("", "PATH: why it is refused")."""
    if not path.exists() and not path.is_symlink():
        return "", None
    data, refused = read_bounded(path, root, MAX_FINDINGS_BYTES, "findings.md")
    if refused is not None or data is None:
        return "", f"{path}: {refused}"
    return data.decode("utf-8", errors="replace"), None


class InlineBudget:
    """What one page may still inline: a count of images and their bytes, for all of them together."""

    def __init__(self) -> None:
        self.count, self.bytes = MAX_INLINE_IMAGES, MAX_INLINE_BYTES
        self.limits = (MAX_INLINE_IMAGES, MAX_INLINE_BYTES)

    def refusal(self, size: int) -> str | None:
        images, total = self.limits
        if self.count <= 0:
            return f"past the {images} images one page inlines"
        if size > self.bytes:
            return (
                f"{size / 2**20:.1f} MB, past what is left ({max(self.bytes, 0) / 2**20:.1f} MB) of the "
                f"{total / 2**20:.0f} MB of images one page inlines in all"
            )
        return None

    def take(self, size: int) -> None:
        self.count -= 1
        self.bytes -= size


def image_data_uri(
    path: Path, root: Path, cap: int, what: str, budget: InlineBudget | None = None
) -> tuple[str | None, str | None]:
    """A PNG or JPEG of the tree `root` as a data URI, or (None, "PATH: why it is refused"); with a
    `budget`, one the page still has room for (its size checked before a byte is read)."""
    mime, header = IMAGE_HEADERS.get(path.suffix.lower(), (None, None))
    if mime is None:
        return None, f"{path}: not a .png or .jpg"
    if budget is not None:
        try:
            size = path.lstat().st_size
        except OSError:
            size = 0  # read_bounded says why it cannot be read
        if size <= cap:  # over it, read_bounded names the file's own cap
            if (why := budget.refusal(size)) is not None:
                return None, f"{path}: {why}"
            cap = min(cap, max(budget.bytes, 0))
    data, refused = read_bounded(path, root, cap, what, header)
    if refused is not None or data is None:
        return None, f"{path}: {refused}"
    if budget is not None:
        budget.take(len(data))
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}", None


__all__ = [
    "MAX_FINDINGS_BYTES",
    "MAX_FRAME_BYTES",
    "MAX_INLINE_BYTES",
    "MAX_INLINE_IMAGES",
    "MAX_MANIFEST_BYTES",
    "MAX_PLOT_BYTES",
    "MAX_SUMMARY_BYTES",
    "InlineBudget",
    "RunFileRefused",
    "image_data_uri",
    "read_findings",
    "read_json_file",
]
