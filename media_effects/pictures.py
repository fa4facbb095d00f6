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
    "hammer": "\U0001F528", "screwdriver": "\U0001FA9B", "wrench": "\U0001F527", "nut and bolt": "\U0001F529",
    "saw": "\U0001FA9A", "axe": "\U0001FA93", "clamp": "\U0001F5DC", "toolbox": "\U0001F9F0",
    "scissors": "\u2702", "magnet": "\U0001F9F2", "ladder": "\U0001FA9C", "hook": "\U0001FA9D",
    "nail": "\U0001F4CC", "pin": "\U0001F4CD", "safety pin": "\U0001F9F7", "chain": "\u26D3",
    "gear": "\u2699", "plug": "\U0001F50C", "battery": "\U0001F50B", "low battery": "\U0001FAAB",
    "bulb": "\U0001F4A1", "flashlight": "\U0001F526", "candle": "\U0001F56F", "knobs": "\U0001F39B",
    "thermometer": "\U0001F321", "timer": "\u23F2", "stopwatch": "\u23F1",
    "plunger": "\U0001FAA0", "bucket": "\U0001FAA3", "broom": "\U0001F9F9", "sponge": "\U0001F9FD",
    "soap": "\U0001F9FC", "spray bottle": "\U0001F9F4", "roll of paper": "\U0001F9FB", "basket": "\U0001F9FA",
    "paintbrush": "\U0001F58C", "palette": "\U0001F3A8", "crayon": "\U0001F58D", "pen": "\U0001F58A",
    "pencil": "\u270F", "paperclip": "\U0001F4CE", "ruler": "\U0001F4CF", "triangle ruler": "\U0001F4D0",
    "thread": "\U0001F9F5", "yarn": "\U0001F9F6", "needle": "\U0001FAA1", "knot": "\U0001FAA2",
    "gloves": "\U0001F9E4", "oil drum": "\U0001F6E2", "fuel pump": "\u26FD", "key": "\U0001F511",
    "microscope": "\U0001F52C", "test tube": "\U0001F9EA", "syringe": "\U0001F489", "pill": "\U0001F48A",
    "bandage": "\U0001FA79", "drop of blood": "\U0001FA78", "stethoscope": "\U0001FA7A", "razor": "\U0001FA92",
    "toothbrush": "\U0001FAA5", "mirror": "\U0001FA9E", "coin": "\U0001FA99", "credit card": "\U0001F4B3",
    "receipt": "\U0001F9FE", "shopping cart": "\U0001F6D2", "package": "\U0001F4E6", "label": "\U0001F3F7",
    # kitchen
    "knife": "\U0001F52A", "spoon": "\U0001F944", "fork and knife": "\U0001F374", "chopsticks": "\U0001F962",
    "frying pan": "\U0001F373", "teapot": "\U0001FAD6", "kettle": "\U0001FAD6", "bowl": "\U0001F963",
    "pot of food": "\U0001F372", "shallow pan": "\U0001F958", "jar": "\U0001FAD9", "tin": "\U0001F96B",
    "salt": "\U0001F9C2", "butter": "\U0001F9C8", "egg": "\U0001F95A", "glass of milk": "\U0001F95B",
    "cup": "\u2615", "teacup": "\U0001F375", "wine glass": "\U0001F377", "tumbler": "\U0001F943",
    "cup with straw": "\U0001F964", "pouring liquid": "\U0001FAD7", "honey pot": "\U0001F36F",
    "ice": "\U0001F9CA", "lemon": "\U0001F34B", "cucumber": "\U0001F952", "carrot": "\U0001F955",
    "tomato": "\U0001F345", "apple": "\U0001F34E", "onion": "\U0001F9C5", "garlic": "\U0001F9C4",
    "potato": "\U0001F954", "sweet potato": "\U0001F360", "poultry leg": "\U0001F357", "meat": "\U0001F969",
    "bacon": "\U0001F953", "spaghetti": "\U0001F35D", "cookie": "\U0001F36A", "bread": "\U0001F35E",
    "baguette": "\U0001F956", "flatbread": "\U0001FAD3", "cake": "\U0001F370", "chocolate": "\U0001F36B",
    "broccoli": "\U0001F966", "eggplant": "\U0001F346", "pepper": "\U0001FAD1", "orange": "\U0001F34A",
    "banana": "\U0001F34C", "grapes": "\U0001F347", "beans": "\U0001FAD8", "rice": "\U0001F35A", "herb": "\U0001F33F",
    "leafy green": "\U0001F96C", "chili": "\U0001F336",
    # things with screens
    "laptop": "\U0001F4BB", "desktop computer": "\U0001F5A5", "keyboard": "\u2328", "mouse": "\U0001F5B1",
    "phone": "\U0001F4F1", "watch": "\u231A", "camera": "\U0001F4F7", "video camera": "\U0001F3A5",
    "television": "\U0001F4FA", "radio": "\U0001F4FB", "satellite dish": "\U0001F4E1",
    # paper
    "page": "\U0001F4C4", "notepad": "\U0001F5D2", "memo": "\U0001F4DD", "clipboard": "\U0001F4CB",
    "bar chart": "\U0001F4CA", "chart": "\U0001F4C8", "book": "\U0001F4D6",
    "musical score": "\U0001F3BC", "card index": "\U0001F4C7", "folder": "\U0001F4C1",
    # music, sport
    "guitar": "\U0001F3B8", "violin": "\U0001F3BB", "piano": "\U0001F3B9", "drum": "\U0001F941",
    "banjo": "\U0001FA95", "microphone": "\U0001F3A4", "musical note": "\U0001F3B5",
    "weightlifter": "\U0001F3CB", "dumbbell": "\U0001F3CB", "runner": "\U0001F3C3", "running shoe": "\U0001F45F",
    "boxing glove": "\U0001F94A", "yoga": "\U0001F9D8", "bicycle": "\U0001F6B2", "wheel": "\U0001F6DE",
    "car": "\U0001F697", "pickup truck": "\U0001F6FB", "motor scooter": "\U0001F6F5",
    "traffic light": "\U0001F6A6", "fire extinguisher": "\U0001F9EF",
    # home
    "door": "\U0001F6AA", "window": "\U0001FA9F", "bed": "\U0001F6CF", "couch": "\U0001F6CB", "chair": "\U0001FA91",
    "bathtub": "\U0001F6C1", "shower": "\U0001F6BF", "toilet": "\U0001F6BD", "tap": "\U0001F6B0",
    "brick": "\U0001F9F1", "wood": "\U0001FAB5", "rock": "\U0001FAA8", "house": "\U0001F3E0",
    "office building": "\U0001F3E2", "shirt": "\U0001F455", "coat": "\U0001F9E5", "sweater": "\U0001F9E5",
    "socks": "\U0001F9E6", "dress": "\U0001F457", "shorts": "\U0001FA73", "clothes basket": "\U0001F9FA",
    "lotion bottle": "\U0001F9F4", "potted plant": "\U0001FAB4", "seedling": "\U0001F331",
    "wilted flower": "\U0001F940", "leaves": "\U0001F343", "clover": "\U0001F340", "tree": "\U0001F333",
    "evergreen": "\U0001F332", "cactus": "\U0001F335", "sheaf": "\U0001F33E", "mushroom": "\U0001F344",
    "flower": "\U0001F33C", "fallen leaf": "\U0001F342",
    # animals
    "cat": "\U0001F408", "dog": "\U0001F415", "cat face": "\U0001F431", "dog face": "\U0001F436",
    "bug": "\U0001F41B", "worm": "\U0001FAB1", "beetle": "\U0001FAB2", "paw prints": "\U0001F43E",
    # people
    "person": "\U0001F9D1", "people": "\U0001F465",
    # weather and places
    "sun": "\u2600", "cloud": "\u2601", "rain cloud": "\U0001F327", "droplet": "\U0001F4A7",
    "splash": "\U0001F4A6", "fire": "\U0001F525", "steam": "\U0001F4A8", "wave": "\U0001F30A",
    "mountain": "\u26F0", "snow mountain": "\U0001F3D4", "beach umbrella": "\U0001F3D6", "waterfall": "\U0001F3DE",
    "lightning": "\u26A1", "sparkles": "\u2728", "warning": "\u26A0", "heart": "\u2764", "footprints": "\U0001F463",
    "sparkle": "\u2747", "black circle": "\u26AB", "red circle": "\U0001F534", "bomb": "\U0001F4A3",
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
        f"(looked in {', '.join(candidates)})")


def known(picture: str) -> bool:
    return picture in PICTURES or picture in SHAPES


def unknown_pictures(specs: dict) -> list[str]:
    """One line per object whose picture is neither in the set nor a shape: scenario, scene, object."""
    return [f"{sid}: {name}: object {o.id!r}: picture {o.picture!r} is not in the picture set"
            for sid, spec in sorted(specs.items()) for name, scene in spec.scenes.items()
            for o in scene.objects if not known(o.picture)]


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
