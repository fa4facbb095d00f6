"""A contact sheet of pictograph frames: one row per scenario, one column per scene.

For people, not models: the sheet labels each row with its scenario id and
each column with its scene (`context`, `turn_1`, `turn_2`), outside the
frames; a scene none of the rows has (most scenarios have no context scene)
gets no column. `wearsim media synth --pictograph-frames --contact-sheet FILE`
writes one; docs/pictographs.md shows the one kept in docs/.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from core.scenes import SCENE_NAMES
from media_effects.pictograph import render_scene

LABEL_W = 90  # the row labels' margin
HEADER_H = 28


def contact_sheet(specs: dict, *, ids=None, thumb: tuple[int, int] = (256, 192)) -> Image.Image:
    """specs: scenario id -> `SceneSpec`; `ids`: which scenarios, in order (default: all, sorted)."""
    ids = list(ids) if ids is not None else sorted(specs)
    names = [name for name in SCENE_NAMES if any(name in specs[i].scenes for i in ids)]
    w, h = thumb
    sheet = Image.new("RGB", (LABEL_W + w * len(names), HEADER_H + h * len(ids)), (250, 250, 250))
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default(size=16)
    for column, name in enumerate(names):
        draw.text((LABEL_W + column * w + 8, 6), name, font=font, fill=(40, 40, 40))
    for row, scenario_id in enumerate(ids):
        y = HEADER_H + row * h
        draw.text((8, y + h // 2 - 8), scenario_id, font=font, fill=(40, 40, 40))
        for column, name in enumerate(names):
            scene = specs[scenario_id].scenes.get(name)
            if scene is not None:
                sheet.paste(render_scene(scene).resize(thumb, Image.Resampling.LANCZOS), (LABEL_W + column * w, y))
            draw.rectangle(
                (LABEL_W + column * w, y, LABEL_W + (column + 1) * w - 1, y + h - 1), outline=(255, 255, 255)
            )
    return sheet


def write_contact_sheet(path: str | Path, specs: dict, *, ids=None) -> Path:
    path = Path(path)
    image = contact_sheet(specs, ids=ids)
    image.save(path, quality=85) if path.suffix.lower() in (".jpg", ".jpeg") else image.save(path)
    return path
