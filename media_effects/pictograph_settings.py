"""The settings of pictograph frames: a background per setting, seen from the wearer's eyes.

Each setting is a wall, sky or windscreen above a surface (counter, bench,
floor, road, dashboard) from a horizon line down, each with its pattern
(tiles, planks, grass, a window, houses, a road ahead); `background(setting,
rng)` draws one 640x480 image. `core.scenes.SETTINGS` names the same
settings; a test keeps the two in step.
"""

from __future__ import annotations

import random

from PIL import Image, ImageDraw

WIDTH, HEIGHT = 640, 480


def rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def shade(colour, factor: float) -> tuple[int, int, int]:
    return tuple(max(0, min(255, round(c * factor))) for c in colour)


# setting -> (upper colour, surface colour, horizon as a share of the height, surface pattern, upper pattern)
SETTINGS: dict[str, tuple[str, str, float, str, str]] = {
    "kitchen counter": ("#e9e2d0", "#d7cbb4", 0.36, "grain", "tiles"),
    "stovetop": ("#dcd6cc", "#2e2e30", 0.3, "burners", "tiles"),
    "workbench": ("#cfc6b8", "#b98d5a", 0.3, "planks", "pegboard"),
    "garage floor": ("#b9b6ae", "#8f8d88", 0.22, "speckle", "plain"),
    "painted wall": ("#e8e4da", "#d9d4c8", 0.86, "plain", "plain"),
    "garden": ("#9fc7e8", "#6f9a48", 0.34, "grass", "sky"),
    "desk": ("#d8d2c6", "#8a6a4a", 0.4, "grain", "plain"),
    "office": ("#eef0f2", "#c9ccd0", 0.48, "speckle", "window"),
    "bathroom": ("#f2f4f4", "#e2e6e6", 0.55, "tiles", "tiles"),
    "living room": ("#efe3cf", "#c79a5e", 0.42, "planks", "window"),
    "street": ("#a9cbe6", "#77777a", 0.45, "road", "houses"),
    "car interior": ("#9aa7b4", "#2b2b2e", 0.5, "dashboard", "windscreen"),
    "engine bay": ("#4a4a4c", "#2c2c2e", 0.15, "speckle", "plain"),
    "gym": ("#cfd3d6", "#2f2f33", 0.4, "speckle", "mirror"),
    "trail": ("#9ccbee", "#c8ae7c", 0.42, "path", "hills"),
    "beach": ("#8cc4ec", "#ead9ae", 0.4, "speckle", "sea"),
    "yard": ("#a6cdea", "#74a54f", 0.42, "grass", "fence"),
    "shop counter": ("#e6e8ea", "#9a9da2", 0.42, "plain", "shelves"),
    "windowsill": ("#9cc4e4", "#ecebe6", 0.55, "plain", "window"),
    "hallway ceiling": ("#f4f3ef", "#f4f3ef", 1.0, "plain", "plain"),
    "laundry room": ("#e6e9ec", "#bfc3c6", 0.5, "tiles", "plain"),
    "sewing table": ("#e8e0d6", "#7aa37a", 0.3, "grid", "plain"),
    "dining table": ("#efe6d6", "#b58a5c", 0.36, "grain", "window"),
    "dim room": ("#3b2f26", "#4a3524", 0.45, "grain", "plain"),
    "under sink": ("#3a3632", "#55504a", 0.4, "plain", "plain"),
    "driveway": ("#b7d3ea", "#8b8a86", 0.4, "speckle", "houses"),
    "waterfall": ("#8fc4ec", "#6f7a6a", 0.55, "speckle", "cliff"),
    "forest": ("#5d7a4a", "#4f5e36", 0.45, "grass", "trunks"),
    "road": ("#9fb9cf", "#2b2b2e", 0.62, "dashboard", "roadview"),
    "bike stand": ("#d4d2cc", "#8e8b86", 0.45, "speckle", "pegboard"),
}


def background(setting: str, rng: random.Random) -> Image.Image:
    upper_hex, surface_hex, horizon, pattern, upper_pattern = SETTINGS[setting]
    upper, surface = rgb(upper_hex), rgb(surface_hex)
    image = Image.new("RGB", (WIDTH, HEIGHT), upper)
    draw = ImageDraw.Draw(image)
    y0 = round(HEIGHT * horizon)
    _upper(draw, upper_pattern, upper, y0, rng)
    if y0 < HEIGHT:
        draw.rectangle((0, y0, WIDTH, HEIGHT), fill=surface)
        _surface(draw, pattern, surface, y0, rng)
        draw.line((0, y0, WIDTH, y0), fill=shade(surface, 0.75), width=3)
    return image


def _upper(draw: ImageDraw.ImageDraw, pattern: str, colour, y0: int, rng: random.Random) -> None:
    dark = shade(colour, 0.86)
    if pattern == "tiles":
        for x in range(0, WIDTH, 48):
            draw.line((x, 0, x, y0), fill=dark, width=2)
        for y in range(0, y0, 48):
            draw.line((0, y, WIDTH, y), fill=dark, width=2)
    elif pattern == "pegboard":
        for x in range(12, WIDTH, 28):
            for y in range(10, y0 - 4, 28):
                draw.ellipse((x - 2, y - 2, x + 2, y + 2), fill=shade(colour, 0.6))
    elif pattern == "window":
        x0 = rng.randrange(60, 260)
        draw.rectangle((x0, 20, x0 + 220, max(40, y0 - 30)), fill=(196, 224, 245), outline=(250, 250, 250), width=8)
        draw.line((x0 + 110, 20, x0 + 110, max(40, y0 - 30)), fill=(250, 250, 250), width=6)
    elif pattern == "sky":
        draw.ellipse((WIDTH - 110, 18, WIDTH - 50, 78), fill=(255, 236, 150))
    elif pattern == "houses":
        x = 0
        while x < WIDTH:
            w, h = rng.randrange(70, 130), rng.randrange(60, 130)
            tone = rng.choice(((196, 150, 120), (170, 160, 150), (214, 196, 170), (150, 110, 90)))
            draw.rectangle((x, y0 - h, x + w - 6, y0), fill=tone)
            for wx in range(x + 10, x + w - 20, 26):
                draw.rectangle((wx, y0 - h + 14, wx + 12, y0 - h + 30), fill=(120, 150, 175))
            x += w
    elif pattern == "windscreen":
        draw.rectangle((0, 0, WIDTH, y0), fill=(150, 170, 190))
        draw.polygon(((0, 0), (90, 0), (30, y0), (0, y0)), fill=(40, 40, 44))
        draw.polygon(((WIDTH, 0), (WIDTH - 90, 0), (WIDTH - 30, y0), (WIDTH, y0)), fill=(40, 40, 44))
    elif pattern == "roadview":
        draw.rectangle((0, round(y0 * 0.55), WIDTH, y0), fill=(90, 90, 94))
        for i in range(4):
            lane_x = WIDTH // 2 + (i - 1.5) * 160
            draw.line((lane_x, y0, WIDTH // 2 + (i - 1.5) * 20, round(y0 * 0.55)), fill=(235, 235, 235), width=3)
        draw.polygon(((0, 0), (70, 0), (20, y0), (0, y0)), fill=(40, 40, 44))
        draw.polygon(((WIDTH, 0), (WIDTH - 70, 0), (WIDTH - 20, y0), (WIDTH, y0)), fill=(40, 40, 44))
    elif pattern == "mirror":
        draw.rectangle((40, 30, WIDTH - 40, y0 - 10), fill=(200, 212, 220), outline=(120, 120, 124), width=5)
    elif pattern == "hills":
        draw.polygon(
            ((0, y0), (160, y0 - 70), (330, y0 - 20), (480, y0 - 90), (WIDTH, y0 - 30), (WIDTH, y0)),
            fill=(214, 196, 150),
        )
    elif pattern == "sea":
        draw.rectangle((0, y0 - 60, WIDTH, y0), fill=(60, 130, 190))
        for _ in range(30):
            x, y = rng.randrange(WIDTH), rng.randrange(y0 - 58, y0 - 4)
            draw.line((x, y, x + 14, y), fill=(250, 250, 255), width=2)
    elif pattern == "fence":
        for x in range(0, WIDTH, 34):
            draw.rectangle((x, y0 - 150, x + 28, y0), fill=(150, 140, 128), outline=(120, 112, 102))
    elif pattern == "shelves":
        for y in range(40, y0 - 20, 60):
            draw.rectangle((0, y, WIDTH, y + 8), fill=(150, 150, 155))
            for x in range(10, WIDTH, 30):
                tone = rng.choice(((220, 80, 60), (240, 200, 60), (70, 140, 200), (90, 170, 90)))
                draw.rectangle((x, y - 40, x + 20, y - 4), fill=tone)
    elif pattern == "cliff":
        draw.rectangle((0, 0, WIDTH, y0), fill=(110, 105, 95))
        draw.rectangle((WIDTH // 2 - 70, 0, WIDTH // 2 + 70, y0), fill=(250, 250, 252))
    elif pattern == "trunks":
        for x in range(20, WIDTH, 110):
            draw.rectangle((x, 0, x + 34, y0 + 20), fill=(92, 70, 48))


def _surface(draw: ImageDraw.ImageDraw, pattern: str, colour, y0: int, rng: random.Random) -> None:
    dark, light = shade(colour, 0.84), shade(colour, 1.1)
    span = HEIGHT - y0
    vanish = WIDTH / 2
    if pattern == "grain":
        for _ in range(40):
            y = rng.randrange(y0 + 4, HEIGHT)
            draw.line(
                (rng.randrange(-50, WIDTH), y, rng.randrange(0, WIDTH + 50), y + rng.randrange(-3, 4)),
                fill=dark,
                width=1,
            )
    elif pattern == "planks":
        for x in range(-WIDTH, 2 * WIDTH, 90):
            draw.line((vanish + (x - vanish) * 0.35, y0, x, HEIGHT), fill=dark, width=3)
    elif pattern == "tiles":
        for x in range(-WIDTH, 2 * WIDTH, 70):
            draw.line((vanish + (x - vanish) * 0.4, y0, x, HEIGHT), fill=dark, width=2)
        step: float = 16
        y = y0
        while y < HEIGHT:
            draw.line((0, y, WIDTH, y), fill=dark, width=2)
            step = step * 1.3
            y += round(step)
    elif pattern == "grass":
        for _ in range(220):
            x, y = rng.randrange(WIDTH), rng.randrange(y0, HEIGHT)
            draw.line(
                (x, y, x + rng.randrange(-3, 4), y - rng.randrange(4, 12)),
                fill=light if rng.random() < 0.5 else dark,
                width=2,
            )
    elif pattern == "speckle":
        for _ in range(260):
            x, y = rng.randrange(WIDTH), rng.randrange(y0, HEIGHT)
            draw.point((x, y), fill=dark if rng.random() < 0.5 else light)
    elif pattern == "burners":
        for cx in (0.28, 0.72):
            for cy in (0.35, 0.8):
                bx, by = WIDTH * cx, y0 + span * cy
                draw.ellipse((bx - 70, by - 26, bx + 70, by + 26), outline=(80, 80, 84), width=6)
    elif pattern == "road":
        draw.polygon(
            ((vanish - 8, y0), (vanish + 8, y0), (vanish + 30, HEIGHT), (vanish - 30, HEIGHT)), fill=(230, 230, 230)
        )
    elif pattern == "path":
        draw.polygon(
            ((vanish - 30, y0), (vanish + 30, y0), (WIDTH * 0.8, HEIGHT), (WIDTH * 0.2, HEIGHT)),
            fill=shade(colour, 1.12),
        )
        for _ in range(120):
            x, y = rng.randrange(WIDTH), rng.randrange(y0, HEIGHT)
            draw.line((x, y, x, y - 10), fill=(196, 176, 110), width=2)
    elif pattern == "dashboard":
        draw.arc((WIDTH * 0.2, y0 + 10, WIDTH * 0.8, HEIGHT * 1.5), 190, 350, fill=(60, 60, 64), width=26)
    elif pattern == "grid":
        for x in range(0, WIDTH, 32):
            draw.line((x, y0, x, HEIGHT), fill=light, width=1)
        for y in range(y0, HEIGHT, 32):
            draw.line((0, y, WIDTH, y), fill=light, width=1)
