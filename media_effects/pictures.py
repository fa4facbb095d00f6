"""The picture set pictograph frames are drawn from: Noto Color Emoji.

Google's Noto Color Emoji font (SIL Open Font License 1.1), installed from
Debian's `fonts-noto-color-emoji` by `scripts/setup.sh`, drawn with Pillow at
the font's one bitmap size (109 px) and scaled. `PICTURES` maps the picture
names a scene spec may use to an emoji; `SHAPES` are the few things drawn
without a picture (a patch of paint, a screen, a sheet, a plank). A name in
neither is a spec error the validator reports.

No picture holds a letter: emoji with text in them (the "SOS" or "NEW"
buttons, keycaps) are not in the set, so the only text a pictograph shows is
a scene's `screen_content`.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path

FONT_ENV = "WEARSIM_EMOJI_FONT"
FONT_PATHS = (
    "/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf",
    "/usr/share/fonts/noto/NotoColorEmoji.ttf",
    "/usr/share/fonts/google-noto-emoji/NotoColorEmoji.ttf",
)
BITMAP_PX = 109  # the font's one strike
LICENCE = "SIL Open Font License 1.1 (Noto Color Emoji, Debian package fonts-noto-color-emoji)"

# picture name -> emoji (one grapheme; the font draws it)
PICTURES: dict[str, str] = {
    # tools
    "hammer": "\U0001f528",
    "screwdriver": "\U0001fa9b",
    "wrench": "\U0001f527",
    "nut and bolt": "\U0001f529",
    "saw": "\U0001fa9a",
    "axe": "\U0001fa93",
    "clamp": "\U0001f5dc",
    "toolbox": "\U0001f9f0",
    "scissors": "\u2702",
    "magnet": "\U0001f9f2",
    "ladder": "\U0001fa9c",
    "hook": "\U0001fa9d",
    "nail": "\U0001f4cc",
    "pin": "\U0001f4cd",
    "safety pin": "\U0001f9f7",
    "chain": "\u26d3",
    "gear": "\u2699",
    "plug": "\U0001f50c",
    "battery": "\U0001f50b",
    "low battery": "\U0001faab",
    "bulb": "\U0001f4a1",
    "flashlight": "\U0001f526",
    "candle": "\U0001f56f",
    "knobs": "\U0001f39b",
    "thermometer": "\U0001f321",
    "timer": "\u23f2",
    "stopwatch": "\u23f1",
    "plunger": "\U0001faa0",
    "bucket": "\U0001faa3",
    "broom": "\U0001f9f9",
    "sponge": "\U0001f9fd",
    "soap": "\U0001f9fc",
    "spray bottle": "\U0001f9f4",
    "roll of paper": "\U0001f9fb",
    "basket": "\U0001f9fa",
    "paintbrush": "\U0001f58c",
    "palette": "\U0001f3a8",
    "crayon": "\U0001f58d",
    "pen": "\U0001f58a",
    "pencil": "\u270f",
    "paperclip": "\U0001f4ce",
    "ruler": "\U0001f4cf",
    "triangle ruler": "\U0001f4d0",
    "thread": "\U0001f9f5",
    "yarn": "\U0001f9f6",
    "needle": "\U0001faa1",
    "knot": "\U0001faa2",
    "gloves": "\U0001f9e4",
    "oil drum": "\U0001f6e2",
    "fuel pump": "\u26fd",
    "key": "\U0001f511",
    "microscope": "\U0001f52c",
    "test tube": "\U0001f9ea",
    "syringe": "\U0001f489",
    "pill": "\U0001f48a",
    "bandage": "\U0001fa79",
    "drop of blood": "\U0001fa78",
    "stethoscope": "\U0001fa7a",
    "razor": "\U0001fa92",
    "toothbrush": "\U0001faa5",
    "mirror": "\U0001fa9e",
    "coin": "\U0001fa99",
    "credit card": "\U0001f4b3",
    "receipt": "\U0001f9fe",
    "shopping cart": "\U0001f6d2",
    "package": "\U0001f4e6",
    "label": "\U0001f3f7",
    # kitchen
    "knife": "\U0001f52a",
    "spoon": "\U0001f944",
    "fork and knife": "\U0001f374",
    "chopsticks": "\U0001f962",
    "frying pan": "\U0001f373",
    "teapot": "\U0001fad6",
    "kettle": "\U0001fad6",
    "bowl": "\U0001f963",
    "pot of food": "\U0001f372",
    "shallow pan": "\U0001f958",
    "jar": "\U0001fad9",
    "tin": "\U0001f96b",
    "salt": "\U0001f9c2",
    "butter": "\U0001f9c8",
    "egg": "\U0001f95a",
    "glass of milk": "\U0001f95b",
    "cup": "\u2615",
    "teacup": "\U0001f375",
    "wine glass": "\U0001f377",
    "tumbler": "\U0001f943",
    "cup with straw": "\U0001f964",
    "pouring liquid": "\U0001fad7",
    "honey pot": "\U0001f36f",
    "ice": "\U0001f9ca",
    "lemon": "\U0001f34b",
    "cucumber": "\U0001f952",
    "carrot": "\U0001f955",
    "tomato": "\U0001f345",
    "apple": "\U0001f34e",
    "onion": "\U0001f9c5",
    "garlic": "\U0001f9c4",
    "potato": "\U0001f954",
    "sweet potato": "\U0001f360",
    "poultry leg": "\U0001f357",
    "meat": "\U0001f969",
    "bacon": "\U0001f953",
    "spaghetti": "\U0001f35d",
    "cookie": "\U0001f36a",
    "bread": "\U0001f35e",
    "baguette": "\U0001f956",
    "flatbread": "\U0001fad3",
    "cake": "\U0001f370",
    "chocolate": "\U0001f36b",
    "broccoli": "\U0001f966",
    "eggplant": "\U0001f346",
    "pepper": "\U0001fad1",
    "orange": "\U0001f34a",
    "banana": "\U0001f34c",
    "grapes": "\U0001f347",
    "beans": "\U0001fad8",
    "rice": "\U0001f35a",
    "herb": "\U0001f33f",
    "leafy green": "\U0001f96c",
    "chili": "\U0001f336",
    # things with screens
    "laptop": "\U0001f4bb",
    "desktop computer": "\U0001f5a5",
    "keyboard": "\u2328",
    "mouse": "\U0001f5b1",
    "phone": "\U0001f4f1",
    "watch": "\u231a",
    "camera": "\U0001f4f7",
    "video camera": "\U0001f3a5",
    "television": "\U0001f4fa",
    "radio": "\U0001f4fb",
    "satellite dish": "\U0001f4e1",
    # paper
    "page": "\U0001f4c4",
    "notepad": "\U0001f5d2",
    "memo": "\U0001f4dd",
    "clipboard": "\U0001f4cb",
    "bar chart": "\U0001f4ca",
    "chart": "\U0001f4c8",
    "book": "\U0001f4d6",
    "musical score": "\U0001f3bc",
    "card index": "\U0001f4c7",
    "folder": "\U0001f4c1",
    # music, sport
    "guitar": "\U0001f3b8",
    "violin": "\U0001f3bb",
    "piano": "\U0001f3b9",
    "drum": "\U0001f941",
    "banjo": "\U0001fa95",
    "microphone": "\U0001f3a4",
    "musical note": "\U0001f3b5",
    "weightlifter": "\U0001f3cb",
    "dumbbell": "\U0001f3cb",
    "runner": "\U0001f3c3",
    "running shoe": "\U0001f45f",
    "boxing glove": "\U0001f94a",
    "yoga": "\U0001f9d8",
    "bicycle": "\U0001f6b2",
    "wheel": "\U0001f6de",
    "car": "\U0001f697",
    "pickup truck": "\U0001f6fb",
    "motor scooter": "\U0001f6f5",
    "traffic light": "\U0001f6a6",
    "fire extinguisher": "\U0001f9ef",
    # home
    "door": "\U0001f6aa",
    "window": "\U0001fa9f",
    "bed": "\U0001f6cf",
    "couch": "\U0001f6cb",
    "chair": "\U0001fa91",
    "bathtub": "\U0001f6c1",
    "shower": "\U0001f6bf",
    "toilet": "\U0001f6bd",
    "tap": "\U0001f6b0",
    "brick": "\U0001f9f1",
    "wood": "\U0001fab5",
    "rock": "\U0001faa8",
    "house": "\U0001f3e0",
    "office building": "\U0001f3e2",
    "shirt": "\U0001f455",
    "coat": "\U0001f9e5",
    "sweater": "\U0001f9e5",
    "socks": "\U0001f9e6",
    "dress": "\U0001f457",
    "shorts": "\U0001fa73",
    "clothes basket": "\U0001f9fa",
    "lotion bottle": "\U0001f9f4",
    "potted plant": "\U0001fab4",
    "seedling": "\U0001f331",
    "wilted flower": "\U0001f940",
    "leaves": "\U0001f343",
    "clover": "\U0001f340",
    "tree": "\U0001f333",
    "evergreen": "\U0001f332",
    "cactus": "\U0001f335",
    "sheaf": "\U0001f33e",
    "mushroom": "\U0001f344",
    "flower": "\U0001f33c",
    "fallen leaf": "\U0001f342",
    # animals
    "cat": "\U0001f408",
    "dog": "\U0001f415",
    "cat face": "\U0001f431",
    "dog face": "\U0001f436",
    "bug": "\U0001f41b",
    "worm": "\U0001fab1",
    "beetle": "\U0001fab2",
    "paw prints": "\U0001f43e",
    # people
    "person": "\U0001f9d1",
    "people": "\U0001f465",
    # weather and places
    "sun": "\u2600",
    "cloud": "\u2601",
    "rain cloud": "\U0001f327",
    "droplet": "\U0001f4a7",
    "splash": "\U0001f4a6",
    "fire": "\U0001f525",
    "steam": "\U0001f4a8",
    "wave": "\U0001f30a",
    "mountain": "\u26f0",
    "snow mountain": "\U0001f3d4",
    "beach umbrella": "\U0001f3d6",
    "waterfall": "\U0001f3de",
    "lightning": "\u26a1",
    "sparkles": "\u2728",
    "warning": "\u26a0",
    "heart": "\u2764",
    "footprints": "\U0001f463",
    "sparkle": "\u2747",
    "black circle": "\u26ab",
    "red circle": "\U0001f534",
    "bomb": "\U0001f4a3",
}

# things drawn as shapes, with the spec's `colour`
SHAPES = ("patch", "pot", "screen", "sheet", "board", "strip", "loop", "box", "rod", "panel", "band", "ring")

_lock = threading.Lock()


class PictureSetMissing(RuntimeError):
    """The emoji font is not installed."""


def font_path() -> Path:
    """The Noto Color Emoji font file: `WEARSIM_EMOJI_FONT`, else Debian's and other distributions' paths."""
    candidates = [os.environ[FONT_ENV]] if os.environ.get(FONT_ENV) else list(FONT_PATHS)
    for candidate in candidates:
        if Path(candidate).is_file():
            return Path(candidate)
    raise PictureSetMissing(
        "pictograph frames need the Noto Color Emoji font and it is not installed: run scripts/setup.sh, or "
        "`apt-get install fonts-noto-color-emoji`, or set WEARSIM_EMOJI_FONT to NotoColorEmoji.ttf "
        f"(looked in {', '.join(candidates)})"
    )


def known(picture: str) -> bool:
    return picture in PICTURES or picture in SHAPES


def unknown_pictures(specs: dict) -> list[str]:
    """One line per object whose picture is neither in the set nor a shape: scenario, scene, object."""
    return [
        f"{sid}: {name}: object {o.id!r}: picture {o.picture!r} is not in the picture set"
        for sid, spec in sorted(specs.items())
        for name, scene in spec.scenes.items()
        for o in scene.objects
        if not known(o.picture)
    ]


@lru_cache(maxsize=1)
def _font():
    from PIL import ImageFont

    return ImageFont.truetype(str(font_path()), BITMAP_PX)


@lru_cache(maxsize=512)
def emoji_image(picture: str):
    """The picture as an RGBA image at the font's size, cropped to its ink."""
    from PIL import Image, ImageDraw

    glyph = PICTURES[picture]
    with _lock:
        font = _font()
        canvas = Image.new("RGBA", (BITMAP_PX * 2, BITMAP_PX * 2), (0, 0, 0, 0))
        ImageDraw.Draw(canvas).text((BITMAP_PX // 4, BITMAP_PX // 4), glyph, font=font, embedded_color=True)
    box = canvas.getbbox()
    if box is None:
        raise PictureSetMissing(f"the emoji font draws nothing for {picture!r} ({glyph!r}): an older font?")
    return canvas.crop(box)
