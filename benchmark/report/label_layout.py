"""Point labels on a chart that never overlap: each label keeps its place when it is free,
else moves up or down by whole label heights to the nearest free place (the plot draws a
thin line from the point to a moved label). Pure geometry, in pixels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Label:
    x: float  # left edge
    y: float  # vertical centre, where the point is
    width: float
    height: float


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_labels(
    labels: list[Label],
    *,
    top: float = float("-inf"),
    bottom: float = float("inf"),
    obstacles: Sequence[tuple[float, float, float, float]] = (),
    tries: int = 40,
) -> list[float]:
    """Each label's vertical centre after placing them, top to bottom, one at a time: its own y if
    neither a label placed before nor an obstacle (a point's marker: left, top, right, bottom) is
    under it, else the nearest of y + h, y - h, y + 2h, ... that is free and inside [top, bottom]
    (its own y when none of `tries` is)."""
    placed: list[tuple[float, float, float, float]] = list(obstacles)
    centres = [0.0] * len(labels)
    for i in sorted(range(len(labels)), key=lambda n: (labels[n].y, labels[n].x)):
        label = labels[i]
        gap = label.height + 1

        def box(centre: float, label: Label = label, gap: float = gap) -> tuple[float, float, float, float]:
            return label.x, centre - gap / 2, label.x + label.width, centre + gap / 2

        steps = [0] + [s for k in range(1, tries + 1) for s in (k, -k)]
        chosen = label.y
        for step in steps:
            centre = label.y + step * gap
            if not top <= centre - gap / 2 or not centre + gap / 2 <= bottom:
                continue
            if not any(_overlaps(box(centre), other) for other in placed):
                chosen = centre
                break
        centres[i] = chosen
        placed.append(box(chosen))
    return centres
