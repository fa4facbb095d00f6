"""The report's chart drawing: marks land where their data says, on the saved PNG."""

from __future__ import annotations

from PIL import Image

from benchmark.report.chart import Figure, blues, ink_on, nice_ticks

BLUE = (43, 108, 176)


def saved(figure: Figure, tmp_path) -> Image.Image:
    path = tmp_path / "chart.png"
    figure.save(path)
    with Image.open(path) as image:
        assert image.format == "PNG" and image.size == (figure.width, figure.height)
        return image.convert("RGB")


def close(pixel, colour, tolerance=12) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour))


def test_a_bar_reaches_its_value_and_no_further(tmp_path):
    figure = Figure(200, 200)
    axes = figure.axes(0, 0, 0, 0, x=(0, 2), y=(0, 1))  # the box is the whole image
    axes.bar(0.5, 0.5, width=0.5, colour="#2b6cb0")
    axes.bar(1.5, 0.9, width=0.5, colour="#2b6cb0")
    image = saved(figure, tmp_path)
    assert close(image.getpixel((50, 195)), BLUE) and close(image.getpixel((50, 105)), BLUE)
    assert close(image.getpixel((50, 95)), (255, 255, 255))  # above 0.5
    assert close(image.getpixel((150, 25)), BLUE) and close(image.getpixel((150, 15)), (255, 255, 255))
    assert close(image.getpixel((100, 150)), (255, 255, 255))  # between the bars


def test_a_y_range_given_high_to_low_puts_the_first_category_on_top(tmp_path):
    figure = Figure(200, 200)
    axes = figure.axes(0, 0, 0, 0, x=(0, 1), y=(1.5, -0.5))
    axes.barh(0, 1.0, height=0.5, colour="#2b6cb0")
    image = saved(figure, tmp_path)
    assert close(image.getpixel((100, 50)), BLUE)
    assert close(image.getpixel((100, 150)), (255, 255, 255))


def test_a_dashed_line_has_gaps_and_a_solid_one_has_none(tmp_path):
    figure = Figure(200, 40)
    axes = figure.axes(0, 0, 0, 0, x=(0, 200), y=(0, 40))
    axes.hline(30, colour="#000000", width=2, dash=(6, 4))
    axes.hline(10, colour="#000000", width=2)
    image = saved(figure, tmp_path)
    dashed = [image.getpixel((x, 10))[0] < 128 for x in range(200)]
    solid = [image.getpixel((x, 30))[0] < 128 for x in range(200)]
    assert all(solid)
    assert 0.5 < sum(dashed) / 200 < 0.7  # 6 on, 4 off
    assert dashed[:5] == [True] * 5 and dashed[7:9] == [False, False]


def test_text_is_drawn_about_its_anchor_and_turned_text_stands_upright(tmp_path):
    figure = Figure(300, 300)
    figure.text(150, 150, "a long line of words", size=12, anchor="mm", colour="#000000")
    figure.text(30, 150, "upright", size=12, anchor="mm", angle=90, colour="#000000")
    image = saved(figure, tmp_path).convert("L").point(lambda v: 255 * (v < 128))
    across = image.crop((60, 0, 300, 300)).getbbox()
    assert across is not None
    left, top, right, bottom = across
    assert abs((left + 60 + right + 60) / 2 - 150) <= 3 and abs((top + bottom) / 2 - 150) <= 4
    assert right - left > 4 * (bottom - top)  # wide
    left, top, right, bottom = image.crop((0, 0, 60, 300)).getbbox()
    assert bottom - top > 3 * (right - left)  # tall
    assert abs((top + bottom) / 2 - 150) <= 3


def test_ticks_colours_and_ink():
    assert nice_ticks(1.0) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(7, integer=True) == [0, 2, 4, 6, 8]
    assert nice_ticks(2, integer=True) == [0, 1, 2]
    assert nice_ticks(130) == [0, 50, 100, 150]
    assert blues(0) == (247, 251, 255) and blues(1) == (8, 48, 107) and blues(2) == blues(1)
    assert ink_on(blues(0)) != "white" and ink_on(blues(1)) == "white"
