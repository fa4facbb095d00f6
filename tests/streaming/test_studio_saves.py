"""The recording studio and the media library under load and with bad input:
parallel saves, an unreadable index, scenario ids that are paths, a media
root that does not exist, and what an upload error shows."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from benchmark.cli import main
from media_effects.media_library import load_index, register, verify
from streaming.local_server import running_server
from streaming.server_settings import ServerSettings
from tests.paths import FIXTURES

EXTERNAL_BANK = FIXTURES / "banks" / "external.jsonl"


@pytest.fixture(scope="module")
def webm(tmp_path_factory) -> bytes:
    """One second of a WebM as the studio uploads it (VP8 frames, Opus speech-band tone)."""
    import av

    path = tmp_path_factory.mktemp("webm") / "take.webm"
    with av.open(str(path), "w") as out:
        video = out.add_stream("libvpx", rate=10)
        video.width, video.height, video.pix_fmt = 64, 48, "yuv420p"
        audio = out.add_stream("libopus", rate=48000)
        audio.layout = "mono"
        for i in range(10):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), 20 * i, np.uint8), format="rgb24")
            out.mux(video.encode(frame))
        out.mux(video.encode())
        tone = (np.sin(np.arange(48000) * 2 * np.pi * 440 / 48000) * 8000).astype(np.int16)
        for start in range(0, 48000, 960):
            frame = av.AudioFrame.from_ndarray(tone[None, start : start + 960], format="s16", layout="mono")
            frame.sample_rate, frame.pts = 48000, start
            out.mux(audio.encode(frame))
        out.mux(audio.encode())
    return path.read_bytes()


def _save(http: str, body: bytes, scenario: str, step: str = "turn_1") -> httpx.Response:
    return httpx.post(
        f"{http}/v1/record?scenario={scenario}&step={step}",
        content=body,
        timeout=120,
        headers={"Origin": http, "Content-Type": "video/webm"},
    )


@pytest.mark.whisper
def test_twenty_parallel_studio_saves_all_land_in_a_valid_index(tmp_path, webm):
    record_dir = tmp_path / "studio"
    scenarios = [f"sc-{n:02d}" for n in range(1, 21)]
    with running_server(ServerSettings(record_dir=record_dir)) as url:
        http = url.replace("ws://", "http://")
        for step in ("turn_1", "turn_2"):  # two rounds: the second replaces nothing of the first
            with ThreadPoolExecutor(20) as pool:
                responses = list(pool.map(lambda s, step=step: _save(http, webm, s, step), scenarios))
            assert [r.status_code for r in responses] == [200] * 20, [r.text for r in responses if r.status_code != 200]
    index = json.loads((record_dir / "index.json").read_text())["files"]
    on_disk = {p.relative_to(record_dir).as_posix() for p in record_dir.glob("*-*/*")}
    assert set(index) == on_disk and len(on_disk) == 80  # 20 scenarios x 2 steps x (video, speech)
    assert verify(record_dir) == []
    assert not list(record_dir.glob("*.tmp")) and not list(record_dir.glob(".*.tmp"))


def test_parallel_registers_in_one_process_lose_nothing(tmp_path):
    root = tmp_path / "media"
    files = []
    for n in range(40):
        path = root / f"sc-{n:02d}" / "turn_1.jpg"
        path.parent.mkdir(parents=True)
        path.write_bytes(b"\xff\xd8 not really a jpeg %d" % n)
        files.append(path)
    start = threading.Barrier(len(files))

    def one(path):
        start.wait()
        register(root, path, "recorded", "test")

    with ThreadPoolExecutor(len(files)) as pool:
        list(pool.map(one, files))  # the old code: FileNotFoundError on the shared index.tmp, or lost entries
    assert len(load_index(root)["files"]) == 40


def test_an_unreadable_index_is_reported_and_rebuilt_and_saves_go_on(tmp_path, webm, caplog):
    record_dir = tmp_path / "studio"
    (record_dir / "sc-02").mkdir(parents=True)
    (record_dir / "sc-02" / "turn_1.jpg").write_bytes(b"\xff\xd8 a still saved before")
    (record_dir / "index.json").write_text('{"files": {\n  "sc-02/turn_1.jpg": {"sha256": \n')  # torn write
    assert main(["media", "verify", "--media-root", str(record_dir)]) == 1  # verify reports, never rewrites
    with running_server(ServerSettings(record_dir=record_dir)) as url:
        response = _save(url.replace("ws://", "http://"), webm, "sc-01")
    assert response.status_code == 200, response.text
    assert any("index.json: line 3: invalid JSON" in r.getMessage() for r in caplog.records)
    index = load_index(record_dir)["files"]
    assert set(index) == {"sc-01/turn_1.mp4", "sc-01/turn_1.wav", "sc-02/turn_1.jpg"}
    assert index["sc-02/turn_1.jpg"]["source"] == "unknown" and index["sc-01/turn_1.wav"]["source"] == "recorded"
    assert (record_dir / "index.json.broken").read_text().startswith('{"files"')


def test_media_reindex_rebuilds_the_index_from_the_files_on_disk(tmp_path, capsys):
    root = tmp_path / "media"
    (root / "sc-03").mkdir(parents=True)
    kept = root / "sc-03" / "turn_2.jpg"
    kept.write_bytes(b"\xff\xd8 kept")
    register(root, kept, "recorded", "an entry worth keeping")
    (root / "sc-03" / "turn_1.jpg").write_bytes(b"\xff\xd8 unindexed")
    assert main(["media", "reindex", "--media-root", str(root)]) == 0
    index = load_index(root)["files"]
    assert index["sc-03/turn_2.jpg"]["note"] == "an entry worth keeping"  # same hash: kept as it was
    assert index["sc-03/turn_1.jpg"]["source"] == "unknown"
    assert "2 files indexed" in capsys.readouterr().out


def test_upload_errors_show_paths_relative_to_the_media_root(tmp_path):
    record_dir = tmp_path / "studio"
    with running_server(ServerSettings(record_dir=record_dir)) as url:
        response = _save(url.replace("ws://", "http://"), b"\x1aE\xdf\xa3 not a webm at all", "sc-01")
    assert response.status_code == 400
    error = response.json()["error"]
    assert str(tmp_path) not in error and str(record_dir.resolve()) not in error
    assert error.startswith("the recording cannot be used: .incoming/")


def test_media_synth_refuses_scenario_ids_that_are_paths_before_writing_anything(tmp_path, capsys):
    bank = tmp_path / "bank.jsonl"
    lines = EXTERNAL_BANK.read_text().splitlines()
    first = json.loads(lines[0])
    first["scenario_id"] = "../../escaped"
    bank.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    root = tmp_path / "deep" / "er" / "media"
    assert main(["media", "synth", "--scenarios", str(bank), "--media-root", str(root)]) == 2
    err = capsys.readouterr().err
    assert "field 'scenario_id' '../../escaped' must be a plain name" in err
    assert not (tmp_path / "deep" / "escaped").exists() and not root.exists()


def test_media_verify_of_a_folder_that_does_not_exist_is_an_error(tmp_path, capsys):
    missing = tmp_path / "media-new"
    assert main(["media", "verify", "--media-root", str(missing)]) == 2
    err = capsys.readouterr().err
    assert str(missing) in err and "no such folder" in err and len(err.strip().splitlines()) == 1
