"""Pictograph frames: every turn of the bank drawn from its scene spec, deterministically, with no
text but a scene's own; OCR reads back almost none of the camera text; the frames flow through the
timeline, `media synth` and `bench --via stream` against the OpenAI Realtime conformance server,
and the records say they were pictographs."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import re

import pytest

from core.scenario import load_bank
from core.scenes import IMAGE_OF_SCENE, load_scene_specs
from media_effects.frames import image_size, jpeg_comments

BANK = load_bank()
SPECS = load_scene_specs(BANK, required=True)
TURNS = [(sid, name) for sid, spec in sorted(SPECS.items()) for name in spec.scenes]
WORD = re.compile(r"[a-z0-9]+")
# words too common in any text to say that a frame's text was read back
STOPWORDS = frozenset("the and with its from into onto over under that this one two are has its both".split())


@functools.cache
def drawn() -> dict[tuple[str, str], bytes]:
    """Every turn's pictograph, drawn once for the file (the OCR test reads the same frames)."""
    from media_effects.pictograph import pictograph_frame

    return {(sid, name): pictograph_frame(SPECS[sid].scenes[name]) for sid, name in TURNS}


def content_words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if len(w) >= 3 and w not in STOPWORDS}


def test_every_picture_a_spec_names_is_in_the_picture_set():
    from media_effects.pictures import unknown_pictures

    assert unknown_pictures(SPECS) == []
    spec = SPECS["sc-01"]
    turn_1 = spec.scenes["turn_1"]
    unicorn = dataclasses.replace(turn_1.objects[0], picture="unicorn")
    made_up = dataclasses.replace(
        spec,
        scenario_id="x",
        scenes={"turn_1": dataclasses.replace(turn_1, objects=(unicorn,))},
        answer_objects={},
        carried={},
        source=None,
    )
    assert unknown_pictures({"x": made_up}) == [
        "x: turn_1: object 'strip': picture 'unicorn' is not in the picture set"
    ]


@pytest.mark.slow
def test_every_turn_of_the_bank_renders_a_camera_sized_frame_with_no_comment_and_the_same_bytes_twice():
    from media_effects.pictograph import pictograph_frame

    assert len(TURNS) == sum(bool(getattr(s, f)) for s in BANK.scenarios for f in IMAGE_OF_SCENE.values())
    frames = drawn()
    for jpeg in frames.values():
        assert image_size(jpeg) == (640, 480) and jpeg_comments(jpeg) == []
    assert pictograph_frame(SPECS["sc-01"].scenes["turn_2"]) == frames["sc-01", "turn_2"]
    assert frames["sc-01", "turn_1"] != frames["sc-01", "turn_2"]


@pytest.mark.slow
def test_the_ocr_describer_reads_back_under_5_percent_of_the_camera_texts_content_words():
    """Pictures, not text: what the OCR describer reads in every pictograph recovers under 5% of the
    content words of the scenario's camera text over the bank (measured: 4 of 4,400, 0.1%, all of them
    a screen's own figures). In each scenario's frames, the words read beyond the text the scene itself
    shows (`screen_content`: a watch's "172") are under 5% too; with it, one screen item (ct-16, whose
    panel shows "2:05 /500M" and "165") comes to 2 of 39 words."""
    from perception.describers import OCRDescriber
    from perception.ocr import text_in_description

    describer = OCRDescriber()

    async def read_all() -> dict:
        out = {}
        for (sid, name), jpeg in drawn().items():
            description = await describer.describe(jpeg)
            out[sid, name] = set(WORD.findall(text_in_description(description.text).lower()))
        return out

    read = asyncio.run(read_all())
    total = recovered = 0
    by_scenario: dict[str, list[int]] = {}
    for (sid, name), words in read.items():
        wanted = content_words(getattr(BANK.get(sid), IMAGE_OF_SCENE[name]))
        got = wanted & words
        total, recovered = total + len(wanted), recovered + len(got)
        shown = set(WORD.findall(" ".join(o.screen_content or "" for o in SPECS[sid].scenes[name].objects).lower()))
        counts = by_scenario.setdefault(sid, [0, 0])
        counts[0], counts[1] = counts[0] + len(got - shown), counts[1] + len(wanted)
    assert recovered / total < 0.05, (recovered, total)
    worst = max(by_scenario.items(), key=lambda item: item[1][0] / item[1][1])
    assert worst[1][0] / worst[1][1] < 0.05, worst


def test_a_missing_picture_set_is_one_clear_message(monkeypatch, tmp_path):
    from media_effects import pictures

    monkeypatch.setenv(pictures.FONT_ENV, str(tmp_path / "nowhere.ttf"))
    with pytest.raises(pictures.PictureSetMissing) as caught:
        pictures.font_path()
    assert "fonts-noto-color-emoji" in str(caught.value) and "scripts/setup.sh" in str(caught.value)


def test_the_timeline_sends_pictographs_where_no_recording_exists_and_says_so(tmp_path):
    from simulator.timeline import plan_turn

    scenario = BANK.get("sc-01")
    plan = plan_turn(scenario, 2, 0, media_root=tmp_path, scenes=SPECS["sc-01"])
    frames = [item for item in plan.items if item.kind == "frame"]
    assert frames and plan.frames_source == "pictograph" and not plan.synthetic_frames
    assert all(item.scene == "turn_2" for item in frames)
    plain = plan_turn(scenario, 2, 0, media_root=tmp_path)
    assert plain.frames_source is None and not plain.has_frames
    recall = plan_turn(BANK.get("sc-47"), 1, 0, media_root=tmp_path, scenes=SPECS["sc-47"])
    assert {item.scene for item in recall.items if item.kind == "frame"} == {"context", "turn_1"}


def test_media_synth_draws_pictographs_into_the_layout_and_never_over_a_recording(tmp_path):
    from media_effects.media import frame_source
    from media_effects.media_library import load_index, synth_pictographs
    from media_effects.pictograph_sheet import write_contact_sheet

    bank = BANK.select(limit=2)
    (tmp_path / "sc-02").mkdir()
    (tmp_path / "sc-02" / "turn_1.jpg").write_bytes((__import__("pathlib").Path("media/sc-05/turn_1.jpg")).read_bytes())
    drawn = synth_pictographs(bank, SPECS, tmp_path)
    assert drawn == 3  # sc-01's two turns, sc-02's turn 2: its turn 1 is a recording
    index = load_index(tmp_path)["files"]
    assert index["sc-01/turn_1.jpg"]["source"] == "pictograph"
    assert frame_source(tmp_path, "sc-01", "turn_1") == "pictograph"
    assert frame_source(tmp_path, "sc-02", "turn_1") == "recording"
    sheet = write_contact_sheet(tmp_path / "sheet.png", SPECS, ids=["sc-01"])
    assert sheet.stat().st_size > 10_000


@pytest.mark.whisper
def test_bench_via_stream_with_pictograph_frames_sends_images_to_a_realtime_api_and_records_pictographs(tmp_path):
    import os
    import subprocess
    import sys

    from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime

    run_dir = tmp_path / "picto"
    with FakeOpenAIRealtime() as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "bench",
                "--model",
                "openai-realtime:gpt-realtime",
                "--base-url",
                server.base_url,
                "--judge-family",
                "lexical",
                "--conditions",
                "baseline",
                "--output-dir",
                str(run_dir),
                "--via",
                "stream",
                "--pictograph-frames",
                "--limit",
                "3",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "OPENAI_API_KEY": TEST_KEY},
        )
        sessions = server.sessions
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]
    assert len(records) == 3 and all(r["error"] is None for r in records)
    images = sum(
        1 for s in sessions for item in s["items"] for part in item["content"] if part["type"] == "input_image"
    )
    sent = sum(t["frames"]["sent"] for r in records for t in r["turns"])
    assert images == sent > 0
    for record in records:
        for turn in record["turns"][:2]:
            assert turn["glasses"]["frames_source"] == "pictograph" and turn["glasses"].get("synthetic_frames") is False
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["pictograph_frames"] is True and len(manifest["scenes_sha256"]) == 64


def test_pictograph_frames_need_the_stream_and_exclude_synthetic_frames(tmp_path):
    import subprocess
    import sys

    base = [sys.executable, "-m", "benchmark", "bench", "--model", "local", "--output-dir", str(tmp_path / "x")]
    done = subprocess.run([*base, "--pictograph-frames"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--pictograph-frames" in done.stderr and "need --via stream" in done.stderr
    done = subprocess.run(
        [*base, "--via", "stream", "--pictograph-frames", "--synthetic-frames"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "choose one" in done.stderr
    assert not (tmp_path / "x").exists()


def test_the_proxy_report_pairs_a_text_proxy_run_with_a_pictograph_run(tmp_path):
    from benchmark.proxy.render import render_markdown
    from benchmark.proxy.report import build_proxy_report
    from tests.benchmark.test_proxy_report import record, turn, write_run

    ids = ("sc-01", "sc-02", "sc-03")
    text = write_run(tmp_path / "text", [record(s, True, "direct", [turn(s, 1), turn(s, 2)]) for s in ids], "direct")
    picto = write_run(
        tmp_path / "picto",
        [record(s, s != "sc-02", "stream", [turn(s, 1), turn(s, 2)]) for s in ids],
        "stream",
        pictograph_frames=True,
        scenes_sha256="0" * 64,
    )
    report = build_proxy_report(text, picto)
    assert report["runs"]["A"]["frames"] is None and report["runs"]["B"]["frames"] == "pictograph"
    assert report["cells"]["scored_both"] == 3
    assert "frames without a recording were pictographs" in render_markdown(report, {})


def test_the_renderer_draws_every_setting_a_spec_may_name():
    from core.scenes import SETTINGS
    from media_effects.pictograph_settings import SETTINGS as DRAWN

    assert set(SETTINGS) == set(DRAWN)


@pytest.mark.slow
def test_media_synth_ids_speaks_and_draws_only_those_scenarios_and_the_sheet_has_no_empty_column(tmp_path):
    from PIL import Image

    from benchmark.cli import main
    from media_effects.media_library import load_index
    from media_effects.pictograph_sheet import HEADER_H, LABEL_W

    sheet = tmp_path / "sheet.jpg"
    assert (
        main(
            [
                "media",
                "synth",
                "--media-root",
                str(tmp_path / "media"),
                "--pictograph-frames",
                "--contact-sheet",
                str(sheet),
                "--ids",
                "sc-13,sc-01",
            ]
        )
        == 0
    )
    files = sorted(load_index(tmp_path / "media")["files"])
    assert {name.split("/")[0] for name in files} == {"sc-01", "sc-13"}
    assert sum(name.endswith(".jpg") for name in files) == 4 and sum(name.endswith(".wav") for name in files) >= 4
    assert sorted(p.name for p in (tmp_path / "media").iterdir() if p.is_dir()) == ["sc-01", "sc-13"]
    assert Image.open(sheet).size == (LABEL_W + 2 * 256, HEADER_H + 2 * 192)  # turn_1, turn_2: no context column
    assert (
        main(
            [
                "media",
                "synth",
                "--media-root",
                str(tmp_path / "media"),
                "--pictograph-frames",
                "--contact-sheet",
                str(sheet),
                "--ids",
                "sc-01,sc-47",
            ]
        )
        == 0
    )
    assert Image.open(sheet).size == (LABEL_W + 3 * 256, HEADER_H + 2 * 192)  # sc-47 has a context scene


def test_media_synth_ids_names_an_unknown_scenario_and_makes_nothing(tmp_path, capsys):
    from benchmark.cli import main

    assert main(["media", "synth", "--media-root", str(tmp_path), "--ids", "sc-01,sc-99"]) == 2
    assert "--ids: no scenario called sc-99 in the bank" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
