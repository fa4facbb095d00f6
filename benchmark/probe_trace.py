"""What `wearsim probe` prints and writes, with no secret and no media in it.

A probe talks to a paid API with a real key, and its trace is meant to be
attached to a bug report. One redaction pass (`Redactor`) covers everything
the probe prints or writes:

- every media payload is replaced by its size, whatever its length: bytes,
  and strings under a media field (`audio`, `data`, `image_url`, an audio
  delta event's `delta`), plus any long unbroken base64-looking string;
- the key, and any run of 8 or more of its characters, is replaced wherever
  it appears: in one field, or spelled across messages (a provider that
  echoes the key in 3-character transcript deltas), since the strings at
  each place of a message (every transcript delta's `delta`, ...) are read
  in order as one text, and every 8-character piece of a key is looked for
  in it;
- a provider's error text goes through the same pass before it is printed.

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
SECRET_NAMES = tuple(sorted(key_variables()))
MEDIA_FIELDS = ("audio", "data", "image_url")
BASE64 = re.compile(r"[A-Za-z0-9+/_-]{40,}={0,2}")  # a long unbroken run of base64's characters ...


class Redactor:
    def __init__(self, secrets: Iterable[str]):
        keys = [s for s in (k.strip() for k in secrets) if len(s) >= RUN]
        self._pieces = {key[i : i + RUN] for key in keys for i in range(len(key) - RUN + 1)}

    @classmethod
    def from_environment(cls) -> Redactor:
        return cls(os.environ.get(name, "") for name in SECRET_NAMES)

    def _hidden(self, text: str) -> list[bool]:
        """Which characters of `text` belong to a run of a key's characters."""
        hidden = [False] * len(text)
        if self._pieces:
            for i in range(len(text) - RUN + 1):
                if text[i : i + RUN] in self._pieces:
                    hidden[i : i + RUN] = [True] * RUN
        return hidden

    def text(self, text: str) -> str:
        """A line to print: every run of a key's characters replaced, and media by its size."""
        shown = _without_base64(text)
        return _joined(shown, self._hidden(shown))

    def messages(self, messages: list) -> list:
        """JSON-ready messages (their media already sizes: `without_media`) with no run of a key's
        characters, also where the run is spelled across messages: the strings at each place (every
        transcript delta's `delta`, every Gemini transcription's `text`, ...) are read in order as
        one text."""
        shown = list(messages)
        leaves: list[tuple[tuple, str]] = []
        _collect(shown, leaves, ())
        by_field: dict[tuple, list[int]] = {}
        for i, (name, _) in enumerate(leaves):
            by_field.setdefault(name, []).append(i)
        redacted = [text for _, text in leaves]
        for indices in by_field.values():
            hidden = self._hidden("".join(leaves[i][1] for i in indices))
            start = 0
            for i in indices:
                size = len(leaves[i][1])
                redacted[i] = _joined(leaves[i][1], hidden[start : start + size])
                start += size
        return _replace(shown, iter(redacted))


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


def _collect(value, leaves: list[tuple[tuple, str]], path: tuple) -> None:
    """Every string in `value`, in order, with where it is: the field names leading to it, and the
    `type` of each event on the way (a transcript delta and an audio delta are both `delta`)."""
    if isinstance(value, dict):
        kind = value.get("type") if isinstance(value.get("type"), str) else None
        for k, v in value.items():
            _collect(v, leaves, (*path, kind, k) if kind else (*path, k))
    elif isinstance(value, list):
        for v in value:
            _collect(v, leaves, path)
    elif isinstance(value, str):
        leaves.append((path, value))


def _replace(value, redacted):
    if isinstance(value, dict):
        return {k: _replace(v, redacted) for k, v in value.items()}
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
