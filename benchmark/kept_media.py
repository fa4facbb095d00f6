"""What the assistant saw and heard on each stream turn, kept in the run dir for the viewer.

`StreamConversation` hands each turn over with the frames it sent as small
JPEGs (`FrameFacts.pictures`, 160 px on the longer side) and the audio the
glasses played (`GlassesFacts.speech_audio`, PCM16 mono 16 kHz). The runner
gives the finished record to `MediaKeeper.keep`, which writes them into the
run dir (through `core.safe_files`: a temp file renamed into place,
never through a link) and records their names:

- `RUN_DIR/frames/CONDITION/CELL/turnN-T.jpg`, T the frame's stream time in
  ms (`FrameFacts.thumbnails`); at most `MAX_FRAMES` per run dir;
- `RUN_DIR/audio/CONDITION/CELL-turnN-glasses.wav`, beside the spoken
  replies (`GlassesFacts.speech_file`); at most `MAX_SPEECH` per run dir.

CELL is the scenario id, the trial and the sweep's axes, plus a short hash
of the whole cell so no two cells share a name. The caps count what the run
dir holds already, so a resumed run keeps to them too; past a cap the
record simply names no file, and so does it after a write failed (a warning
says so once). `wearsim bench --no-frames` keeps no frames.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
import wave
from dataclasses import replace
from pathlib import Path

from core.records import TrialRecord
from core.safe_files import UnsafePathError, make_dirs, write_atomic

FRAMES_DIR = "frames"
AUDIO_DIR = "audio"
MAX_FRAMES = 3000  # thumbnails per run dir (about 5 KB each)
MAX_SPEECH = 400  # turns' speech WAVs per run dir (about 150 KB each)
SPEECH_RATE = 16000  # the glasses' audio: PCM16 mono
SPEECH_SUFFIX = "-glasses.wav"


def _file_name(name: str) -> str:
    """A bank's id or condition name as a file name, never a path."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "_"


def cell_stem(record: TrialRecord) -> str:
    """The cell as a file name: readable, and unique by a hash of the whole cell."""
    axes = "".join(f"-{_file_name(str(axis).replace(':', '-'))}" for axis in record.cell[3:])
    digest = hashlib.sha256(json.dumps(list(record.cell)).encode()).hexdigest()[:8]
    return f"{_file_name(record.scenario_id)}-t{record.trial}{axes}-{digest}"


def wav_bytes(pcm16: bytes, rate: int = SPEECH_RATE) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm16)
    return buffer.getvalue()


class MediaKeeper:
    """Writes a run's kept frames and speech, up to the caps (counted from what the dir holds)."""

    def __init__(self, run_dir: Path, *, keep_frames: bool = True):
        self.run_dir = Path(run_dir)
        self.keep_frames = keep_frames
        frames, audio = self.run_dir / FRAMES_DIR, self.run_dir / AUDIO_DIR
        self.frames = sum(1 for _ in frames.rglob("*.jpg")) if frames.is_dir() else 0
        self.speech = sum(1 for _ in audio.rglob(f"*{SPEECH_SUFFIX}")) if audio.is_dir() else 0

    def keep(self, record: TrialRecord) -> TrialRecord:
        """The record with its turns' pictures and speech written and named (and dropped from memory)."""
        stem, condition = cell_stem(record), _file_name(record.condition)
        turns = []
        for turn in record.turns:
            frames, glasses = turn.frames, turn.glasses
            kept = []
            if self.keep_frames:
                for t_ms, jpeg in frames.pictures:
                    if self.frames >= MAX_FRAMES:
                        break
                    name = Path(FRAMES_DIR) / condition / stem / f"turn{turn.turn}-{t_ms}.jpg"
                    if self._write(name, jpeg):
                        self.frames += 1
                        kept.append((t_ms, name.as_posix()))
            speech_file = glasses.speech_file
            if glasses.speech_audio and self.speech < MAX_SPEECH:
                name = Path(AUDIO_DIR) / condition / f"{stem}-turn{turn.turn}{SPEECH_SUFFIX}"
                if self._write(name, wav_bytes(glasses.speech_audio)):
                    self.speech += 1
                    speech_file = name.as_posix()
            turns.append(
                replace(
                    turn,
                    frames=replace(frames, thumbnails=tuple(kept) or frames.thumbnails, pictures=()),
                    glasses=replace(glasses, speech_file=speech_file, speech_audio=b""),
                )
            )
        record = record.replace(turns=tuple(turns))
        if record.watching is not None and record.watching.pictures:
            kept = []
            for t_ms, jpeg in record.watching.pictures if self.keep_frames else ():
                if self.frames >= MAX_FRAMES:
                    break
                name = Path(FRAMES_DIR) / condition / stem / f"watch-{t_ms}.jpg"
                if self._write(name, jpeg):
                    self.frames += 1
                    kept.append((t_ms, name.as_posix()))
            record = record.replace(watching=record.watching.replace(thumbnails=tuple(kept), pictures=()))
        return record

    def _write(self, name: Path, data: bytes) -> bool:
        """Write one file; a failure (a full disk, a link in the way) says so once and keeps nothing more:
        the media are for looking at, the trial records are what the run is for."""
        path = self.run_dir / name
        try:
            make_dirs(path.parent, self.run_dir)
            write_atomic(path, data, self.run_dir)
            return True
        except (OSError, UnsafePathError) as exc:
            print(
                f"warning: cannot keep {path}: {getattr(exc, 'strerror', None) or exc}; no more frames or "
                "speech are kept in this run (the trial records are)",
                file=sys.stderr,
            )
            self.frames, self.speech = MAX_FRAMES, MAX_SPEECH
            return False
