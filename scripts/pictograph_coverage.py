"""How the bank's scene specs are drawn: objects by a picture of the thing itself, by a stand-in
picture, or as a shape; and, given another font (e.g. Debian's Symbola), how many of the pictures
used it has.

    python scripts/pictograph_coverage.py [OTHER_FONT.ttf]

A picture counts as the thing itself when a word of its name is a word of the object's name
("knife" for "paring knife"), a stand-in otherwise ("scissors" for "loppers")."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.scenario import load_bank  # noqa: E402
from core.scenes import load_scene_specs  # noqa: E402
from media_effects.pictures import PICTURES, SHAPES  # noqa: E402

WORD = re.compile(r"[a-z]+")


def main(other_font: str | None = None) -> None:
    specs = load_scene_specs(load_bank(), required=True)
    objects = {(sid, o.id): o for sid, spec in specs.items() for scene in spec.scenes.values() for o in scene.objects}
    kinds = Counter()
    for o in objects.values():
        if o.picture in SHAPES:
            kinds["shape"] += 1
            continue
        words, picture = set(WORD.findall(o.name.lower())), set(WORD.findall(o.picture))
        kinds["itself" if words & picture or {w.rstrip("s") for w in words} & picture else "stand-in"] += 1
    total = len(objects)
    print(f"{total} objects: " + ", ".join(f"{k} {n} ({n / total:.0%})" for k, n in kinds.most_common()))
    used = sorted({o.picture for o in objects.values() if o.picture in PICTURES})
    print(f"{len(used)} pictures used, all in Noto Color Emoji")
    if other_font:
        from PIL import ImageFont

        font = ImageFont.truetype(other_font, 40)
        empty = font.getmask("\ue000").getbbox()  # what a missing glyph draws
        has = [p for p in used if font.getmask(PICTURES[p]).getbbox() not in (None, empty)]
        print(f"{Path(other_font).name}: {len(has)} of {len(used)}; missing: {', '.join(sorted(set(used) - set(has)))}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
