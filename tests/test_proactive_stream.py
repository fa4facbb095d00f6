"""Proactive trials end to end: `wearsim bench --via stream --subset proactive` through the
in-process server, on the bundled local model (the real llama.cpp server, Whisper for the
opening line) and against the OpenAI Realtime and Gemini Live conformance servers, which
answer every request with a remark."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from pathlib import Path

from core.proactive_scenario import load_proactive
from core.records import PROBE_CUE
from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime

EVENT = {s.scenario_id: s for s in load_proactive(Path(__file__).parents[1] / "benchmark/v1/proactive.json")}["pa-01"]

IDS = "pa-01,pq-01"  # an event with an opening line, and a quiet control


def _bench(run_dir, *extra, env=None):
    done = subprocess.run(
        [sys.executable, "-m", "benchmark", "bench", "--via", "stream", "--subset", "proactive", "--ids", IDS,
         "--synthetic-frames", "--describer", "authored", "--judge-family", "lexical", "--conditions", "baseline",
         "--output-dir", str(run_dir), *extra],
        capture_output=True, text=True, timeout=900, env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]
    return records, json.loads((run_dir / "summary.json").read_text()), done


def _check_block(records, summary, strategy="change"):
    assert [r["error"] for r in records] == [None] * len(records)
    cell = summary["proactive"]["baseline"][strategy]
    for field in ("precision", "recall"):
        assert set(cell[field]) >= {"rate", "k", "n", "ci_low", "ci_high"}
    for field in ("false_alarms_per_min", "time_to_speak_p50_s", "time_to_speak_p95_s", "duplicates",
                  "cost_per_hour_usd"):
        assert field in cell
    assert cell["hits"] + cell["misses"] == cell["events"] == 1 and cell["quiet_controls"] == 1
    watched = {r["scenario_id"]: r["watching"] for r in records}
    # every record lists its probes (asked on the stream, each with the scene its newest frame showed)
    for watching in watched.values():
        assert watching["probes"] and all(p["asked_ms"] is not None and p["scene"] is not None
                                          for p in watching["probes"])
        assert watching["frames_sent_ms"] and watching["scene_starts_ms"][0] == 0
    assert watched["pa-01"]["onset_ms"] == EVENT.onset_ms and watched["pa-01"]["window_end_ms"] == EVENT.window_end_ms
    quiet = watched["pq-01"]
    assert cell["false_alarms_in_quiet_controls"] == sum(not p["silent"] for p in quiet["probes"])
    return cell, watched


def test_a_local_model_watches_and_every_record_lists_its_probes_and_remarks(tmp_path):
    records, summary, done = _bench(tmp_path / "run")
    cell, watched = _check_block(records, summary)
    # the opening line was heard by Whisper and answered as turn 1, before any probe
    opening = next(r for r in records if r["scenario_id"] == "pa-01")
    assert opening["turns"][0]["input"]["speech_source"] == "perceived"
    first_probe = watched["pa-01"]["probes"][0]["asked_ms"]
    assert first_probe > 0
    # a probe after the change was asked with a frame of the event's scene
    assert any(p["scene"] == EVENT.event.scene and p["frame_ms"] >= EVENT.onset_ms for p in watched["pa-01"]["probes"])
    assert "Events caught on time (baseline, change)" in done.stdout
    findings = (tmp_path / "run" / "findings.md").read_text()
    assert findings.startswith("# Findings: proactive trials") and "false alarms:" in findings
    # its one plot, none of the question-and-answer ones (they would be empty)
    assert sorted(p.name for p in (tmp_path / "run" / "plots").iterdir()) == ["proactive.png"]


def test_openai_realtime_answers_every_probe_and_a_server_that_always_talks_fails_every_quiet_probe(tmp_path):
    with FakeOpenAIRealtime() as server:
        records, summary, _ = _bench(tmp_path / "run", "--model", "openai-realtime:gpt-realtime-2", "--base-url",
                                     server.base_url, env={"OPENAI_API_KEY": TEST_KEY})
    assert server.problems == []
    cell, watched = _check_block(records, summary)
    probes = sum(len(w["probes"]) for w in watched.values())
    openings = sum(bool(r["turns"]) for r in records)
    assert server.responses == probes + openings  # one response per probe, and one for the opening line
    quiet = watched["pq-01"]["probes"]
    assert quiet and all(p["outcome"] == "false_alarm" for p in quiet)


def test_gemini_live_answers_every_probe_and_a_server_that_always_talks_fails_every_quiet_probe(gemini_env, tmp_path):
    with gemini_env(models=("gemini-3.8-live",)) as server:
        records, summary, _ = _bench(tmp_path / "run", "--model", "gemini-live:gemini-3.8-live", "--base-url",
                                     server.base_url, "--proactive", "every:6")
    assert server.problems == []
    cell, watched = _check_block(records, summary, "every:6")
    probes = sum(len(w["probes"]) for w in watched.values())
    openings = sum(bool(r["turns"]) for r in records)
    # each probe reached the API once, as a text activity of its own, and was answered
    cues = sum(text == PROBE_CUE for session in server.sessions for text in session["texts"])
    assert cues == probes and all(p["text"] == server.reply for w in watched.values() for p in w["probes"])
    # the API answered every probe and the opening line; closing a session ends its last activity (the
    # silence streamed after the last probe), which the API may answer too before the socket closes
    assert 0 <= server.turns - (probes + openings) <= len(records)  # at most one such answer a session
    quiet = watched["pq-01"]["probes"]
    assert len(quiet) >= 4 and all(p["outcome"] == "false_alarm" for p in quiet)  # 34 s, a probe every 6 s


def test_native_on_a_chat_model_and_proactive_without_the_stream_are_refused_before_anything_starts(tmp_path):
    for extra, words in ((["--via", "stream", "--proactive", "native"], "needs a realtime API"),
                         (["--via", "direct"], "needs --via stream"),
                         (["--via", "stream", "--frame-policy", "end"], "sends no frame until the user speaks")):
        done = subprocess.run([sys.executable, "-m", "benchmark", "bench", "--subset", "proactive",
                               "--output-dir", str(tmp_path / "x"), *extra], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 2 and words in done.stderr, done.stderr
        assert not (tmp_path / "x").exists()


def test_a_grid_of_strategies_and_frame_policies_runs_one_cell_per_pair_and_its_shards_merge(tmp_path):
    grid = ("--proactive", "change,every:5", "--frame-policy", "fps:1,change:0.02", "--ids", "pq-01")
    with FakeOpenAIRealtime() as server:  # the two shards at once, as shards are meant to run
        shards = [subprocess.Popen(
            [sys.executable, "-m", "benchmark", "bench", "--via", "stream", "--subset", "proactive",
             "--model", "openai-realtime:gpt-realtime-2", "--base-url", server.base_url,
             "--judge-family", "lexical", "--conditions", "baseline", *grid, "--shard", f"{k}/2",
             "--output-dir", str(tmp_path / f"shard{k}")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "OPENAI_API_KEY": TEST_KEY})
            for k in (1, 2)]
        for shard in shards:
            _, err = shard.communicate(timeout=900)
            assert shard.returncode == 0, err
    merged = subprocess.run([sys.executable, "-m", "benchmark", "merge", str(tmp_path / "shard1"),
                             str(tmp_path / "shard2"), "--output-dir", str(tmp_path / "all")],
                            capture_output=True, text=True, timeout=300)
    assert merged.returncode == 0, merged.stderr
    summary = json.loads((tmp_path / "all" / "summary.json").read_text())
    cells = summary["proactive"]["baseline"]
    assert sorted(cells) == ["change change:0.02/2", "change fps:1", "every:5 change:0.02/2", "every:5 fps:1"]
    assert all(cell["trials"] == 1 and cell["quiet_controls"] == 1 for cell in cells.values())
    records = [json.loads(line) for line in (tmp_path / "all" / "transcripts.jsonl").read_text().splitlines()]
    assert sorted((r["proactive"], r["frame_policy"]) for r in records) == sorted(
        (s, p) for s in ("change", "every:5") for p in ("fps:1", "change:0.02/2"))
    for record in records:  # the kept frames came along with the records that name them
        for _, name in record["watching"]["thumbnails"]:
            assert (tmp_path / "all" / name).is_file()
    # what a probe costs shows in the cost of watching
    assert all(cell["cost_per_hour_usd"] and cell["cost_per_hour_usd"] > 0 for cell in cells.values())


def test_native_asks_nothing_and_records_what_the_api_says_unasked(tmp_path):
    # neither adapter turns the API's own turn detection on: nothing comes unasked, and nothing is made up
    with FakeOpenAIRealtime() as server:
        done = subprocess.run(
            [sys.executable, "-m", "benchmark", "bench", "--via", "stream", "--subset", "proactive", "--ids", "pq-01",
             "--model", "openai-realtime:gpt-realtime-2", "--base-url", server.base_url, "--judge-family", "lexical",
             "--conditions", "baseline", "--proactive", "native", "--output-dir", str(tmp_path / "run")],
            capture_output=True, text=True, timeout=600, env={**os.environ, "OPENAI_API_KEY": TEST_KEY})
    assert done.returncode == 0, done.stderr
    [record] = [json.loads(line) for line in (tmp_path / "run" / "transcripts.jsonl").read_text().splitlines()]
    assert record["proactive"] == "native" and record["watching"]["probes"] == []
    assert record["watching"]["frames_sent_ms"]  # the API was sent the frames all along
    assert server.responses == 0
    cell = json.loads((tmp_path / "run" / "summary.json").read_text())["proactive"]["baseline"]["native"]
    assert cell["probes"] == 0 and cell["false_alarms"] == 0 and cell["quiet_controls"] == 1
