"""Media of a scenario as the glasses would capture it: speech audio and
frames, from `media/<scenario_id>/` when there, else nothing (the caller falls
back to TTS for speech and to the declared authored camera text for frames).
"""

from __future__ import annotations

from pathlib import Path

import cv2

MEDIA_ROOT = Path(__file__).resolve().parent.parent / "media"
VIDEO = (".mp4", ".webm", ".mov")
STILL = (".jpg", ".jpeg", ".png")
FPS = 5


def sources(media_root: Path, scenario_id: str, name: str, suffixes: tuple[str, ...]) -> list[Path]:
    """Every file that could serve this turn (e.g. a shipped still and an imported video), newest first."""
    found = [p for suffix in suffixes if (p := Path(media_root) / scenario_id / f"{name}{suffix}").exists()]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def find(media_root: Path, scenario_id: str, name: str, suffixes: tuple[str, ...]) -> Path | None:
    """The turn's file: the newest one when there are several (`media verify` warns about that)."""
    found = sources(media_root, scenario_id, name, suffixes)
    return found[0] if found else None


def load_frames(path: Path, *, fps: int = FPS, max_seconds: float = 20.0) -> list[bytes]:
    """JPEG frames: one for a still, `fps` per second for a video."""
    from media_effects.frames import encode_jpeg

    if path.suffix.lower() in STILL:
        image = cv2.imread(str(path))
        if image is None:
            raise ValueError(f"{path}: unreadable image")
        return [encode_jpeg(image)]
    capture = cv2.VideoCapture(str(path))
    if not capture.isOpened():
        raise ValueError(f"{path}: unreadable video")
    source_fps = capture.get(cv2.CAP_PROP_FPS) or 25.0
    step = max(1, round(source_fps / fps))
    frames: list[bytes] = []
    index = 0
    while len(frames) < fps * max_seconds:
        ok, image = capture.read()
        if not ok:
            break
        if index % step == 0:
            frames.append(encode_jpeg(image))
        index += 1
    capture.release()
    if not frames:
        raise ValueError(f"{path}: no frames decoded")
    return frames


def turn_frames(media_root: Path, scenario_id: str, name: str) -> list[bytes] | None:
    path = find(media_root, scenario_id, name, STILL + VIDEO)
    return load_frames(path) if path else None


def frame_source(media_root: Path, scenario_id: str, name: str) -> str:
    """Where a turn's frame file came from: "pictograph" when `media synth --pictograph-frames`
    drew it (the index says so), else "recording"."""
    import json

    path = find(media_root, scenario_id, name, STILL + VIDEO)
    try:
        index = json.loads((Path(media_root) / "index.json").read_text(encoding="utf-8"))
        entry = index["files"].get(f"{scenario_id}/{path.name}") if path else None
    except (OSError, ValueError, KeyError, AttributeError, TypeError):
        entry = None
    return "pictograph" if isinstance(entry, dict) and entry.get("source") == "pictograph" else "recording"


def turn_speech(media_root: Path, scenario_id: str, name: str) -> Path | None:
    return find(media_root, scenario_id, name, (".wav",))
