"""Scene describers: a frame in, a camera block out.

- `opencv` (the offline default): a classical description from the pixels
  alone: dominant colours in plain words, the main shapes with size, position
  and shape words, brightness, blur, and motion against the previous frame.
  It knows no object names, so it follows the authoring rule by construction.
- `ocr` (offline): the text in the frame's pixels, read with OCR
  (`perception/ocr.py`, PP-OCRv4), after the opencv layout of colours and
  shapes. It never reads a synthetic frame's JPEG comment, so an impaired
  frame changes what it says.
- `openai:MODEL` (any OpenAI-compatible vision endpoint, image as a data URI)
  and `gemini:MODEL` (inline bytes), asked through the candidate adapters
  (the caller opens the model once per run: one client, the endpoint's rate
  limits and retries). Their prompt carries the authoring rules;
  `style="natural"` lets the model name things, to measure what the rule costs.

Model results are cached on disk by sha256 of (frame bytes, describer, model,
prompt version, style).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from core.candidate import Candidate, GenerationConfig, Image, Message
from core.named import named_object
from core.safe_files import inside, make_dirs, write_atomic
from media_effects.frames import decode_jpeg, pixel_refusal, synthetic_text
from perception import ocr
from perception.describer_spec import (  # needs_model re-exported
    DEFAULT_DESCRIBER,
    DESCRIBERS,
    describer_problem,
    needs_model,
)

PROMPT_VERSION = "1"
RULES_PROMPT = (
    "Describe this camera frame from smart glasses in one to three sentences for an assistant that cannot see it. "
    "Give shape, material, colour, motion and position (left, right, centre, near the hands) of what is in view. "
    "Never name any object: say 'a slim yellow handle ending in a cross-shaped metal tip', not 'a screwdriver'."
)
NATURAL_PROMPT = (
    "Describe this camera frame from smart glasses in one to three sentences for an assistant that "
    "cannot see it, naming the objects and where they are."
)

# plain colour words and a BGR anchor for each
PALETTE = {
    "black": (20, 20, 20),
    "white": (245, 245, 245),
    "grey": (128, 128, 128),
    "red": (40, 40, 210),
    "orange": (30, 140, 240),
    "yellow": (40, 220, 230),
    "green": (60, 170, 60),
    "blue": (200, 90, 30),
    "purple": (150, 50, 130),
    "pink": (180, 150, 240),
    "brown": (40, 75, 130),
}


@dataclass(frozen=True, kw_only=True)
class Description:
    text: str
    describer: str
    model: str
    cached: bool
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


class SceneDescriber(Protocol):
    name: str
    model: str

    async def describe(self, jpeg: bytes, previous: bytes | None = None) -> Description: ...


GREY_SATURATION = 72  # (28%) below it a colour is grey: a warm grey (a concrete floor, a steel sink) is not brown


def colour_name(bgr) -> str:
    b, g, r = (float(x) for x in bgr)
    hsv = cv2.cvtColor(np.array([[[b, g, r]]], dtype=np.uint8), cv2.COLOR_BGR2HSV)[0, 0]
    hue, sat, val = int(hsv[0]) * 2, int(hsv[1]), int(hsv[2])
    if val < 50:
        return "black"
    if sat < GREY_SATURATION:
        return "white" if val > 200 else "grey"
    if hue < 15 or hue >= 345:
        return "brown" if val < 140 else ("pink" if sat < 120 else "red")
    if hue < 40:
        return "brown" if val < 150 else "orange"
    if hue < 70:
        return "yellow"
    if hue < 170:
        return "green"
    if hue < 260:
        return "blue"
    if hue < 300:
        return "purple"
    return "pink"


def _position(cx: float, cy: float, width: int, height: int) -> str:
    horizontal = "left" if cx < width / 3 else "right" if cx > 2 * width / 3 else "centre"
    vertical = "top" if cy < height / 3 else "bottom" if cy > 2 * height / 3 else "middle"
    if horizontal == "centre" and vertical == "middle":
        return "in the centre"
    if horizontal == "centre":
        return f"at the {vertical} centre"
    if vertical == "middle":
        return f"on the {horizontal}"
    return f"at the {vertical} {horizontal}"


def _shape(contour, area: float) -> str:
    x, y, w, h = cv2.boundingRect(contour)
    aspect = max(w, h) / max(min(w, h), 1)
    perimeter = cv2.arcLength(contour, True)
    circularity = 4 * np.pi * area / max(perimeter * perimeter, 1)
    fill = area / max(w * h, 1)
    if aspect >= 3:
        return "elongated"
    if circularity > 0.8 and aspect < 1.3:
        return "round"
    if fill > 0.85:
        return "flat wide rectangular" if w > 2 * h else "rectangular"
    return "irregular"


def describe_pixels(image: np.ndarray, previous: np.ndarray | None = None, *, max_shapes: int = 3) -> str:
    height, width = image.shape[:2]
    small = cv2.resize(image, (160, int(160 * height / width) or 1), interpolation=cv2.INTER_AREA)
    pixels = small.reshape(-1, 3).astype(np.float32)
    k = 4
    cv2.setRNGSeed(0)  # k-means++ draws its first centres from this thread's generator: the same frame, the same words
    # OpenCV's stubs want an array for bestLabels; None (it allocates them) is what it takes at run time
    _, labels, centres = cv2.kmeans(
        pixels,
        k,
        None,  # type: ignore[call-overload]
        (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 1.0),
        3,
        cv2.KMEANS_PP_CENTERS,
    )
    shares = np.bincount(labels.reshape(-1), minlength=k) / len(labels)
    order = np.argsort(-shares)
    background = colour_name(centres[order[0]])
    named = []
    for idx in order:
        name = colour_name(centres[idx])
        if shares[idx] > 0.05 and name not in named:
            named.append(name)
    sentences = [f"Mostly {background}" + (f", with {' and '.join(named[1:])}" if len(named) > 1 else "") + "."]

    # shapes: regions whose colour differs from the dominant one
    label_image = labels.reshape(small.shape[:2])
    mask = (label_image != order[0]).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    frame_area = small.shape[0] * small.shape[1]
    shapes = []
    for contour in sorted(contours, key=cv2.contourArea, reverse=True)[:max_shapes]:
        area = cv2.contourArea(contour)
        if area < 0.01 * frame_area:
            continue
        moments = cv2.moments(contour)
        cx, cy = moments["m10"] / max(moments["m00"], 1), moments["m01"] / max(moments["m00"], 1)
        region = np.zeros(mask.shape, np.uint8)
        cv2.drawContours(region, [contour], -1, 255, -1)
        colour = colour_name(cv2.mean(small, mask=region)[:3])
        size = "large" if area > 0.2 * frame_area else "medium" if area > 0.05 * frame_area else "small"
        shapes.append(
            f"a {size} {colour} {_shape(contour, area)} shape {_position(cx, cy, small.shape[1], small.shape[0])}"
        )
    if shapes:
        sentences.append(("; ".join(shapes)).capitalize() + ".")
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    brightness = float(gray.mean())
    light = "dim" if brightness < 70 else "bright" if brightness > 180 else "evenly lit"
    blur = "blurred" if cv2.Laplacian(gray, cv2.CV_64F).var() < 60 else "sharp"
    sentences.append(f"The view is {light} and {blur}.")
    if previous is not None:
        before = cv2.cvtColor(cv2.resize(previous, (width, height)), cv2.COLOR_BGR2GRAY)
        change = cv2.absdiff(gray, before)
        moved = float((change > 40).mean())
        if moved > 0.005:
            ys, xs = np.nonzero(change > 40)
            where = _position(xs.mean(), ys.mean(), width, height)
            sentences.append(
                f"Something moved since the last frame, mostly {where}."
                if moved < 0.5
                else "The whole view changed since the last frame."
            )
        else:
            sentences.append("Nothing moved since the last frame.")
    return " ".join(sentences)


class OpenCVDescriber:
    name = "opencv"
    model = "opencv-classical"

    async def describe(self, jpeg: bytes, previous: bytes | None = None) -> Description:
        started = time.monotonic()
        text = await asyncio.to_thread(
            describe_pixels, decode_jpeg(jpeg), decode_jpeg(previous) if previous is not None else None
        )
        return Description(
            text=text, describer=self.name, model=self.model, cached=False, seconds=time.monotonic() - started
        )


def describe_text_and_layout(jpeg: bytes, previous: bytes | None = None) -> str:
    """The opencv layout of `jpeg`, then the text OCR reads in its pixels (`ocr.with_text`)."""
    image = decode_jpeg(jpeg)
    layout = describe_pixels(image, decode_jpeg(previous) if previous is not None else None)
    return ocr.with_text(layout, ocr.read_text(image))


class OCRDescriber:
    """Reads the text in a frame's pixels (never its JPEG comment) and adds it to the opencv layout.
    The OCR engine is loaded once per process on first use; decoding, the layout and the reading run
    on the process's one OCR thread (`ocr.in_reader_thread`)."""

    name = "ocr"
    model = ocr.ENGINE

    async def describe(self, jpeg: bytes, previous: bytes | None = None) -> Description:
        started = time.monotonic()
        for frame in (jpeg, previous):
            refusal = pixel_refusal(frame) if frame is not None else None
            if refusal:
                raise ValueError(refusal)
        text = await ocr.in_reader_thread(describe_text_and_layout, jpeg, previous)
        return Description(
            text=text, describer=self.name, model=self.model, cached=False, seconds=time.monotonic() - started
        )


class DiskCache:
    """Descriptions by key, one JSON file each in `CACHE/describe/`, written as the run dir's files are
    (`core.safe_files`: a temp file renamed over the entry, never through a link; the folder made
    with `make_dirs`, refused when it leads out of the cache folder). An entry that is a link, not a
    regular file, too large or unreadable is a miss."""

    MAX_ENTRY_BYTES = 100_000

    def __init__(self, directory: Path | None = None):
        base = os.environ.get("WEARSIM_CACHE_DIR")
        self.root = Path(directory or (Path(base) if base else Path.home() / ".cache" / "wearsim"))
        self.directory = self.root / "describe"

    def key(self, jpeg: bytes, describer: str, model: str, style: str) -> str:
        digest = hashlib.sha256(jpeg)
        for part in (describer, model, PROMPT_VERSION, style):
            digest.update(b"\0" + part.encode())
        return digest.hexdigest()

    def get(self, key: str) -> str | None:
        path = self.directory / f"{key}.json"
        if not inside(path, self.root) or path.is_symlink():
            return None
        try:
            with path.open("rb") as handle:
                text = json.loads(handle.read(self.MAX_ENTRY_BYTES + 1).decode("utf-8"))["text"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return text if isinstance(text, str) else None

    def put(self, key: str, text: str) -> None:
        make_dirs(self.directory, self.root)
        write_atomic(self.directory / f"{key}.json", json.dumps({"text": text}), self.root)


class ModelDescriber:
    """A vision model, asked through a candidate adapter (`openai:MODEL`, `gemini:MODEL`):
    the caller opens it once for the run, so every frame shares its client, its
    endpoint's rate limits and its retries."""

    def __init__(self, model: Candidate, *, style: str = "rules", cache_dir: Path | None = None):
        if style not in ("rules", "natural"):
            raise ValueError(f"describe style must be 'rules' or 'natural', got {style!r}")
        self.candidate, self.style = model, style
        self.name = model.family
        self.model = model.model_id.partition(":")[2] or model.model_id
        self.prompt = RULES_PROMPT if style == "rules" else NATURAL_PROMPT
        self.cache = DiskCache(cache_dir)

    async def describe(self, jpeg: bytes, previous: bytes | None = None) -> Description:
        started = time.monotonic()
        key = self.cache.key(jpeg, self.name, self.model, self.style)
        cached = self.cache.get(key)
        if cached is not None:
            return Description(
                text=cached, describer=self.name, model=self.model, cached=True, seconds=time.monotonic() - started
            )
        reply = await self.candidate.respond(
            [Message(role="user", text=self.prompt, images=(Image(data=jpeg),))],
            "",
            GenerationConfig(temperature=0.0, max_tokens=200),
        )
        text = reply.text.strip()
        self.cache.put(key, text)
        return Description(
            text=text, describer=self.name, model=self.model, cached=False, seconds=time.monotonic() - started
        )


class AuthoredDescriber:
    """Reads back the authored camera text a synthetic frame carries in its comment.

    With synthetic frames the local cascade then sees exactly the text proxy,
    so only frame timing can change an answer. A recorded frame carries no
    such text: it is described by `fallback` (opencv), and the description
    names that describer."""

    name = "authored"
    model = "synthetic-frame-comment"

    def __init__(self, fallback: SceneDescriber | None = None):
        self.fallback = fallback or OpenCVDescriber()

    async def describe(self, jpeg: bytes, previous: bytes | None = None) -> Description:
        text = synthetic_text(jpeg)
        if text is not None:
            return Description(text=text, describer=self.name, model=self.model, cached=False, seconds=0.0)
        return await self.fallback.describe(jpeg, previous)


def _built(maker: str) -> SceneDescriber:
    """The describer a registry entry's `maker` ("module:Class") names, its module imported now."""
    return named_object(maker)()


def make_describer(
    spec: str = DEFAULT_DESCRIBER,
    *,
    model: Candidate | None = None,
    style: str = "rules",
    cache_dir: Path | None = None,
) -> SceneDescriber:
    """A describer of the registry (`perception.describer_spec.DESCRIBERS`): `opencv`, `authored`, `ocr`,
    or a vision model (`openai:MODEL`, `gemini:MODEL`) given as `model`, the candidate the caller opened
    for `spec`."""
    entry = DESCRIBERS.get(spec)
    if entry is not None and not entry.model:
        return _built(entry.maker)
    if needs_model(spec):
        if model is None:
            raise ValueError(
                f"describer {spec!r} is a vision model: open it with open_candidate({spec!r}) and pass it as model="
            )
        return ModelDescriber(model, style=style, cache_dir=cache_dir)
    raise ValueError(describer_problem(spec))
