"""The media library under `media/`: synthesize speech, import recordings,
verify the index.

`media/index.json` maps each file (relative path) to its sha256, duration in
seconds (stills: 0), kind (speech, still, video) and source (`recorded` or
`synthesized`), plus a note on how it was made.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from benchmark.scenario import Bank
from simulator.media import MEDIA_ROOT, STILL, VIDEO

SPEECH_TURNS = {"turn_1": "turn_1_user", "turn_2": "turn_2_user", "turn_3_repair": "turn_3_repair_anchor"}
FRAME_TURNS = ("context", "turn_1", "turn_2")


def index_path(root: Path) -> Path:
    return Path(root) / "index.json"


def load_index(root: Path) -> dict:
    path = index_path(root)
    if not path.exists():
        return {"files": {}}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}") from None


def save_index(root: Path, index: dict) -> None:
    index["files"] = dict(sorted(index["files"].items()))
    path = index_path(root)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def duration_s(path: Path) -> float:
    path = Path(path)
    if path.suffix.lower() in STILL:
        return 0.0
    if path.suffix.lower() == ".wav":
        import wave

        with wave.open(str(path)) as wav:
            return round(wav.getnframes() / wav.getframerate(), 3)
    import cv2

    capture = cv2.VideoCapture(str(path))
    frames, fps = capture.get(cv2.CAP_PROP_FRAME_COUNT), capture.get(cv2.CAP_PROP_FPS) or 0
    capture.release()
    return round(frames / fps, 3) if fps else 0.0


def register(root: Path, path: Path, source: str, note: str) -> dict:
    kind = "speech" if path.suffix == ".wav" else "still" if path.suffix.lower() in STILL else "video"
    entry = {"sha256": sha256(path), "duration_s": duration_s(path), "kind": kind, "source": source, "note": note}
    index = load_index(root)
    index["files"][path.relative_to(root).as_posix()] = entry
    save_index(root, index)
    return entry


def synth_bank(bank: Bank, root: Path = MEDIA_ROOT, *, voice: str = "en-us", rate: int = 150,
               overwrite: bool = False, progress=None) -> int:
    """Speech WAVs for every scenario turn (and the named repair anchor)."""
    from simulator.tts import synthesize

    index = load_index(root)
    made = 0
    jobs = [(s, name, field) for s in bank.scenarios for name, field in SPEECH_TURNS.items()]
    for done, (scenario, name, field) in enumerate(jobs, start=1):
        path = Path(root) / scenario.scenario_id / f"{name}.wav"
        if path.exists() and not overwrite:
            continue
        existing = index["files"].get(path.relative_to(root).as_posix())
        if existing and existing["source"] == "recorded" and not overwrite:
            continue
        synthesize(getattr(scenario, field), path, voice=voice, rate=rate)
        index["files"][path.relative_to(root).as_posix()] = {
            "sha256": sha256(path), "duration_s": duration_s(path), "kind": "speech", "source": "synthesized",
            "note": f"espeak-ng voice {voice} rate {rate} from {field}"}
        made += 1
        if progress:
            progress(done, len(jobs), path)
    save_index(root, index)
    return made


def import_recording(root: Path, scenario_id: str, turn: str, source: Path, *, start: float | None = None,
                     end: float | None = None) -> list[Path]:
    """Copy a real recording into the layout, trimmed; a video's audio track becomes the turn's WAV."""
    from perception.audio import SAMPLE_RATE, decode_audio, float_to_pcm16
    from simulator.tts import write_wav

    source = Path(source)
    if not source.exists():
        raise FileNotFoundError(f"{source}: no such file")
    if turn not in set(SPEECH_TURNS) | set(FRAME_TURNS):
        raise ValueError(f"turn must be one of {', '.join(sorted(set(SPEECH_TURNS) | set(FRAME_TURNS)))}")
    if (start is not None and start < 0) or (end is not None and end <= (start or 0)):
        raise ValueError(f"--start {start} / --end {end}: the end must come after the start, both at or after 0 s")
    suffix = source.suffix.lower()
    audio = None
    if suffix in VIDEO + (".wav", ".mp3", ".m4a", ".ogg", ".flac") and turn in SPEECH_TURNS:
        try:
            audio = decode_audio(source)
        except ValueError:
            audio = None  # a video without an audio track
        if audio is not None:
            a = int((start or 0) * SAMPLE_RATE)
            b = int(end * SAMPLE_RATE) if end is not None else len(audio)
            audio = audio[a:b]
            if not len(audio):
                raise ValueError(f"{source}: no audio samples{' in that window' if start or end else ''}")
    folder = Path(root) / scenario_id
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    note = f"imported from {source.name}" + (f" [{start}, {end}] s" if start is not None or end is not None else "")
    if suffix in STILL:
        target = folder / f"{turn}{suffix}"
        shutil.copyfile(source, target)
        written.append(target)
    elif suffix in VIDEO:
        target = folder / f"{turn}.mp4"
        _trim_video(source, target, start, end)
        written.append(target)
    if audio is not None:
        target = folder / f"{turn}.wav"
        write_wav(target, float_to_pcm16(audio))
        written.append(target)
    if not written:
        raise ValueError(f"{source}: nothing to import for {turn} (need an image, a video or audio)")
    for path in written:
        register(root, path, "recorded", note)
    return written


def _trim_video(source: Path, target: Path, start: float | None, end: float | None) -> None:
    import cv2

    capture = cv2.VideoCapture(str(source))
    if not capture.isOpened():
        raise ValueError(f"{source}: unreadable video")
    fps = capture.get(cv2.CAP_PROP_FPS) or 25.0
    width, height = int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)), int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT))
    writer = cv2.VideoWriter(str(target), cv2.VideoWriter_fourcc(*"mp4v"), fps, (width, height))
    index = 0
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        t = index / fps
        index += 1
        if (start is None or t >= start) and (end is None or t <= end):
            writer.write(frame)
    capture.release()
    writer.release()


def two_sources(root: Path = MEDIA_ROOT) -> list[str]:
    """Warnings: turns with more than one frame source (e.g. a shipped still and an
    imported video); the simulator uses the newest."""
    from simulator.media import STILL, VIDEO, sources

    warnings = []
    for folder in sorted(Path(root).glob("*-*")):
        if not folder.is_dir():
            continue
        for name in FRAME_TURNS:
            found = sources(root, folder.name, name, STILL + VIDEO)
            if len(found) > 1:
                warnings.append(f"{folder.name}/{name}: {len(found)} sources ({', '.join(p.name for p in found)}); "
                                f"the newest, {found[0].name}, is used")
    return warnings


def verify(root: Path = MEDIA_ROOT) -> list[str]:
    """Problems: hash mismatches, unreadable files, files missing from disk or from the index."""
    problems = []
    index = load_index(root)
    for relative, entry in index["files"].items():
        path = Path(root) / relative
        if not path.exists():
            problems.append(f"{relative}: in the index but missing on disk")
            continue
        if sha256(path) != entry.get("sha256"):
            problems.append(f"{relative}: sha256 differs from the index")
        try:
            if path.suffix == ".wav":
                from perception.audio import decode_audio

                decode_audio(path)
            else:
                from simulator.media import load_frames

                load_frames(path, max_seconds=1)
        except (ValueError, OSError) as exc:
            problems.append(f"{relative}: unreadable ({exc})")
    on_disk = {p.relative_to(root).as_posix() for p in Path(root).glob("*-*/*") if p.is_file()}
    for relative in sorted(on_disk - set(index["files"])):
        problems.append(f"{relative}: on disk but not in the index")
    return problems
