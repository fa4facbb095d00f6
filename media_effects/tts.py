"""Scripted speech with espeak-ng: text in, 16 kHz mono PCM16 WAV out."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path


def synthesize(
    text: str, path: Path, *, voice: str = "en-us", rate: int = 150, root: Path | None = None, markup: bool = False
) -> Path:
    """Speak `text` into a 16 kHz mono WAV at `path` (inside `root`, never through a link). With
    `markup` the text is SSML to espeak-ng (`-m`), e.g. a pause inside a line: `<break time="600ms"/>`."""
    if shutil.which("espeak-ng") is None:
        raise RuntimeError("espeak-ng is not installed (scripts/setup.sh installs it)")
    from media_effects.audio import decode_audio, float_to_pcm16

    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.wav"
        subprocess.run(
            ["espeak-ng", *(["-m"] if markup else []), "-v", voice, "-s", str(rate), "-w", str(raw), "--", text],
            check=True,
            capture_output=True,
        )
        write_wav(path, float_to_pcm16(decode_audio(raw)), root=root)
    return path


def write_wav(path: Path, pcm16: bytes, rate: int = 16000, *, root: Path | None = None) -> None:
    """16 kHz mono PCM16 as a WAV: `media_effects.audio.write_wav` (temp file renamed, never through a link)."""
    from media_effects.audio import write_wav as write

    write(Path(path), pcm16, rate, root=root)
