"""PNG charts drawn with Pillow, for the report's and the proxy report's plots.

A `Figure` is the image and its title; it holds one or more `Axes`, each a
box with a linear scale on x and on y, on which bars, intervals, lines,
markers and text are placed in data coordinates. Ticks, axis labels and a
legend are drawn on request. Everything is drawn at twice the size and halved
when saved, which smooths lines and edges. A chart takes a few tens of
milliseconds to draw and write; matplotlib, which drew these plots before,
took about 0.3 s of CPU just to import.

Sizes are in pixels of the saved image; a y range given high to low turns the
axis over (the first category at the top).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

from PIL import Image, ImageDraw, ImageFont

SCALE = 2
INK = "#222222"
MUTED = "#555555"
FRAME = "#888888"
# matplotlib's tab10 cycle, so a condition keeps the colour it had in earlier reports
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
# ColorBrewer's "Blues", light to dark
BLUES = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b")
# counter-clockwise turns by a multiple of 90 degrees, as `Image.rotate` would turn
ROTATIONS = {90: Image.Transpose.ROTATE_90, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_270}


@cache
def font(size: float) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:  # (the bitmap one without FreeType)
    """Pillow's built-in scalable font at `size` pixels (no font file needed)."""
    return ImageFont.load_default(size=round(size * SCALE))


def text_width(text: str, size: float = 11) -> float:
    """Width in pixels of the widest line of `text` at `size`."""
    return max(font(size).getlength(line) for line in text.split("\n")) / SCALE


def line_height(size: float) -> float:
    return 1.3 * size


def palette(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def blues(share: float) -> tuple[int, int, int]:
    """The colour at `share` (0 light to 1 dark) of the Blues scale."""
    share = min(1.0, max(0.0, share)) * (len(BLUES) - 1)
    low = min(int(share), len(BLUES) - 2)
    a, b = _rgb(BLUES[low]), _rgb(BLUES[low + 1])
    t = share - low
    red, green, blue = (round(x + (y - x) * t) for x, y in zip(a, b))
    return red, green, blue


def ink_on(colour: tuple[int, int, int]) -> str:
    """White or dark text, whichever reads on a fill of `colour`."""
    r, g, b = colour
    return "white" if 0.299 * r + 0.587 * g + 0.114 * b < 140 else "#111111"


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return r, g, b


def nice_ticks(top: float, *, count: int = 5, integer: bool = False) -> list[float]:
    """Ticks from 0 to at least `top`, `count` or fewer steps of 1, 2 or 5 times a power of ten."""
    raw = max(top, 1e-9) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    if integer:
        step = max(1, round(step))
    return [round(i * step, 12) for i in range(math.ceil(top / step - 1e-9) + 1)]


def value_axis(values: list[float], *, empty_top: float = 1.0) -> tuple[tuple[float, float], list[float], bool]:
    """An x axis over `values` (>= 0): (range, ticks, one_value). Several values: from 0 to a little past the
    largest, with `nice_ticks`. One value only (every cost $0, one latency): that value in the middle with
    its one tick, and `one_value` True so the plot says so, never a scale of ticks (a $0 axis ruled in $2e-07
    steps) that invents a spread the data does not have. No value: 0 to `empty_top`."""
    distinct = set(values)
    if len(distinct) == 1:
        value = distinct.pop()
        return (0.0, 2 * value) if value > 0 else (-1.0, 1.0), [value], True
    top = max(values, default=0.0)
    ticks = nice_ticks(top * 1.1 if top > 0 else empty_top)
    return (0.0, ticks[-1]), ticks, False


def tick_label(value: float) -> str:
    return f"{value:g}"


class Figure:
    def __init__(self, width: int, height: int, title: str = "", *, title_colour: str = INK):
        self.width, self.height = width, height
        self.image = Image.new("RGB", (width * SCALE, height * SCALE), "white")
        self.draw = ImageDraw.Draw(self.image)
        if title:
            self.text(width / 2, 8, title, size=13, colour=title_colour, anchor="mt")

    def axes(
        self,
        left: float,
        top: float,
        right: float,
        bottom: float,
        *,
        x: tuple[float, float] = (0, 1),
        y: tuple[float, float] = (0, 1),
    ) -> Axes:
        """Axes whose box sits these many pixels in from the figure's edges."""
        return Axes(self, (left, top, self.width - right, self.height - bottom), x, y)

    def text(
        self,
        x: float,
        y: float,
        text: str,
        *,
        size: float = 11,
        colour: str = INK,
        anchor: str = "lt",
        angle: float = 0,
    ) -> None:
        """`text` at pixel (x, y). `anchor` is Pillow's two letters: l/m/r across, t/m/b down
        (for the block of lines). `angle` turns it counter-clockwise about that point."""
        lines = text.split("\n")
        step = line_height(size) * SCALE
        block_top = -{"t": 0, "m": 0.5, "b": 1}[anchor[1]] * step * len(lines)
        if angle == 0:
            for i, line in enumerate(lines):
                self.draw.text(
                    (x * SCALE, y * SCALE + block_top + (i + 0.5) * step),
                    line,
                    font=font(size),
                    fill=colour,
                    anchor=anchor[0] + "m",
                )
            return
        # drawn on a transparent square centred on the anchor point, turned, and laid on
        side = 2 * math.ceil(max(text_width(text, size) * SCALE, step * len(lines)) + step)
        mask = Image.new("L", (side, side), 0)
        pen = ImageDraw.Draw(mask)
        for i, line in enumerate(lines):
            pen.text(
                (side / 2, side / 2 + block_top + (i + 0.5) * step),
                line,
                font=font(size),
                fill=255,
                anchor=anchor[0] + "m",
            )
        if angle % 90 == 0:  # exact and several times faster
            mask = mask.transpose(ROTATIONS[int(angle) % 360]) if angle % 360 else mask
        else:
            mask = mask.rotate(angle, resample=Image.Resampling.BICUBIC, center=(side / 2, side / 2))
        self.image.paste(colour, (round(x * SCALE - side / 2), round(y * SCALE - side / 2)), mask)

    def save(self, path) -> None:
        """Halve the drawing and write the PNG (compression level 1: a little larger, much faster) to a
        path (a temp file renamed over it: never written through a link) or an open binary file."""
        from core.safe_files import atomic_file

        if hasattr(path, "write"):
            self.image.reduce(SCALE).save(path, format="PNG", compress_level=1)
            return
        with atomic_file(path) as handle:
            self.image.reduce(SCALE).save(handle, format="PNG", compress_level=1)


class Axes:
    def __init__(
        self, figure: Figure, box: tuple[float, float, float, float], x: tuple[float, float], y: tuple[float, float]
    ):
        self.figure = figure
        self.left, self.top, self.right, self.bottom = box
        self.x, self.y = x, y

    # ---- places -----------------------------------------------------------
    def px(self, x: float, y: float) -> tuple[float, float]:
        """Figure pixels of data point (x, y)."""
        (x0, x1), (y0, y1) = self.x, self.y
        return (
            self.left + (x - x0) / (x1 - x0) * (self.right - self.left),
            self.bottom - (y - y0) / (y1 - y0) * (self.bottom - self.top),
        )

    def _canvas(self, x: float, y: float) -> tuple[float, float]:
        px, py = self.px(x, y)
        return px * SCALE, py * SCALE

    def _clip(self, x: float, y: float) -> tuple[float, float]:
        return min(max(x, min(self.x)), max(self.x)), min(max(y, min(self.y)), max(self.y))

    # ---- marks ------------------------------------------------------------
    def rect(self, x0: float, y0: float, x1: float, y1: float, colour, *, outline: str | None = None) -> None:
        (ax, ay), (bx, by) = self._canvas(*self._clip(x0, y0)), self._canvas(*self._clip(x1, y1))
        self.figure.draw.rectangle(
            (min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)),
            fill=colour,
            outline=outline,
            width=SCALE if outline else 0,
        )

    def bar(self, x: float, height: float, *, colour, width: float = 0.8, bottom: float = 0.0) -> None:
        if height:
            self.rect(x - width / 2, bottom, x + width / 2, bottom + height, colour)

    def barh(self, y: float, width: float, *, colour, height: float = 0.8) -> None:
        if width:
            self.rect(0, y - height / 2, width, y + height / 2, colour)

    def interval(
        self,
        at: float,
        low: float,
        high: float,
        *,
        horizontal: bool = False,
        colour: str = INK,
        cap: float = 5,
        width: float = 1.3,
    ) -> None:
        """A line from `low` to `high` at `at` (x, or y when `horizontal`), with caps of `cap` pixels."""
        ends = [(low, at), (high, at)] if horizontal else [(at, low), (at, high)]
        self.line(ends, colour=colour, width=width)
        for end in ends:
            cx, cy = self._canvas(*end)
            c = cap * SCALE
            box = [(cx, cy - c), (cx, cy + c)] if horizontal else [(cx - c, cy), (cx + c, cy)]
            self.figure.draw.line(box, fill=colour, width=round(width * SCALE))

    def line(
        self,
        points: list[tuple[float, float]],
        *,
        colour: str,
        width: float = 1.5,
        dash: tuple[float, float] | None = None,
    ) -> None:
        """A polyline through data points; `dash` is (on, off) in pixels."""
        canvas = [self._canvas(*p) for p in points]
        pen = round(width * SCALE)
        if dash is None:
            self.figure.draw.line(canvas, fill=colour, width=pen, joint="curve")
            return
        on, off = dash[0] * SCALE, dash[1] * SCALE
        phase = 0.0  # distance into the current on+off period, carried across segments
        for (ax, ay), (bx, by) in zip(canvas, canvas[1:]):
            length = math.hypot(bx - ax, by - ay)
            done = 0.0
            while done < length:
                in_on = phase < on
                run = min((on - phase) if in_on else (on + off - phase), length - done)
                if in_on:
                    s, e = done / length, (done + run) / length
                    self.figure.draw.line(
                        [(ax + (bx - ax) * s, ay + (by - ay) * s), (ax + (bx - ax) * e, ay + (by - ay) * e)],
                        fill=colour,
                        width=pen,
                    )
                done += run
                phase = (phase + run) % (on + off)

    def hline(self, y: float, **style) -> None:
        self.line([(self.x[0], y), (self.x[1], y)], **style)

    def vline(self, x: float, **style) -> None:
        self.line([(x, self.y[0]), (x, self.y[1])], **style)

    def marker(self, x: float, y: float, *, colour: str, shape: str = "o", size: float = 7) -> None:
        """A filled circle ("o") or square ("s") `size` pixels across."""
        cx, cy = self._canvas(x, y)
        r = size * SCALE / 2
        box = (cx - r, cy - r, cx + r, cy + r)
        (self.figure.draw.ellipse if shape == "o" else self.figure.draw.rectangle)(box, fill=colour)

    def proportion(self, x: float, cell: dict, *, colour: str, shape: str = "o") -> tuple[float, float]:
        """A summary proportion ({rate, ci_low, ci_high, ...}) at `x`: its interval when it has one, then its
        marker at the rate; the marker's point in pixels (where a label goes)."""
        if cell["ci_low"] is not None:
            self.interval(x, cell["ci_low"], cell["ci_high"], colour=colour, cap=4)
        self.marker(x, cell["rate"], colour=colour, shape=shape)
        return self.px(x, cell["rate"])

    def text(self, x: float, y: float, text: str, **style) -> None:
        self.figure.text(*self.px(x, y), text, **style)

    def note(self, text: str) -> None:
        """A grey message in the middle of the box (for a plot with nothing to show)."""
        self.figure.text(
            (self.left + self.right) / 2, (self.top + self.bottom) / 2, text, size=12, colour=MUTED, anchor="mm"
        )

    # ---- furniture --------------------------------------------------------
    def frame(self) -> None:
        self.figure.draw.rectangle(
            [self.left * SCALE, self.top * SCALE, self.right * SCALE, self.bottom * SCALE], outline=FRAME, width=SCALE
        )

    def x_ticks(
        self, values: Sequence[float], labels: Sequence[str] | None = None, *, angle: float = 0, size: float = 11
    ) -> None:
        labels = labels if labels is not None else [tick_label(v) for v in values]
        for value, label in zip(values, labels):
            x, _ = self.px(value, self.y[0])
            self._tick((x, self.bottom), (x, self.bottom + 4))
            if angle:
                self.figure.text(x + 3, self.bottom + 7, label, size=size, anchor="rt", angle=angle)
            else:
                self.figure.text(x, self.bottom + 7, label, size=size, anchor="mt")

    def y_ticks(self, values: Sequence[float], labels: Sequence[str] | None = None, *, size: float = 11) -> None:
        labels = labels if labels is not None else [tick_label(v) for v in values]
        for value, label in zip(values, labels):
            _, y = self.px(self.x[0], value)
            self._tick((self.left - 4, y), (self.left, y))
            self.figure.text(self.left - 7, y, label, size=size, anchor="rm")

    def _tick(self, a: tuple[float, float], b: tuple[float, float]) -> None:
        self.figure.draw.line([(a[0] * SCALE, a[1] * SCALE), (b[0] * SCALE, b[1] * SCALE)], fill=FRAME, width=SCALE)

    def x_label(self, text: str, *, below: float = 24) -> None:
        """The x axis's name, `below` pixels under the box (more when tick labels are turned)."""
        self.figure.text((self.left + self.right) / 2, self.bottom + below, text, size=12, anchor="mt")

    def y_label(self, text: str, *, beside: float = 38) -> None:
        self.figure.text(self.left - beside, (self.top + self.bottom) / 2, text, size=12, anchor="mb", angle=90)

    def title(self, text: str, *, colour: str = INK) -> None:
        self.figure.text((self.left + self.right) / 2, self.top - 8, text, size=12, colour=colour, anchor="mb")

    def legend(self, entries: list[tuple[str, str, str]], *, corner: str = "upper left", size: float = 10) -> None:
        """Entries (label, colour, kind): kind "patch" (a swatch), "line", "dashed", "dot" (a line
        with a circle) or "square" (a dashed line with a square).
        `corner`: "upper left" or "upper right" inside the box, "above" (one row over the box),
        "below" (one column under the x label) or "outside right" (one column right of the box)."""
        step = line_height(size) + 3
        if corner == "above":
            widths = [28 + text_width(label, size) for label, _, _ in entries]
            x = (self.left + self.right - sum(widths) + 12) / 2
            for (label, colour, kind), w in zip(entries, widths):
                self._legend_entry(x, self.top - 4 - step / 2, label, colour, kind, size)
                x += w
            return
        width = 24 + max(text_width(label, size) for label, _, _ in entries)
        x = self.right - 8 - width if corner == "upper right" else self.left + (0 if corner == "below" else 8)
        x = self.right + 14 if corner == "outside right" else x
        y = self.bottom + 48 if corner == "below" else self.top + 8
        for i, (label, colour, kind) in enumerate(entries):
            self._legend_entry(x, y + step * (i + 0.5), label, colour, kind, size)

    def _legend_entry(self, x: float, y: float, label: str, colour: str, kind: str, size: float) -> None:
        draw, s = self.figure.draw, SCALE
        if kind == "patch":
            draw.rectangle([x * s, (y - 5) * s, (x + 16) * s, (y + 5) * s], fill=colour)
            self.figure.text(x + 22, y, label, size=size, anchor="lm")
            return
        pieces = [(0, 16)] if kind in ("line", "dot") else [(0, 4), (6, 10), (12, 16)]
        for a, b in pieces:
            draw.line([((x + a) * s, y * s), ((x + b) * s, y * s)], fill=colour, width=round(1.5 * s))
        if kind in ("dot", "square"):
            r = 3.5 * s
            (draw.ellipse if kind == "dot" else draw.rectangle)(
                ((x + 8) * s - r, y * s - r, (x + 8) * s + r, y * s + r), fill=colour
            )
        self.figure.text(x + 22, y, label, size=size, anchor="lm")


def warm_up() -> None:
    """Load the fonts and the PNG writer by drawing a small throwaway chart: a report
    worker started early then has only the plots left to draw."""
    import io

    figure = Figure(120, 60, "warm-up")
    axes = figure.axes(30, 20, 10, 20)
    axes.y_ticks([0, 1])
    axes.y_label("y")
    for size in (10, 12, 14):
        font(size)
    figure.save(io.BytesIO())


def place_point_labels(fig: Figure, labels: list[tuple[float, float, str, str]], top: float, bottom: float) -> None:
    """Each point's label just right of it on a white ground, moved up or down where it would cover
    another label (close frame rates and scores), with a thin line from the point to a label that moved."""
    from benchmark.report.label_layout import Label, place_labels

    size, gap = 9, 8
    boxes = [Label(x=x + gap, y=y, width=text_width(text, size), height=line_height(size)) for x, y, text, _ in labels]
    markers = [(x - 5, y - 5, x + 5, y + 5) for x, y, _, _ in labels]  # a label never hides a point
    centres = place_labels(boxes, top=top, bottom=bottom, obstacles=markers)
    for (x, y, text, colour), box, centre in zip(labels, boxes, centres):
        if abs(centre - y) > 0.5:
            fig.draw.line([(x * SCALE, y * SCALE), (box.x * SCALE, centre * SCALE)], fill=colour, width=SCALE // 2)
        fig.draw.rectangle(
            [
                (box.x - 1) * SCALE,
                (centre - box.height / 2) * SCALE,
                (box.x + box.width + 1) * SCALE,
                (centre + box.height / 2) * SCALE,
            ],
            fill="white",
        )
        fig.text(box.x, centre, text, size=size, anchor="lm", colour=colour)
