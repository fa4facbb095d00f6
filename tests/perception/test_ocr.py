"""The `ocr` describer: it reads the text in a frame's pixels with the bundled
PP-OCRv4 models (a real engine, no fake), never the synthetic frame's JPEG
comment, so an impaired frame reads worse; it leaves out the simulator's
"SYNTHETIC FRAME" label, keeps reading order and the decode limits."""

from __future__ import annotations

import struct
import threading

import cv2
import numpy as np
import pytest

from core.scenario import load_bank
from media_effects import impairments
from media_effects.frames import SYNTHETIC_COMMENT, decode_jpeg, encode_jpeg
from media_effects.synthetic import synthetic_frame, with_comment
from perception import ocr
from perception.describers import AuthoredDescriber, OCRDescriber, make_describer


def bank_text(scenario_id: str, field: str) -> str:
    scenario = next(s for s in load_bank().scenarios if s.scenario_id == scenario_id)
    return getattr(scenario, field)


def words(text: str) -> list[str]:
    return [w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split()]


@pytest.mark.slow
async def test_a_bank_frame_is_read_back_exactly_and_its_header_is_left_out():
    authored = bank_text("sc-01", "turn_1_image")
    description = await make_describer("ocr").describe(synthetic_frame(authored))
    assert (description.describer, description.model) == ("ocr", ocr.ENGINE)
    assert ocr.text_in_description(description.text) == authored
    # the layout comes first, from the same pixels as the opencv describer's
    assert description.text.startswith("Mostly ")
    assert "SYNTHETIC" not in description.text.upper()


async def test_the_pixels_are_read_never_the_jpeg_comment():
    drawn = "A blue kettle steams on the left burner beside a folded towel."
    claimed = "Seven violet umbrellas lean against a marble fountain."
    pixels = decode_jpeg(synthetic_frame(drawn))
    frame = with_comment(encode_jpeg(pixels), SYNTHETIC_COMMENT + claimed.encode())
    assert (await AuthoredDescriber().describe(frame)).text == claimed  # the comment is really there
    read = ocr.text_in_description((await OCRDescriber().describe(frame)).text)
    assert read == drawn
    assert not set(words(read)) & {"seven", "violet", "umbrellas", "lean", "marble", "fountain"}


@pytest.mark.slow
def test_blur_and_darkness_make_it_read_fewer_words():
    authored = bank_text("sc-02", "turn_1_image")
    clean = synthetic_frame(authored)
    read_clean = ocr.read_frame(clean).words
    assert read_clean == len(authored.split())
    blurred = ocr.read_frame(impairments.motion_blur(clean, 14, 0)).words
    dark = ocr.read_frame(impairments.low_light(clean, 0.08, 20, seed=3)).words
    assert blurred < read_clean / 2
    assert dark < read_clean / 2


async def test_an_oversized_frame_is_refused_with_the_frames_modules_error():
    data = bytearray(encode_jpeg(np.full((16, 16, 3), 90, np.uint8)))
    at = data.index(b"\xff\xc0")
    struct.pack_into(">HH", data, at + 5, 16384, 16384)
    with pytest.raises(ValueError, match="16384x16384 pixels is over the limit"):
        await OCRDescriber().describe(bytes(data))
    with pytest.raises(ValueError, match="over the limit"):
        ocr.read_frame(bytes(data))
    with pytest.raises(ValueError, match="over the limit"):  # a bad previous frame is refused too
        await OCRDescriber().describe(synthetic_frame("a"), previous=bytes(data))


def draw(texts: list[tuple[str, int, int]], size=(480, 640)) -> np.ndarray:
    """Black text on white, each (text, x, baseline y), in OpenCV's plain font at a readable size."""
    image = np.full((*size, 3), 255, np.uint8)
    for text, x, y in texts:
        cv2.putText(image, text, (x, y), cv2.FONT_HERSHEY_DUPLEX, 1.2, (0, 0, 0), 2, cv2.LINE_AA)
    return image


def test_lines_come_top_to_bottom_and_left_to_right():
    image = draw([("EXIT", 380, 300), ("OPEN", 40, 120), ("SALE", 40, 300), ("CLOSED", 380, 120)])
    lines = ocr.read_text(image).lines
    assert [line.text for line in lines] == ["OPEN CLOSED", "SALE EXIT"]
    assert lines[0].top < lines[1].top and all(0.6 <= line.confidence <= 1 for line in lines)


def test_words_under_the_confidence_threshold_are_dropped():
    image = draw([("KITCHEN TIMER", 40, 200)])
    assert ocr.read_text(image).text == "KITCHEN TIMER"
    assert ocr.read_text(image, min_confidence=1.01).lines == ()  # nothing scores above 1
    assert ocr.MIN_CONFIDENCE == 0.6


def test_the_header_is_kept_only_when_asked():
    frame = decode_jpeg(synthetic_frame("Two red apples"))
    assert ocr.read_text(frame).text == "Two red apples"
    kept = ocr.read_text(frame, keep_header=True)
    assert kept.lines[0].text.replace(" ", "") == "SYNTHETICFRAME" and kept.lines[1].text == "Two red apples"
    assert ocr.is_header("SYNTHETICFRAME") and ocr.is_header("Synthetic frame") and ocr.is_header("SYNTHET1C FRAMF")
    assert not ocr.is_header("SYNTHESIS") and not ocr.is_header("FRAME") and not ocr.is_header("")


def test_wrapped_lines_join_into_blocks_and_separate_blocks_are_kept_apart():
    def line(text, left, top):
        return ocr.TextLine(text=text, confidence=0.9, left=left, top=top, right=left + 200, bottom=top + 20)

    lines = [
        line("a yellow-and-", 20, 60),
        line("black handle", 21, 86),
        line("rests here", 20, 112),
        line("PRICE 4.99", 400, 300),
    ]
    assert ocr.text_blocks(lines) == ["a yellow-and-black handle rests here", "PRICE 4.99"]
    assert ocr.FrameText(lines=tuple(lines)).text == "a yellow-and-black handle rests here / PRICE 4.99"


def test_word_gaps_find_the_space_and_not_the_letter_gaps():
    image = np.full((40, 300, 3), 255, np.uint8)
    cv2.putText(image, "word", (5, 28), cv2.FONT_HERSHEY_DUPLEX, 0.9, (0, 0, 0), 1, cv2.LINE_AA)
    cv2.putText(image, "gap", (120, 28), cv2.FONT_HERSHEY_DUPLEX, 0.9, (0, 0, 0), 1, cv2.LINE_AA)
    gaps = ocr.word_gaps(image)
    assert len(gaps) == 1 and 80 < gaps[0] < 125


def test_the_engine_is_built_once_even_when_threads_race_for_it(monkeypatch):
    monkeypatch.setattr(ocr, "_engine", None)
    built = []
    with ocr._engine_lock:  # hold the lock so every thread waits at the same point
        threads = [threading.Thread(target=lambda: built.append(ocr.engine())) for _ in range(4)]
        for thread in threads:
            thread.start()
    for thread in threads:
        thread.join()
    assert len(built) == 4 and all(engine is built[0] for engine in built)
    assert ocr.engine() is built[0]


def test_the_engines_idle_threads_sleep_and_the_librarys_options_are_left_as_they_were(monkeypatch):
    from rapidocr_onnxruntime.utils import infer_engine

    plain = infer_engine.SessionOptions
    monkeypatch.setattr(ocr, "_engine", None)
    built = ocr.engine()
    sessions = [built.text_det.infer.session, built.text_cls.infer.session, built.text_rec.session.session]
    key, value = ocr.SLEEPING_THREADS
    assert [s.get_session_options().get_session_config_entry(key) for s in sessions] == [value] * 3
    assert infer_engine.SessionOptions is plain
    with pytest.raises(RuntimeError, match="does not have configuration"):  # a plain one has no such entry
        plain().get_session_config_entry(key)


def test_a_missing_package_says_what_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name.startswith("rapidocr_onnxruntime"):
            raise ImportError("No module named 'rapidocr_onnxruntime'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(ocr, "_engine", None)
    monkeypatch.setattr(builtins, "__import__", refuse)
    with pytest.raises(RuntimeError, match="rapidocr-onnxruntime"):
        ocr.engine()


def test_make_describer_knows_ocr():
    assert isinstance(make_describer("ocr"), OCRDescriber)
    with pytest.raises(ValueError, match="ocr"):
        make_describer("nonsense")


def test_serve_offers_ocr_only_when_named(serve_without_listening):
    serve, seen = serve_without_listening
    assert serve([]) == 0 and serve(["--describer", "ocr"]) == 0
    assert "ocr" not in seen[0].app.state.settings.allowed_describers  # CPU-heavy: opt in
    assert seen[1].app.state.settings.allowed_describers == ("opencv", "authored", "ocr")


@pytest.mark.whisper
def test_a_stream_bench_with_synthetic_frames_tells_the_candidate_what_ocr_read(tmp_path):
    """The whole stream path: the glasses send synthetic frames, the server's ocr describer reads them,
    and the turn's camera block (perceived) quotes the frame's drawn text."""
    import json
    import os
    import subprocess
    import sys

    from tests.fake_openai import FakeOpenAI

    run_dir = tmp_path / "run"
    with FakeOpenAI(reply="The driver in your hand now.") as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "bench",
                "--model",
                "openai:fake",
                "--base-url",
                server.base_url,
                "--judge-family",
                "lexical",
                "--conditions",
                "baseline",
                "--limit",
                "1",
                "--output-dir",
                str(run_dir),
                "--via",
                "stream",
                "--synthetic-frames",
                "--describer",
                "ocr",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "OPENAI_API_KEY": ""},
        )
    assert done.returncode == 0, done.stderr
    (record,) = [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]
    assert record["error"] is None
    turn_2 = record["turns"][1]["input"]
    assert turn_2["camera_source"] == "perceived"
    assert ocr.text_in_description(turn_2["camera_block"]) == bank_text("sc-01", "turn_2_image")


async def test_describing_runs_on_the_one_ocr_thread_not_the_default_executor(monkeypatch):
    import asyncio

    from perception import describers

    threads = []

    def record(jpeg, previous):
        threads.append(threading.current_thread().name)
        return "described"

    monkeypatch.setattr(describers, "describe_text_and_layout", record)
    results = await asyncio.gather(*(OCRDescriber().describe(synthetic_frame("a")) for _ in range(5)))
    assert [r.text for r in results] == ["described"] * 5
    assert len(set(threads)) == 1 and threads[0].startswith("wearsim-ocr")
