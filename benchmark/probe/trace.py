"""What `wearsim probe` prints and writes, with no secret and no media in it.

A probe talks to a paid API with a real key, and its trace is meant to be
attached to a bug report. One redaction pass (`Redactor`) covers everything
the probe prints or writes:

- every media payload is replaced by its size, whatever its length: bytes,
  and strings under a media field (`audio`, `data`, `image_url`, an audio
  delta event's `delta`), plus any long unbroken base64-looking string;
- the key, and any run of 8 or more of its characters in any case, is
  replaced wherever it appears: in a value or a property name, in one field,
  or spelled across fields and messages (a provider that echoes the key in
  3-character transcript deltas, in 4-character pieces taking turns between
  a transcript delta and a text delta, in pieces over the fields of one
  event), since the strings at each place, under each field name, all the
  values and all the property names are each read in order as one text,
  and every 8-character piece of a key is looked for in it;
- a provider's error text, and every line printed on stdout or stderr, goes
  through the same pass (in any case) before it is printed.

The keys are the values of the provider key variables set in the
environment (`candidates.providers`' key variables), read when the redactor is made.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from candidates.providers import key_variables
from core.safe_files import write_atomic

RUN = 8  # a run of this many characters of a key is redacted
HIDDEN = "[redacted]"
PIECE = 6  # a string that is, whole, this many characters or more of a key is redacted wherever it is
NAMES = "(property name)"  # where a property name sits, as `_collect` says it
MEDIA_SIZE = re.compile(r"<[0-9]+ (bytes|characters of [^>]*)>")
SECRET_NAMES = tuple(sorted(key_variables()))
MEDIA_FIELDS = ("audio", "data", "image_url")
BASE64 = re.compile(r"[A-Za-z0-9+/_-]{40,}={0,2}")  # a long unbroken run of base64's characters ...


class Redactor:
    def __init__(self, secrets: Iterable[str]):
        keys = [_folded(s) for s in (k.strip() for k in secrets) if len(s) >= RUN]
        self._keys = keys
        self._pieces = {key[i : i + RUN] for key in keys for i in range(len(key) - RUN + 1)}

    @classmethod
    def from_environment(cls) -> Redactor:
        return cls(os.environ.get(name, "") for name in SECRET_NAMES)

    def _hidden(self, text: str) -> list[bool]:
        """Which characters of `text` belong to a run of a key's characters, in any case."""
        hidden = [False] * len(text)
        if self._pieces:
            folded = _folded(text)
            for i in range(len(folded) - RUN + 1):
                if folded[i : i + RUN] in self._pieces:
                    hidden[i : i + RUN] = [True] * RUN
        return hidden

    def _a_piece(self, text: str) -> bool:
        """Whether `text` is, whole, a piece of a key of at least PIECE characters (a key handed out in
        pieces, each in a field of its own, with other fields between them)."""
        folded = _folded(text)
        return len(folded) >= PIECE and any(folded in key for key in self._keys)

    def text(self, text: str) -> str:
        """A line to print: every run of a key's characters replaced (in any case), and media by its size."""
        shown = _without_base64(text)
        return _joined(shown, self._hidden(shown))

    def messages(self, messages: list) -> list:
        """JSON-ready messages (their media already sizes: `without_media`) with no run of a key's
        characters in any case, in a value or a property name, also where the run is spelled across
        strings. Every string (values and property names) is read alone, and as part of four texts
        made by joining strings in order: the strings at each place (every transcript delta's
        `delta`), under each field name whatever the event (a transcript delta and a text delta
        taking turns), every value of the trace, and every property name; a media size never
        separates two pieces. A string that is, whole, a piece of a key of PIECE characters or more
        is hidden too."""
        shown = list(messages)
        leaves: list[tuple[tuple, str, bool]] = []
        _collect(shown, leaves, ())
        hidden = [[False] * len(text) for _, text, _ in leaves]
        groups: dict[tuple, list[int]] = {}
        for i, (path, text, is_name) in enumerate(leaves):
            groups.setdefault(("path", *path), []).append(i)
            if MEDIA_SIZE.fullmatch(text):
                continue  # a size, never a piece of a key: the pieces on either side are read as one
            groups.setdefault(("name", path[-1] if path else None), []).append(i)
            groups.setdefault(("names",) if is_name else ("values",), []).append(i)
        for i in range(len(leaves)):
            groups[("alone", i)] = [i]
        for indices in groups.values():
            joined = self._hidden("".join(leaves[i][1] for i in indices))
            start = 0
            for i in indices:
                size = len(leaves[i][1])
                hidden[i] = [a or b for a, b in zip(hidden[i], joined[start : start + size])]
                start += size
        redacted = [
            HIDDEN if self._a_piece(text) else _joined(text, hide) for (_, text, _), hide in zip(leaves, hidden)
        ]
        return _replace(shown, iter(redacted))


def _folded(text: str) -> str:
    """`text` in lower case, one character for one (a character whose lower case is longer stays)."""
    return "".join(low if len(low := char.lower()) == 1 else char for char in text)


def _joined(text: str, hidden: list[bool]) -> str:
    """`text` with each run of hidden characters replaced by one marker."""
    out, inside = [], False
    for char, hide in zip(text, hidden):
        if hide and not inside:
            out.append(HIDDEN)
        elif not hide:
            out.append(char)
        inside = hide
    return "".join(out)


def _without_base64(text: str) -> str:
    """... is media when it mixes upper and lower case letters and digits (an event name does not)."""

    def size(match: re.Match) -> str:
        run = match.group()
        mixed = any(c.isupper() for c in run) and any(c.islower() for c in run) and any(c.isdigit() for c in run)
        return f"<{len(run)} characters of base64>" if mixed else run

    return BASE64.sub(size, text)


def _media(value) -> str:
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if value.startswith("data:"):
        return f"<{len(value)} characters of {value[5:].split(';', 1)[0] or 'media'}>"
    return f"<{len(value)} characters of base64>"


def without_media(value, key: str | None = None, audio_delta: bool = False):
    """A JSON-ready copy of a message with every media payload replaced by its size."""
    if isinstance(value, dict):
        delta = str(value.get("type", "")).endswith("audio.delta")
        return {k: without_media(v, k, delta) for k, v in value.items()}
    if isinstance(value, list):
        return [without_media(v, key) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return _media(value)
    if isinstance(value, str):
        if key in MEDIA_FIELDS or (audio_delta and key == "delta"):
            return _media(value)
        return _without_base64(value)
    return value


def _collect(value, leaves: list[tuple[tuple, str, bool]], path: tuple) -> None:
    """Every string in `value`, property names too, in order, with where it is (the field names leading
    to it, and the `type` of each event on the way: a transcript delta and an audio delta are both
    `delta`) and whether it is a property name."""
    if isinstance(value, dict):
        kind = value.get("type") if isinstance(value.get("type"), str) else None
        for k, v in value.items():
            leaves.append(((*path, NAMES), str(k), True))
            _collect(v, leaves, (*path, kind, k) if kind else (*path, k))
    elif isinstance(value, list):
        for v in value:
            _collect(v, leaves, path)
    elif isinstance(value, str):
        leaves.append((path, value, False))


def _replace(value, redacted):
    """`value` with its strings and property names taken in `_collect`'s order from `redacted` (two names
    redacted alike are told apart by a trailing #)."""
    if isinstance(value, dict):
        out: dict = {}
        for v in value.values():
            name = next(redacted)
            while name in out:
                name = f"{name}#"
            out[name] = _replace(v, redacted)
        return out
    if isinstance(value, list):
        return [_replace(v, redacted) for v in value]
    if isinstance(value, str):
        return next(redacted)
    return value


@dataclass(kw_only=True)
class Trace:
    """Every message of the session as (seconds since the start, direction, message), redacted
    when written (`write`): the whole trace at once, so a key spelled across messages is found."""

    redactor: Redactor
    started: float = field(default_factory=time.monotonic)
    lines: list[dict] = field(default_factory=list)

    def __call__(self, direction: str, message: dict) -> None:
        self.lines.append(
            {"t": round(time.monotonic() - self.started, 3), "direction": direction, "message": without_media(message)}
        )

    def write(self, path: Path) -> Path:
        lines = self.redactor.messages(self.lines)
        return write_atomic(path, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))

    def received(self) -> list[tuple[float, str]]:
        """(time, kind) of each message received: an event's type, or a Gemini message's parts."""
        return [(line["t"], kind_of(line["message"])) for line in self.lines if line["direction"] == "received"]


def kind_of(message: dict) -> str:
    if "type" in message:
        return str(message["type"])
    content = message.get("server_content") or {}
    parts = [k for k in message if k != "server_content" and message[k] not in (None, {}, [])]
    return "+".join([*(f"server_content.{k}" for k in content), *parts]) or "(empty)"


def trace_target_problem(path: Path) -> str | None:
    """Why the trace cannot be written at `path` (None: it can), checked before any request is made:
    the folder exists and takes files, and the path is no link and no folder."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_symlink():
        return f"--trace {path}: is a symbolic link; give a new file's path"
    if path.exists() and not path.is_file():
        return f"--trace {path}: is not a regular file"
    if not parent.is_dir():
        return f"--trace {path}: the folder {parent} does not exist"
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"--trace {path}: cannot be written (no permission)"
    return None
