"""Sharded runs: `bench --shard K/N` runs a fixed share of the cells; `wearsim merge` joins the shards
into one run dir whose records and summary are the unsharded run's, and refuses shards that are not
one run, naming the field (or the cell)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.shards import ShardError, cell_key, in_shard, parse_shard, shard_of
from tests.fake_openai import FakeOpenAI
from tests.paths import ROOT

IDS = "sc-01,sc-02,sc-03,sc-04,sc-05,sc-06,sc-07,sc-08,sc-09,sc-10"


def wearsim(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchmark", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, "OPENAI_API_KEY": ""},
    )


def bench(server: FakeOpenAI, run_dir: Path, *extra: str, model: str = "openai:fake") -> subprocess.CompletedProcess:
    return wearsim(
        "bench",
        "--model",
        model,
        "--base-url",
        server.base_url,
        "--judge-family",
        "lexical",
        "--conditions",
        "baseline,track_current_frame",
        "--ids",
        IDS,
        "--trials",
        "2",
        "--output-dir",
        str(run_dir),
        *extra,
    )


def lines(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]


def cells(run_dir: Path) -> dict[tuple, str | None]:
    return {(r["condition"], r["scenario_id"], r["trial"]): r["turn_2_judge_label"] for r in lines(run_dir)}


def without_timing(summary: dict) -> dict:
    """The summary's numbers: all but the manifest (which names the shards) and the latencies (wall clock)."""
    return {key: value for key, value in summary.items() if key not in ("manifest", "latency")}


def test_a_shard_is_a_fixed_share_of_the_cells():
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "2", "a/b", "1/0"):
        with pytest.raises(ShardError, match="--shard"):
            parse_shard(bad)
    runner_cells = [
        (c, s, t, g, p)
        for c in ("baseline", "explicit")
        for s in (f"sc-{i:02d}" for i in range(1, 41))
        for t in range(3)
        for g in (None, 250)
        for p in (None, "fps:1")
    ]
    owners = [[k for k in range(1, 5) if in_shard(cell, (k, 4))] for cell in runner_cells]
    assert all(len(o) == 1 for o in owners)  # each cell in exactly one shard
    sizes = [sum(o == [k] for o in owners) for k in range(1, 5)]
    assert min(sizes) > 0.8 * len(runner_cells) / 4  # about a quarter each
    # the key is the record's cell: an axis left unset moves nothing, and the hash does not depend on the process
    assert cell_key(("baseline", "sc-01", 0, None, None)) == ("sc-01", "baseline", 0)
    assert cell_key(("baseline", "sc-01", 0, None, "fps:1")) == ("sc-01", "baseline", 0, "fps:1")
    done = subprocess.run(
        [sys.executable, "-c", "from benchmark.shards import shard_of; print(shard_of(('sc-07', 'baseline', 1), 7))"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": "123"},
    )
    assert int(done.stdout) == shard_of(("sc-07", "baseline", 1), 7)


@pytest.mark.slow
def test_two_shards_merged_are_the_unsharded_run_and_a_shard_of_another_model_is_refused(tmp_path):
    with FakeOpenAI(reply="The cross-tip screwdriver you hold now fits.") as server:
        whole = bench(server, tmp_path / "whole")
        first = bench(server, tmp_path / "s1", "--shard", "1/2")
        second = bench(server, tmp_path / "s2", "--shard", "2/2")
        other = bench(server, tmp_path / "other", "--shard", "2/2", model="openai:another")
        # a shard's dir resumes only as the same shard
        moved = bench(server, tmp_path / "s1", "--shard", "2/2", "--resume")
    for done in (whole, first, second, other):
        assert done.returncode == 0, done.stderr
    assert moved.returncode == 2 and "shard" in moved.stderr
    one, two, everything = cells(tmp_path / "s1"), cells(tmp_path / "s2"), cells(tmp_path / "whole")
    assert len(everything) == 40 and one and two and not set(one) & set(two) and {**one, **two} == everything
    shard_summary = json.loads((tmp_path / "s1" / "summary.json").read_text())
    assert shard_summary["manifest"]["shard"] == "1/2"
    assert shard_summary["faults"]["planned"] == len(one)  # a shard's denominator is its own share

    merged = wearsim("merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--output-dir", str(tmp_path / "merged"))
    assert merged.returncode == 0, merged.stderr
    assert cells(tmp_path / "merged") == everything
    # in the order the run planned its cells (condition, scenario, trial), whichever shard ran them
    assert [(r["condition"], r["scenario_id"], r["trial"]) for r in lines(tmp_path / "merged")] == [
        (c, s, t) for c in ("baseline", "track_current_frame") for s in IDS.split(",") for t in (0, 1)
    ]
    summary = json.loads((tmp_path / "merged" / "summary.json").read_text())
    unsharded = json.loads((tmp_path / "whole" / "summary.json").read_text())
    assert without_timing(summary) == without_timing(unsharded)
    assert summary["manifest"]["shard"] is None
    assert [m["shard"] for m in summary["manifest"]["merged_from"]] == ["1/2", "2/2"]
    findings = (tmp_path / "merged" / "findings.md").read_text().splitlines()
    assert findings[2] == (tmp_path / "whole" / "findings.md").read_text().splitlines()[2]  # turns OK, same cells

    refused = wearsim("merge", str(tmp_path / "s1"), str(tmp_path / "other"), "--output-dir", str(tmp_path / "bad"))
    assert refused.returncode == 2
    assert "candidate_model" in refused.stderr and '"openai:another"' in refused.stderr
    assert not (tmp_path / "bad" / "transcripts.jsonl").exists()
    shutil.copytree(tmp_path / "s1", tmp_path / "s1-again")
    overlap = wearsim("merge", str(tmp_path / "s1"), str(tmp_path / "s1-again"), "--output-dir", str(tmp_path / "o"))
    assert overlap.returncode == 2 and "both shard 1/2" in overlap.stderr
    partial = wearsim("merge", str(tmp_path / "s2"), "--output-dir", str(tmp_path / "half"))
    assert partial.returncode == 0 and "shard 1/2 not given" in partial.stderr
    half = json.loads((tmp_path / "half" / "summary.json").read_text())
    assert half["faults"]["planned"] == 40 and half["faults"]["not_run"] == len(one)


def test_merge_refuses_a_cell_recorded_outside_its_shard(tmp_path):
    from benchmark.merge.runs import MergeError, merge_runs
    from core.records import TrialRecord

    manifest = {
        "conditions": ["baseline"],
        "scenario_ids": ["sc-01", "sc-02", "sc-03", "sc-04"],
        "trials": 1,
        "candidate_model": "openai:fake",
    }
    dirs = []
    for k in (1, 2):
        run = tmp_path / f"s{k}"
        run.mkdir()
        (run / "manifest.json").write_text(json.dumps({**manifest, "shard": f"{k}/2"}))
        dirs.append(run)
    stray = next(s for s in manifest["scenario_ids"] if shard_of((s, "baseline", 0), 2) == 2)
    record = TrialRecord(
        scenario_id=stray, condition="baseline", trial=0, target_context="current", cue_type="object_in_hand"
    )
    (dirs[0] / "transcripts.jsonl").write_text(record.to_line())
    with pytest.raises(MergeError, match=f"cell {stray} / baseline / 0 is not in shard 1/2"):
        merge_runs(dirs, tmp_path / "out")


@pytest.mark.slow
def test_a_shard_that_holds_no_cell_exits_0_says_so_and_merges(tmp_path):
    """Issue 34, item 1: `--limit 1 --shard 1/2` and `--shard 2/2` both exit 0; the empty one says it holds
    nothing (no crash on a transcripts.jsonl it never wrote) and `merge` takes it with the other."""
    with FakeOpenAI(reply="The cross-tip screwdriver you hold now fits.") as server:
        done = {
            k: wearsim(
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
                "--shard",
                f"{k}/2",
                "--output-dir",
                str(tmp_path / f"s{k}"),
            )
            for k in (1, 2)
        }
    for result in done.values():
        assert result.returncode == 0, result.stderr
    empty = [k for k in (1, 2) if not (tmp_path / f"s{k}" / "transcripts.jsonl").exists()]
    assert len(empty) == 1
    said = done[empty[0]].stdout + done[empty[0]].stderr
    assert f"shard {empty[0]}/2 holds none of this run's 1 cells" in said
    assert "no such file" not in said and "Traceback" not in said
    merged = wearsim("merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--output-dir", str(tmp_path / "all"))
    assert merged.returncode == 0, merged.stderr
    assert len(lines(tmp_path / "all")) == 1


def test_merge_copies_only_what_a_kept_frame_or_wav_can_be_and_names_each_refusal(tmp_path):
    """Issue 34, item 13: merge copied whatever regular file a record named (a 3 GB sparse "thumbnail"
    wrote 3 GB; a hard link to a file outside the shard was copied with its content)."""
    import io
    import wave

    from PIL import Image

    from core.candidate import Reply
    from core.records import FrameFacts, GlassesFacts, TrialRecord, TurnInput, TurnResult

    shard = tmp_path / "s1"
    manifest = {
        "conditions": ["baseline"],
        "scenario_ids": ["sc-01", "sc-02", "sc-03", "sc-04"],
        "trials": 1,
        "candidate_model": "openai:fake",
        "shard": "1/1",
    }
    shard.mkdir()
    (shard / "manifest.json").write_text(json.dumps(manifest))
    frames, audio = shard / "frames" / "baseline", shard / "audio" / "baseline"
    frames.mkdir(parents=True)
    audio.mkdir(parents=True)
    picture = io.BytesIO()
    Image.new("RGB", (160, 120), "teal").save(picture, "JPEG")
    (frames / "good.jpg").write_bytes(picture.getvalue())
    sound = io.BytesIO()
    with wave.open(sound, "wb") as out:
        out.setnchannels(1), out.setsampwidth(2), out.setframerate(16000), out.writeframes(b"\0\0" * 1600)
    (audio / "good.wav").write_bytes(sound.getvalue())
    with open(frames / "giant.jpg", "wb") as giant:  # a 3 GB sparse file that starts like a JPEG
        giant.write(picture.getvalue()[:64])
        giant.truncate(3 * 1024**3)
    (frames / "text.jpg").write_text("not a picture at all")
    outside = tmp_path / "secret.wav"
    outside.write_bytes(sound.getvalue())
    os.link(outside, audio / "linked.wav")  # a hard link to a file out of the shard
    names = ["frames/baseline/good.jpg", "frames/baseline/giant.jpg", "frames/baseline/text.jpg"]
    reply = Reply(text="an answer", model="m", latency_s=1.0)
    turn = TurnResult(
        turn=2,
        input=TurnInput(turn=2, camera_block=None, speech="hi", camera_source=None, speech_source="authored"),
        reply=reply,
        glasses=GlassesFacts(speech_file="audio/baseline/linked.wav"),
        frames=FrameFacts(policy="fps:1", thumbnails=tuple((n * 100, name) for n, name in enumerate(names))),
    )
    good_turn = TurnResult(
        turn=1,
        input=TurnInput(turn=1, camera_block=None, speech="hi", camera_source=None, speech_source="authored"),
        reply=reply,
        glasses=GlassesFacts(speech_file="audio/baseline/good.wav"),
    )
    record = TrialRecord(
        scenario_id="sc-01",
        condition="baseline",
        trial=0,
        target_context="current",
        cue_type="object_in_hand",
        turns=(good_turn, turn),
    )
    (shard / "transcripts.jsonl").write_text(record.to_line())

    done = wearsim("merge", str(shard), "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    written = sum(os.lstat(p).st_blocks * 512 for p in out.rglob("*") if p.is_file())
    assert written < 200 * 1024**2
    assert (out / "frames/baseline/good.jpg").read_bytes() == picture.getvalue()
    assert (out / "audio/baseline/good.wav").read_bytes() == sound.getvalue()
    for refused in ("giant.jpg", "text.jpg", "linked.wav"):
        assert not (out / ("audio" if refused.endswith("wav") else "frames") / "baseline" / refused).exists()
    said = done.stderr
    assert "refused 3 media files" in said
    assert "frames/baseline/giant.jpg" in said and "larger than" in said
    assert "frames/baseline/text.jpg" in said and "not a JPEG" in said
    assert "audio/baseline/linked.wav" in said and "hard link" in said
