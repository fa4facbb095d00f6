"""Render the sample stills under media/ (a few scenarios get frames so the
stream path exercises perceived camera blocks). Drawn with OpenCV shapes
that follow each scene description; registered in media/index.json as
synthesized.

    .venv/bin/python scripts/render_sample_frames.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from media_effects.media import MEDIA_ROOT  # noqa: E402
from media_effects.media_library import register  # noqa: E402

W, H = 320, 240


def canvas(bgr):
    return np.full((H, W, 3), bgr, np.uint8)


def sc05_turn_1():  # wide flat bristle head on a wooden handle, cream paint, near a white trim edge
    img = canvas((200, 215, 225))
    cv2.rectangle(img, (250, 0), (320, 240), (245, 245, 245), -1)
    cv2.rectangle(img, (120, 150), (150, 235), (40, 80, 140), -1)
    cv2.rectangle(img, (100, 90), (170, 150), (60, 60, 60), -1)
    cv2.rectangle(img, (100, 70), (170, 100), (190, 230, 245), -1)
    return img


def sc05_turn_2():  # fluffy cream cylinder on a metal frame against a wall with a stippled band
    img = canvas((200, 215, 225))
    cv2.rectangle(img, (0, 60), (320, 130), (190, 230, 245), -1)
    cv2.rectangle(img, (110, 70), (210, 110), (180, 220, 240), -1)
    cv2.line(img, (160, 110), (160, 235), (150, 150, 150), 6)
    return img


def sc13_turn_1():  # dark round vessel, thin pale liquid
    img = canvas((90, 90, 90))
    cv2.circle(img, (160, 120), 95, (30, 30, 30), -1)
    cv2.circle(img, (160, 120), 80, (170, 200, 215), -1)
    return img


def sc13_turn_2():  # same vessel, glossy deep red thick mixture with bubbles
    img = canvas((90, 90, 90))
    cv2.circle(img, (160, 120), 95, (30, 30, 30), -1)
    cv2.circle(img, (160, 120), 80, (20, 20, 150), -1)
    for x, y in ((130, 100), (185, 140), (160, 90)):
        cv2.circle(img, (x, y), 9, (40, 40, 190), 2)
    return img


def sc47_context():  # dark vessel with oil on the left, tall steel vessel of water with white crystals on the right
    img = canvas((110, 120, 130))
    cv2.circle(img, (80, 140), 65, (25, 25, 25), -1)
    cv2.rectangle(img, (185, 40), (300, 220), (200, 200, 205), -1)
    cv2.rectangle(img, (195, 60), (290, 210), (210, 180, 150), -1)
    for x in range(205, 285, 12):
        cv2.circle(img, (x, 70), 3, (255, 255, 255), -1)
    return img


def sc47_turn_1():  # tall steel vessel, long golden strands bending in
    img = canvas((110, 120, 130))
    cv2.rectangle(img, (90, 30), (230, 230), (200, 200, 205), -1)
    for x in range(110, 210, 8):
        cv2.line(img, (x, 10), (x + 20, 200), (80, 200, 235), 3)
    return img


def sc47_turn_2():  # wide vessel, strands in a glossy red coating
    img = canvas((110, 120, 130))
    cv2.ellipse(img, (160, 130), (140, 90), 0, 0, 360, (220, 220, 225), -1)
    cv2.ellipse(img, (160, 130), (110, 65), 0, 0, 360, (30, 40, 170), -1)
    return img


FRAMES = {
    ("sc-05", "turn_1"): sc05_turn_1,
    ("sc-05", "turn_2"): sc05_turn_2,
    ("sc-13", "turn_1"): sc13_turn_1,
    ("sc-13", "turn_2"): sc13_turn_2,
    ("sc-47", "context"): sc47_context,
    ("sc-47", "turn_1"): sc47_turn_1,
    ("sc-47", "turn_2"): sc47_turn_2,
}


def main() -> int:
    for (scenario_id, name), draw in FRAMES.items():
        path = MEDIA_ROOT / scenario_id / f"{name}.jpg"
        path.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(path), draw(), [cv2.IMWRITE_JPEG_QUALITY, 85])
        register(MEDIA_ROOT, path, "synthesized", "rendered with OpenCV shapes by scripts/render_sample_frames.py")
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
