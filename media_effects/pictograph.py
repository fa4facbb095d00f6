"""Pictograph frames: a scene spec drawn as a camera frame a model has to look at.

`pictograph_frame(scene)` composes one `core.scenes.Scene` into a
640x480 JPEG, the size of the glasses' synthetic frames:

- the setting as a background seen from the wearer's eyes: a wall, sky or
  windscreen above a surface (counter, bench, floor, road) drawn in
  perspective, with its pattern (tiles, planks, grass, grain);
- each object from the picture set (`media_effects.pictures`, Noto Color Emoji)
  or, for the few things no picture shows, a drawn shape in the spec's
  colour; at its place in a 3x3 grid whose top row is far away (smaller,
  drawn first, so nearer things overlap it) and bottom row near; each with a
  soft shadow on the surface; states drawn over it (steam, glow, drops,
  cracks, foam, a spill, a tilt);
- the wearer's arms from the bottom edge of the frame, the right from the
  right and the left from the left, the hand closed around what it holds or
  a fingertip on what it touches;
- text only where the spec's `screen_content` says the scene shows it. No
  caption, no label, nothing else readable.

The frame is a function of the scene alone: every random detail is drawn
from a generator seeded by the scene's JSON form, so one spec always gives
the same bytes (with one Pillow version). The JPEG carries no comment: the
`authored` describer finds no text in it, and a model gets only pixels.
"""

from __future__ import annotations

import hashlib
import json
import math
import random

from PIL import Image, ImageDraw, ImageFilter, ImageFont

from core.scenes import MAX_OBJECTS, Scene, SceneObject, scene_to_json
from media_effects.pictograph_settings import background
from media_effects.pictograph_settings import rgb as _rgb
from media_effects.pictograph_settings import shade as _shade
from media_effects.pictures import PICTURES, emoji_image

WIDTH, HEIGHT = 640, 480
QUALITY = 90
SIZE_PX = {"tiny": 46, "small": 76, "medium": 116, "large": 170, "huge": 250}
ROW_Y = {"top": 0.47, "middle": 0.64, "bottom": 0.82}
ROW_SCALE = {"top": 0.62, "middle": 0.8, "bottom": 1.0}
ROW_SPREAD = {"top": 0.52, "middle": 0.72, "bottom": 0.9}
COLUMN_X = {"left": -1.0, "center": 0.0, "right": 1.0}
EDGES = {
    "left edge": (0.03, 0.62, 0.85),
    "right edge": (0.97, 0.62, 0.85),
    "top edge": (0.5, 0.1, 0.6),
    "bottom edge": (0.5, 0.97, 1.0),
}
SKIN, SKIN_SHADE = (201, 146, 110), (170, 116, 86)
SLEEVE = {"left": (58, 74, 104), "right": (58, 74, 104)}

LIGHT = {"normal": 1.0, "dim": 0.42, "bright": 1.1}


def scene_seed(scene: Scene) -> int:
    text = json.dumps(scene_to_json(scene), sort_keys=True)
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:12], 16)


# ---------------------------------------------------------------- placing objects


def placement(obj: SceneObject) -> tuple[float, float, float]:
    """(x, y, depth scale) of an object's centre in pixels."""
    if obj.place in EDGES:
        fx, fy, scale = EDGES[obj.place]
        return fx * WIDTH, fy * HEIGHT, scale
    row, column = obj.place.split()
    x = WIDTH / 2 + COLUMN_X[column] * ROW_SPREAD[row] * WIDTH * 0.36
    return x, ROW_Y[row] * HEIGHT, ROW_SCALE[row]


def _row_order(obj: SceneObject) -> float:
    return placement(obj)[1]


def _shape(obj: SceneObject, px: int, rng: random.Random) -> Image.Image:
    """A thing no picture shows, drawn in its colour."""
    colour = _rgb(obj.colour) if obj.colour else (150, 150, 150)
    w, h = px, px
    kind = obj.picture
    if kind in ("strip", "rod", "band"):
        w, h = int(px * 2.2), max(8, int(px * (0.22 if kind == "strip" else 0.08 if kind == "rod" else 0.5)))
    elif kind in ("board", "panel", "screen", "sheet", "box"):
        w, h = int(px * 1.35), px
    elif kind in ("patch", "pot", "loop", "ring"):
        w, h = int(px * 1.3), int(px * 0.8)
    image = Image.new("RGBA", (w + 8, h + 8), (0, 0, 0, 0))
    d = ImageDraw.Draw(image)
    box = (4, 4, w + 3, h + 3)
    if kind == "patch":
        cx, cy = (w + 8) / 2, (h + 8) / 2
        points = [
            (cx + math.cos(a) * w / 2 * rng.uniform(0.7, 1.0), cy + math.sin(a) * h / 2 * rng.uniform(0.7, 1.0))
            for a in (i * math.pi / 9 for i in range(18))
        ]
        d.polygon(points, fill=colour + (225,))
    elif kind == "pot":
        d.ellipse(box, fill=(40, 40, 44, 255))
        inner = (box[0] + w * 0.1, box[1] + h * 0.12, box[2] - w * 0.1, box[3] - h * 0.12)
        d.ellipse(inner, fill=(colour if "empty" not in obj.states else (70, 70, 74)) + (255,))
    elif kind in ("loop", "ring"):
        d.ellipse(box, outline=colour + (255,), width=max(4, px // 12))
    elif kind == "screen":
        d.rounded_rectangle(box, radius=px // 10, fill=(24, 28, 34, 255), outline=(90, 94, 100, 255), width=5)
    elif kind == "sheet":
        d.rectangle(box, fill=colour + (255,), outline=_shade(colour, 0.8) + (255,), width=2)
    elif kind == "box":
        d.rectangle(box, fill=colour + (255,), outline=_shade(colour, 0.6) + (255,), width=3)
        d.rectangle((box[0], box[1], box[2], box[1] + h * 0.22), fill=_shade(colour, 1.15) + (255,))
    elif kind == "board":
        d.rounded_rectangle(box, radius=8, fill=colour + (255,), outline=_shade(colour, 0.7) + (255,), width=3)
        for i in range(1, 6):
            y = box[1] + i * h / 6
            d.line((box[0] + 6, y, box[2] - 6, y + rng.randrange(-3, 4)), fill=_shade(colour, 0.88) + (255,))
    else:  # strip, rod, band, panel
        d.rectangle(box, fill=colour + (255,), outline=_shade(colour, 0.7) + (255,), width=2)
    return image


def _picture(obj: SceneObject, px: int, rng: random.Random) -> Image.Image:
    if obj.picture in PICTURES:
        glyph = emoji_image(obj.picture)
        scale = px / max(glyph.size)
        image = glyph.resize(
            (max(1, round(glyph.width * scale)), max(1, round(glyph.height * scale))), Image.Resampling.LANCZOS
        )
    else:
        image = _shape(obj, px, rng)
    if "on its side" in obj.states:
        image = image.rotate(90, expand=True, resample=Image.Resampling.BICUBIC)
    if "wilted" in obj.states:
        image = image.rotate(-28, expand=True, resample=Image.Resampling.BICUBIC)
        image = _desaturate(image, 0.45)
    if "dry" in obj.states and obj.picture in PICTURES:
        image = _desaturate(image, 0.7)
    if "blurred" in obj.states or "moving" in obj.states:
        image = image.filter(ImageFilter.GaussianBlur(3))
    return image


def _desaturate(image: Image.Image, keep: float) -> Image.Image:
    grey = image.convert("LA").convert("RGBA")
    blended = Image.blend(grey, image, keep)
    blended.putalpha(image.getchannel("A"))
    return blended


def _shadow(canvas: Image.Image, x: float, bottom: float, width: float) -> None:
    layer = Image.new("RGBA", canvas.size, (0, 0, 0, 0))
    ImageDraw.Draw(layer).ellipse(
        (x - width * 0.45, bottom - width * 0.09, x + width * 0.45, bottom + width * 0.09), fill=(0, 0, 0, 90)
    )
    canvas.alpha_composite(layer.filter(ImageFilter.GaussianBlur(6)))


def _states_under(canvas: Image.Image, obj: SceneObject, box, rng: random.Random) -> None:
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    if {"lit", "glowing", "blinking"} & set(obj.states):
        layer = Image.new("RGBA", canvas.size, (0, 0, 0, 0))
        ImageDraw.Draw(layer).ellipse(
            (x0 - w * 0.3, y0 - h * 0.3, x1 + w * 0.3, y1 + h * 0.3), fill=(255, 190, 60, 150)
        )
        canvas.alpha_composite(layer.filter(ImageFilter.GaussianBlur(14)))
    if "spilled" in obj.states:
        colour = _rgb(obj.colour) if obj.colour else (120, 40, 80)
        spill = ImageDraw.Draw(canvas)
        spill.ellipse((x0 - w * 0.4, y1 - h * 0.25, x1 + w * 0.2, y1 + h * 0.2), fill=colour + (200,))


def _states_over(canvas: Image.Image, obj: SceneObject, box, rng: random.Random) -> None:
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    draw = ImageDraw.Draw(canvas)
    if {"steaming", "boiling", "smoking"} & set(obj.states):
        layer = Image.new("RGBA", canvas.size, (0, 0, 0, 0))
        tone = (120, 120, 120, 170) if "smoking" in obj.states else (255, 255, 255, 190)
        for i in range(3):
            x = x0 + w * (0.25 + 0.25 * i)
            points = [(x + math.sin(t * 1.3 + i) * w * 0.06, y0 - t * h * 0.12) for t in range(8)]
            ImageDraw.Draw(layer).line(points, fill=tone, width=max(4, int(w * 0.05)), joint="curve")
        canvas.alpha_composite(layer.filter(ImageFilter.GaussianBlur(3)))
    if "boiling" in obj.states or "foamy" in obj.states:
        for _ in range(14 if "boiling" in obj.states else 26):
            r = rng.uniform(3, max(4, w * 0.05))
            x, y = rng.uniform(x0 + w * 0.15, x1 - w * 0.15), rng.uniform(y0 + h * 0.15, y1 - h * 0.3)
            draw.ellipse((x - r, y - r, x + r, y + r), outline=(255, 255, 255, 230), width=2)
    if {"wet", "dripping"} & set(obj.states):
        drop = emoji_image("droplet")
        size = max(14, int(w * 0.16))
        small = drop.resize((size, round(size * drop.height / drop.width)), Image.Resampling.LANCZOS)
        spots = [(x1 - size * 0.6, y0 + h * 0.1), (x0 + w * 0.2, y1 - size * 0.4)]
        if "dripping" in obj.states:
            spots.append((x0 + w * 0.5, y1 + size * 0.2))
        for sx, sy in spots:
            canvas.alpha_composite(small, (int(sx), int(sy)))
    if "cracked" in obj.states:
        x, y = x0 + w * 0.3, y0 + h * 0.2
        for _ in range(6):
            nx, ny = x + rng.uniform(-w * 0.12, w * 0.16), y + h * 0.12
            draw.line((x, y, nx, ny), fill=(50, 40, 30, 255), width=3)
            x, y = nx, ny
    if "dirty" in obj.states:
        for _ in range(40):
            x, y = rng.uniform(x0, x1), rng.uniform(y0, y1)
            draw.ellipse((x - 2, y - 2, x + 3, y + 3), fill=(60, 60, 50, 200))
    if "blinking" in obj.states or "spinning" in obj.states:
        for a in range(0, 360, 45):
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            r0, r1 = max(w, h) * 0.58, max(w, h) * 0.72
            draw.line(
                (
                    cx + math.cos(math.radians(a)) * r0,
                    cy + math.sin(math.radians(a)) * r0,
                    cx + math.cos(math.radians(a)) * r1,
                    cy + math.sin(math.radians(a)) * r1,
                ),
                fill=(255, 170, 40, 255) if "blinking" in obj.states else (90, 90, 90, 255),
                width=3,
            )
    if "full" in obj.states and obj.picture in PICTURES:
        colour = _rgb(obj.colour) if obj.colour else (130, 90, 60)
        for _ in range(12):
            x, y = rng.uniform(x0 + w * 0.25, x1 - w * 0.25), rng.uniform(y0 + h * 0.15, y0 + h * 0.4)
            draw.ellipse((x - 5, y - 4, x + 5, y + 4), fill=colour + (255,))
    if "open" in obj.states and obj.picture in PICTURES:
        draw.ellipse((x0 + w * 0.25, y0 - h * 0.04, x1 - w * 0.25, y0 + h * 0.12), fill=(30, 30, 30, 230))
    if obj.screen_content:
        _screen_text(canvas, obj, box)


def _screen_text(canvas: Image.Image, obj: SceneObject, box) -> None:
    """The text the scene shows on this object: on a dark panel inside it, sized to fit."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    draw = ImageDraw.Draw(canvas)
    if obj.picture not in ("screen", "panel", "sheet", "board", "box"):
        px0, py0, px1, py1 = x0 + w * 0.22, y0 + h * 0.3, x1 - w * 0.22, y1 - h * 0.3
        draw.rounded_rectangle((px0, py0, px1, py1), radius=6, fill=(20, 24, 30, 255))
    else:
        px0, py0, px1, py1 = x0 + w * 0.1, y0 + h * 0.15, x1 - w * 0.1, y1 - h * 0.15
    dark_panel = obj.picture in PICTURES or obj.picture == "screen"
    colour = _rgb(obj.colour) if obj.colour else ((120, 230, 120) if dark_panel else (30, 30, 30))
    text = obj.screen_content
    if not text:  # the caller draws only the text a scene shows
        return
    size = 64
    while size > 10:
        font = ImageFont.load_default(size=size)
        left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
        if right - left <= (px1 - px0) * 0.92 and bottom - top <= (py1 - py0) * 0.8:
            break
        size -= 2
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    tx = (px0 + px1) / 2 - (right - left) / 2 - left
    ty = (py0 + py1) / 2 - (bottom - top) / 2 - top
    draw.text((tx, ty), text, font=font, fill=colour + (255,))


# ---------------------------------------------------------------- hands


def _arm(canvas: Image.Image, side: str, tip: tuple[float, float], width: float) -> None:
    """The wearer's forearm from the bottom edge to `tip`, sleeve first, skin toward the hand."""
    base_x = WIDTH * (0.86 if side == "right" else 0.14)
    tx, ty = tip
    base = (base_x + (WIDTH * 0.1 if side == "right" else -WIDTH * 0.1), HEIGHT + 40)
    dx, dy = tx - base[0], ty - base[1]
    length = math.hypot(dx, dy) or 1.0
    nx, ny = -dy / length, dx / length

    def band(start: float, end: float, w0: float, w1: float, fill) -> None:
        p0 = (base[0] + dx * start, base[1] + dy * start)
        p1 = (base[0] + dx * end, base[1] + dy * end)
        ImageDraw.Draw(canvas).polygon(
            (
                (p0[0] + nx * w0, p0[1] + ny * w0),
                (p1[0] + nx * w1, p1[1] + ny * w1),
                (p1[0] - nx * w1, p1[1] - ny * w1),
                (p0[0] - nx * w0, p0[1] - ny * w0),
            ),
            fill=fill,
        )

    band(0.0, 1.0, width * 0.5, width * 0.3, SKIN_SHADE + (255,))
    band(0.0, 0.98, width * 0.45, width * 0.26, SKIN + (255,))
    band(0.0, 0.5, width * 0.56, width * 0.46, SLEEVE[side] + (255,))
    r = width * 0.36
    ImageDraw.Draw(canvas).ellipse(
        (tx - r, ty - r * 0.8, tx + r, ty + r * 0.8), fill=SKIN + (255,), outline=SKIN_SHADE + (255,), width=2
    )


def _grip(canvas: Image.Image, centre: tuple[float, float], size: float, side: str) -> None:
    """Fingers closed over a held object: four knuckles across it, the thumb on the near side."""
    draw = ImageDraw.Draw(canvas)
    cx, cy = centre
    f = size * 0.13
    direction = -1 if side == "right" else 1
    for i in range(4):
        x = cx + direction * (i - 1.5) * f * 0.95
        y = cy + (i - 1.5) * f * 0.25
        draw.rounded_rectangle(
            (x - f * 0.5, y - f * 0.85, x + f * 0.5, y + f * 0.85),
            radius=f * 0.45,
            fill=SKIN + (255,),
            outline=SKIN_SHADE + (255,),
            width=2,
        )
    tx = cx - direction * f * 2.3
    draw.rounded_rectangle(
        (tx - f * 0.55, cy - f * 0.2, tx + f * 0.55, cy + f * 1.6),
        radius=f * 0.5,
        fill=SKIN + (255,),
        outline=SKIN_SHADE + (255,),
        width=2,
    )


def _fingertip(canvas: Image.Image, start: tuple[float, float], end: tuple[float, float], width: float) -> None:
    draw = ImageDraw.Draw(canvas)
    draw.line((start, end), fill=SKIN_SHADE + (255,), width=int(width * 0.2))
    draw.line((start, end), fill=SKIN + (255,), width=int(width * 0.15))
    r = width * 0.08
    draw.ellipse((end[0] - r, end[1] - r, end[0] + r, end[1] + r), fill=SKIN + (255,))


# ---------------------------------------------------------------- the frame


def render_scene(scene: Scene) -> Image.Image:
    """The scene as an RGB image of WIDTH x HEIGHT. A scene of more than `MAX_OBJECTS` objects (made
    in code: the parser refuses such a spec) is refused before anything is drawn."""
    if len(scene.objects) > MAX_OBJECTS:
        raise ValueError(f"a scene of {len(scene.objects):,} objects: at most {MAX_OBJECTS} are drawn")
    rng = random.Random(scene_seed(scene))
    canvas = background(scene.setting, rng).convert("RGBA")
    hands = {hand.side: hand for hand in scene.hands}
    held = {hand.holds: hand.side for hand in scene.hands if hand.holds}
    placed: dict[str, tuple] = {}
    crowd: dict[tuple[str, str], int] = {}  # (place, size): how many stand there
    for obj in sorted(scene.objects, key=_row_order):  # stable: one place's objects in the spec's order
        x, y, scale = placement(obj)
        # two things of one size at one place stand side by side; a smaller one sits on (or in) a larger one
        key = (obj.place, obj.size)
        n = crowd.get(key, 0)
        crowd[key] = n + 1
        px = SIZE_PX[obj.size] * scale
        x += (n % 2 * 2 - 1) * (n > 0) * px * 0.55 * ((n + 1) // 2)
        y += (n > 0) * px * 0.12
        image = _picture(obj, int(px), rng)
        box = (x - image.width / 2, y - image.height / 2, x + image.width / 2, y + image.height / 2)
        placed[obj.id] = (image, box)
    # a smaller thing at a held thing's place sits on it (cookies on the sheet the mitt holds): drawn after it
    carried_on = {
        o.id: held[h.id]
        for h in scene.objects
        if h.id in held
        for o in scene.objects
        if o.id not in held and o.place == h.place and SIZE_PX[o.size] < SIZE_PX[h.size]
    }
    order = [
        o
        for o in sorted(scene.objects, key=lambda o: (_row_order(o), -SIZE_PX[o.size]))
        if o.id not in held and o.id not in carried_on
    ]

    def draw(obj: SceneObject, shadow: bool = True) -> None:
        image, box = placed[obj.id]
        if shadow and obj.picture not in ("band", "panel", "patch") and obj.place not in ("top edge",):
            _shadow(canvas, (box[0] + box[2]) / 2, box[3], box[2] - box[0])
        _states_under(canvas, obj, box, rng)
        canvas.alpha_composite(image, (int(box[0]), int(box[1])))
        _states_over(canvas, obj, box, rng)

    def draw_held(object_id: str) -> None:
        obj = scene.object(object_id)
        if obj is None:  # `placed` has every object of the scene
            raise ValueError(f"the scene has no object {object_id!r}")
        draw(obj, shadow=False)

    for obj in order:
        draw(obj)
    arm_width = 112
    for side, hand in sorted(hands.items()):
        target = hand.holds or hand.touches
        if target is None:
            tip = (WIDTH * (0.7 if side == "right" else 0.3), HEIGHT * 0.78)
            _arm(canvas, side, tip, arm_width)
            _grip(canvas, tip, arm_width * 0.9, side)
            continue
        image, box = placed[target]
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        if hand.holds:  # the fist closes on the lower end, so most of what it holds stays in view
            height = box[3] - box[1]
            grip = (cx, box[3] - min(height * 0.12, 14))
            _arm(canvas, side, grip, arm_width)
            draw_held(target)
            for object_id, holder in carried_on.items():
                if holder == side:
                    draw_held(object_id)
            _grip(canvas, grip, arm_width * 0.85, side)
        else:
            reach = (cx + (30 if side == "right" else -30), min(HEIGHT - 20, box[3] + 40))
            _arm(canvas, side, reach, arm_width)
            _fingertip(canvas, reach, (cx, cy), arm_width)
    image = canvas.convert("RGB")
    if scene.light != "normal":
        from PIL import ImageEnhance

        image = ImageEnhance.Brightness(image).enhance(LIGHT[scene.light])
    return image


def pictograph_frame(scene: Scene) -> bytes:
    """The scene as a camera frame: a baseline JPEG of WIDTH x HEIGHT, no comment."""
    import io

    buffer = io.BytesIO()
    render_scene(scene).save(buffer, format="JPEG", quality=QUALITY, optimize=False)
    return buffer.getvalue()
