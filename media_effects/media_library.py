"""The media library under `media/`: synthesize speech, import recordings,
verify the index.

`media/index.json` maps each file (relative path) to its sha256, duration in
seconds (stills: 0), kind (speech, still, video) and source (`recorded`,
`synthesized`, or `unknown` for an entry rebuilt from disk), plus a note on
how it was made.

Every change to the index goes through `changing_index(root)`: one writer at
a time (a lock per root within the process, `flock` on the root folder
across processes), the new index written to a uniquely named temp file and
renamed over the old one. An index that cannot be read does not block a
save: it is kept as `index.json.broken`, reported with its line, and rebuilt
from the files on disk (`reindex`, also `wearsim media reindex`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import threading
from pathlib import Path

from core.safe_files import atomic_file, check_target, make_dirs, temp_name, write_atomic
from core.scenario import SAFE_ID, Bank
from media_effects.audio import MediaLimit  # a recording over a step's limits (length, rate, size, frames)
from media_effects.media import MEDIA_ROOT, STILL, VIDEO

# what one recorded step may hold (`import_recording`: `wearsim media import` and the studio's POST /v1/record);
# read from the container's header where it says, and counted while decoding where it does not
MAX_IMPORT_SECONDS = 60.0
MIN_SAMPLE_RATE, MAX_SAMPLE_RATE, MAX_CHANNELS = 8_000, 192_000, 8
MAX_VIDEO_PIXELS = 1920 * 1080
MAX_VIDEO_FRAMES = int(MAX_IMPORT_SECONDS * 30)
# what an imported video is stored as: within 640x480 and at most 10 frames a second (the glasses play 5), so
# a step's stored media (the MPEG-4 video and the 16 kHz WAV) stays under MAX_STORED_BYTES_PER_S of recording
STORED_VIDEO_BOX, STORED_FPS = (640, 480), 10.0
MAX_STORED_BYTES_PER_S = 512 * 1024
# the stored video's rate control: 2.5 Mbit/s (305 KiB/s), with room under the cap for the WAV (31 KiB/s) and for
# the encoder's overshoot on detail it cannot compress (pure noise came to 1.16x its target)
STORED_VIDEO_BIT_RATE = 2_500_000
SPEECH_TURNS = {"turn_1": "turn_1_user", "turn_2": "turn_2_user", "turn_3_repair": "turn_3_repair_anchor"}
FRAME_TURNS = ("context", "turn_1", "turn_2")
log = logging.getLogger("wearsim.media")
_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


class MediaIndexError(ValueError):
    """The index cannot be read: the message names the file and the line."""


def probe_recording(source: Path) -> None:
    """Refuse, from the container's header and without decoding, a recording over a step's limits:
    `MediaLimit` naming the file (its name only) and the limit. What the header does not say
    (a browser's WebM has no duration) is counted while decoding instead."""
    import av

    source = Path(source)
    name = source.name
    try:
        container = av.open(str(source))
    except av.error.FFmpegError:
        return  # not media at all: the decoders below say so, as they always have
    with container:
        seconds = [container.duration / av.time_base] if container.duration else []
        for stream in container.streams.audio:
            rate = stream.codec_context.sample_rate or stream.rate or 0
            channels = stream.codec_context.channels or 0
            if not MIN_SAMPLE_RATE <= rate <= MAX_SAMPLE_RATE:
                raise MediaLimit(
                    f"{name}: audio at {rate} Hz; a recording's sample rate must be "
                    f"{MIN_SAMPLE_RATE}-{MAX_SAMPLE_RATE} Hz"
                )
            if channels > MAX_CHANNELS:
                raise MediaLimit(f"{name}: {channels} audio channels; at most {MAX_CHANNELS}")
            if stream.duration and stream.time_base:
                seconds.append(float(stream.duration * stream.time_base))
        for video in container.streams.video:
            width, height = video.codec_context.width or 0, video.codec_context.height or 0
            if width * height > MAX_VIDEO_PIXELS:
                raise MediaLimit(f"{name}: video of {width}x{height}; at most {MAX_VIDEO_PIXELS:,} pixels (1920x1080)")
            if video.frames and video.frames > MAX_VIDEO_FRAMES:
                raise MediaLimit(f"{name}: {video.frames} video frames; at most {MAX_VIDEO_FRAMES}")
            if video.duration and video.time_base:
                seconds.append(float(video.duration * video.time_base))
    if seconds and max(seconds) > MAX_IMPORT_SECONDS:
        raise MediaLimit(f"{name}: {max(seconds):.0f} s long; a recording may be at most {MAX_IMPORT_SECONDS:.0f} s")


def index_path(root: Path) -> Path:
    return Path(root) / "index.json"


def load_index(root: Path) -> dict:
    """The index of `root` (empty when there is none); `MediaIndexError` naming the file and line when unreadable."""
    path = index_path(root)
    if not path.exists():
        return {"files": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise MediaIndexError(
            f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}; "
            "`wearsim media reindex` rebuilds it from the files on disk"
        ) from None
    except UnicodeDecodeError:
        raise MediaIndexError(
            f"{path}: not UTF-8 text; `wearsim media reindex` rebuilds it from the files on disk"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise MediaIndexError(
            f"{path}: line 1: expected an object with a 'files' object; "
            "`wearsim media reindex` rebuilds it from the files on disk"
        )
    return data


def save_index(root: Path, index: dict) -> None:
    """Write the index (a unique temp file renamed over it); call inside `changing_index`."""
    index["files"] = dict(sorted(index["files"].items()))
    write_atomic(index_path(root), json.dumps(index, indent=2) + "\n", root)


def files_on_disk(root: Path) -> list[Path]:
    """The media files of the layout: `ROOT/<scenario>/<file>`, regular files, not hidden."""
    return sorted(
        p for p in Path(root).glob("*-*/*") if p.is_file() and not p.is_symlink() and not p.name.startswith(".")
    )


def entry_for(path: Path, source: str, note: str) -> dict:
    kind = "speech" if path.suffix == ".wav" else "still" if path.suffix.lower() in STILL else "video"
    return {"sha256": sha256(path), "duration_s": duration_s(path), "kind": kind, "source": source, "note": note}


def rebuilt_index(root: Path, old: dict | None = None) -> dict:
    """An index of the files on disk: entries of `old` whose file still has the recorded hash are
    kept, the others made anew with source `unknown`."""
    kept = (old or {}).get("files", {})
    files = {}
    for path in files_on_disk(root):
        relative = path.relative_to(root).as_posix()
        entry = kept.get(relative)
        if isinstance(entry, dict) and entry.get("sha256") == sha256(path):
            files[relative] = entry
        else:
            files[relative] = entry_for(path, "unknown", "rebuilt from the file on disk (wearsim media reindex)")
    return {"files": files}


@contextlib.contextmanager
def changing_index(root: Path):
    """The index of `root` to change in place; saved when the block ends without an error. One writer at
    a time; an unreadable index is reported, kept as index.json.broken and rebuilt from disk."""
    root = Path(root)
    make_dirs(root)
    with _LOCKS_GUARD:
        lock = _LOCKS.setdefault(root.resolve(), threading.Lock())
    with lock:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)  # flock on the folder itself: no lock file to leave
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                index = load_index(root)
            except MediaIndexError as exc:
                broken = index_path(root).with_name("index.json.broken")
                check_target(broken, root)
                os.replace(index_path(root), broken)
                log.warning("%s; kept it as %s and rebuilt the index from the files on disk", exc, broken.name)
                index = rebuilt_index(root)
            yield index
            save_index(root, index)
        finally:
            os.close(fd)  # closing drops the flock


def reindex(root: Path) -> dict:
    """Rebuild the index of `root` from the files on disk (entries whose hash still matches are kept)."""
    root = Path(root)
    with changing_index(root) as index:
        fresh = rebuilt_index(root, index)
        index.clear()
        index.update(fresh)
    return index


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
    entry = entry_for(path, source, note)
    with changing_index(root) as index:
        index["files"][path.relative_to(root).as_posix()] = entry
    return entry


def synth_bank(
    bank: Bank,
    root: Path = MEDIA_ROOT,
    *,
    voice: str = "en-us",
    rate: int = 150,
    overwrite: bool = False,
    progress=None,
) -> int:
    """Speech WAVs for every scenario turn (and the named repair anchor)."""
    from media_effects.tts import synthesize

    try:
        known = load_index(root)["files"]
    except MediaIndexError:
        known = {}  # rebuilt from disk when the new entries are saved
    made = {}
    jobs = [(s, name, field) for s in bank.scenarios for name, field in SPEECH_TURNS.items()]
    for done, (scenario, name, field) in enumerate(jobs, start=1):
        path = Path(root) / scenario.scenario_id / f"{name}.wav"  # ids are plain names (load_bank checks)
        if path.exists() and not overwrite:
            continue
        existing = known.get(path.relative_to(root).as_posix())
        if existing and existing.get("source") == "recorded" and not overwrite:
            continue
        synthesize(getattr(scenario, field), path, voice=voice, rate=rate, root=root)
        made[path.relative_to(root).as_posix()] = entry_for(
            path, "synthesized", f"espeak-ng voice {voice} rate {rate} from {field}"
        )
        if progress:
            progress(done, len(jobs), path)
    with changing_index(root) as index:
        index["files"].update(made)
    return len(made)


def synth_pictographs(bank: Bank, specs: dict, root: Path = MEDIA_ROOT, *, progress=None) -> int:
    """A pictograph still (`<scene>.jpg`, index source `pictograph`) for every scene of every scenario
    in `specs` (scenario id -> `core.scenes.SceneSpec`) that has no frame file of another source
    (a recording is never replaced; an earlier pictograph is drawn again, so a changed spec shows)."""
    from media_effects.media import STILL, VIDEO, sources
    from media_effects.pictograph import pictograph_frame

    try:
        known = load_index(root)["files"]
    except MediaIndexError:
        known = {}
    made = {}
    jobs = [
        (s, name, scene)
        for s in bank.scenarios
        if s.scenario_id in specs
        for name, scene in specs[s.scenario_id].scenes.items()
    ]
    for done, (scenario, name, scene) in enumerate(jobs, start=1):
        path = Path(root) / scenario.scenario_id / f"{name}.jpg"
        others = [
            p
            for p in sources(root, scenario.scenario_id, name, STILL + VIDEO)
            if (known.get(p.relative_to(root).as_posix()) or {}).get("source") != "pictograph"
        ]
        if others:
            continue
        make_dirs(path.parent, root)
        with atomic_file(path, root) as out:
            out.write(pictograph_frame(scene))
        made[path.relative_to(root).as_posix()] = entry_for(
            path, "pictograph", f"drawn from the scene spec scenes/{scenario.scenario_id}.json ({name})"
        )
        if progress:
            progress(done, len(jobs), path)
    with changing_index(root) as index:
        index["files"].update(made)
    return len(made)


def import_recording(
    root: Path, scenario_id: str, turn: str, source: Path, *, start: float | None = None, end: float | None = None
) -> list[Path]:
    """Copy a real recording into the layout, trimmed; a video's audio track becomes the turn's WAV."""
    from media_effects.audio import SAMPLE_RATE, decode_audio, float_to_pcm16
    from media_effects.tts import write_wav

    source = Path(source)
    if not source.exists():
        raise FileNotFoundError(f"{source}: no such file")
    if turn not in set(SPEECH_TURNS) | set(FRAME_TURNS):
        raise ValueError(f"turn must be one of {', '.join(sorted(set(SPEECH_TURNS) | set(FRAME_TURNS)))}")
    if (start is not None and start < 0) or (end is not None and end <= (start or 0)):
        raise ValueError(f"--start {start} / --end {end}: the end must come after the start, both at or after 0 s")
    suffix = source.suffix.lower()
    audio = None
    if suffix in VIDEO + (".wav", ".mp3", ".m4a", ".ogg", ".flac"):
        probe_recording(source)  # before anything is decoded
    if suffix in VIDEO + (".wav", ".mp3", ".m4a", ".ogg", ".flac") and turn in SPEECH_TURNS:
        try:
            audio = decode_audio(source, max_seconds=MAX_IMPORT_SECONDS)
        except MediaLimit:
            raise
        except ValueError:
            audio = None  # a video without an audio track
        if audio is not None:
            a = int((start or 0) * SAMPLE_RATE)
            b = int(end * SAMPLE_RATE) if end is not None else len(audio)
            audio = audio[a:b]
            if not len(audio):
                raise ValueError(f"{source}: no audio samples{' in that window' if start or end else ''}")
    if not SAFE_ID.fullmatch(scenario_id):
        raise ValueError(
            f"scenario id {scenario_id[:80]!r} is not a plain name: it would name a folder outside the media root"
        )
    folder = make_dirs(Path(root) / scenario_id, root)
    written: list[Path] = []
    note = f"imported from {source.name}" + (f" [{start}, {end}] s" if start is not None or end is not None else "")
    if suffix in STILL:
        target = folder / f"{turn}{suffix}"
        with source.open("rb") as data, atomic_file(target, root) as out:
            shutil.copyfileobj(data, out)
        written.append(target)
    elif suffix in VIDEO:
        target = folder / f"{turn}.mp4"
        partial = temp_name(target).with_suffix(".mp4")  # OpenCV picks the container by the suffix
        try:
            _trim_video(source, partial, start, end)
            os.replace(partial, check_target(target, root))
        finally:
            partial.unlink(missing_ok=True)
        written.append(target)
    if audio is not None:
        target = folder / f"{turn}.wav"
        write_wav(target, float_to_pcm16(audio), root=root)
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
    if width * height > MAX_VIDEO_PIXELS:
        capture.release()
        raise MediaLimit(f"{source.name}: video of {width}x{height}; at most {MAX_VIDEO_PIXELS:,} pixels")
    scale = min(1.0, STORED_VIDEO_BOX[0] / max(width, height, 1), STORED_VIDEO_BOX[1] / max(min(width, height), 1))
    size = (max(2, round(width * scale) // 2 * 2), max(2, round(height * scale) // 2 * 2))
    stored_fps = min(fps, STORED_FPS)
    try:
        with _VideoWriter(target, stored_fps, size) as writer:
            for frame in _kept_frames(capture, source.name, fps, stored_fps, start, end):
                writer.write(
                    frame if size == (width, height) else cv2.resize(frame, size, interpolation=cv2.INTER_AREA)
                )
    finally:
        capture.release()
    seconds = max(writer.frames / stored_fps, 1.0)
    if target.stat().st_size > MAX_STORED_BYTES_PER_S * seconds:  # the encoder's rate control failed us
        raise MediaLimit(
            f"{source.name}: the stored video would be {target.stat().st_size:,} bytes for "
            f"{seconds:.0f} s; at most {MAX_STORED_BYTES_PER_S:,} bytes a second are kept"
        )


def _kept_frames(capture, name: str, fps: float, stored_fps: float, start: float | None, end: float | None):
    """The frames of `capture` within [start, end], at most `stored_fps` a second; `MediaLimit` past
    `MAX_VIDEO_FRAMES` decoded (a header need not say how many there are)."""
    index, due = 0, None  # due: the stream time of the next frame kept
    while True:
        ok, frame = capture.read()
        if not ok:
            return
        t = index / fps
        index += 1
        if index > MAX_VIDEO_FRAMES:
            raise MediaLimit(
                f"{name}: more than {MAX_VIDEO_FRAMES} video frames; a recording may "
                f"be at most {MAX_IMPORT_SECONDS:.0f} s"
            )
        if (start is None or t >= start) and (end is None or t <= end) and (due is None or t >= due - 1e-6):
            due = (t if due is None else due) + 1 / stored_fps
            yield frame


class _VideoWriter:
    """MPEG-4 Part 2 in an MP4 file through PyAV, with rate control at `STORED_VIDEO_BIT_RATE` (OpenCV's
    writer has none: a detailed recording came out over the cap and was refused)."""

    def __init__(self, target: Path, fps: float, size: tuple[int, int]):
        from fractions import Fraction

        import av

        self.frames, self._frame = 0, av.VideoFrame.from_ndarray  # frames written
        self.container = av.open(str(target), "w")
        self.stream = self.container.add_stream("mpeg4", rate=Fraction(fps).limit_denominator(1000))
        self.stream.width, self.stream.height, self.stream.pix_fmt = size[0], size[1], "yuv420p"
        self.stream.bit_rate = STORED_VIDEO_BIT_RATE
        self.stream.codec_context.options = {
            "maxrate": str(STORED_VIDEO_BIT_RATE),
            "bufsize": str(STORED_VIDEO_BIT_RATE),
        }

    def write(self, bgr) -> None:
        self.container.mux(self.stream.encode(self._frame(bgr, format="bgr24")))
        self.frames += 1

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        try:
            if exc[0] is None:
                self.container.mux(self.stream.encode())  # what the encoder still holds
        finally:
            self.container.close()


def two_sources(root: Path = MEDIA_ROOT) -> list[str]:
    """Warnings: turns with more than one frame source (e.g. a shipped still and an
    imported video); the simulator uses the newest."""
    from media_effects.media import STILL, VIDEO, sources

    warnings = []
    for folder in sorted(Path(root).glob("*-*")):
        if not folder.is_dir():
            continue
        for name in FRAME_TURNS:
            found = sources(root, folder.name, name, STILL + VIDEO)
            if len(found) > 1:
                warnings.append(
                    f"{folder.name}/{name}: {len(found)} sources ({', '.join(p.name for p in found)}); "
                    f"the newest, {found[0].name}, is used"
                )
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
                from media_effects.audio import decode_audio

                decode_audio(path)
            else:
                from media_effects.media import load_frames

                load_frames(path, max_seconds=1)
        except (ValueError, OSError) as exc:
            problems.append(f"{relative}: unreadable ({exc})")
    on_disk = {p.relative_to(root).as_posix() for p in Path(root).glob("*-*/*") if p.is_file()}
    for relative in sorted(on_disk - set(index["files"])):
        problems.append(f"{relative}: on disk but not in the index")
    return problems
