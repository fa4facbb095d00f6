"""Audio decoding: any file PyAV reads (wav, mp3, m4a, webm, mp4 audio
tracks) to float32 mono 16 kHz, and PCM16 bytes to float."""

from __future__ import annotations

from pathlib import Path

import numpy as np

SAMPLE_RATE = 16000


class MediaLimit(ValueError):
    """A file over a limit the caller set (`decode_audio(max_seconds=)`, `media_library.probe_recording`)."""


def pcm16_to_float(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0


def float_to_pcm16(audio: np.ndarray) -> bytes:
    return (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()


def resample_pcm16(data: bytes, from_rate: int, to_rate: int) -> bytes:
    """PCM16 mono at another sample rate (linear interpolation; enough for speech
    sent to an API that wants 24 kHz)."""
    if from_rate == to_rate or not data:
        return data
    samples = pcm16_to_float(data)
    count = int(round(len(samples) * to_rate / from_rate))
    positions = np.arange(count) * (from_rate / to_rate)
    return float_to_pcm16(np.interp(positions, np.arange(len(samples)), samples).astype(np.float32))


def decode_audio(path: str | Path, *, max_seconds: float | None = None) -> np.ndarray:
    """The first audio track of a file, resampled to 16 kHz mono float32. With `max_seconds`, a
    track that turns out longer (counted as it is decoded) raises `ValueError` (a `MediaLimit`)."""
    import av

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        container = av.open(str(path))
    except av.error.FFmpegError as exc:
        raise ValueError(f"{path}: cannot be decoded as audio ({exc})") from None
    with container:
        if not container.streams.audio:
            raise ValueError(f"{path}: has no audio track")
        resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
        pieces = []
        samples = 0
        for frame in container.decode(audio=0):
            if max_seconds is not None and frame.sample_rate and samples / SAMPLE_RATE > max_seconds:
                raise MediaLimit(
                    f"{path.name}: over {max_seconds:.0f} s of audio; a recording may be at most {max_seconds:.0f} s"
                )
            for out in resampler.resample(frame):
                pieces.append(out.to_ndarray().reshape(-1))
                samples += len(pieces[-1])
        for out in resampler.resample(None):
            pieces.append(out.to_ndarray().reshape(-1))
    if not pieces:
        return np.zeros(0, dtype=np.float32)
    return np.concatenate(pieces).astype(np.float32) / 32768.0


def write_wav(path: Path, pcm16: bytes, rate: int, *, root: Path | None = None) -> None:
    """PCM16 mono bytes as a WAV file: written whole to a temp file beside it, then renamed
    over it (`core.safe_files`: never through a link, nor into a folder that leads out of `root`)."""
    import wave

    from core.safe_files import atomic_file, make_dirs

    make_dirs(path.parent, root)
    with atomic_file(path, root) as handle, wave.open(handle, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm16)
