"""Proactive trials end to end: `wearsim bench --via stream --subset proactive` through the
in-process server, on the bundled local model (the real llama.cpp server, Whisper for the
opening line) and against the OpenAI Realtime and Gemini Live conformance servers, which
answer every request with a remark. The file's runs start together (`started`) and each test checks
its own once it has finished."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest

from core.proactive_scenario import load_proactive
from core.records import PROBE_CUE
from tests.benchmark.run.test_cost_runs import (
    REALTIME_PRICES,
    TRANSCRIBE,
    TRANSCRIBE_PRICES,
    realtime_usage_cost,
    transcription_usage_cost,
    write_prices,
)
from tests.fake_gemini_live import FakeGeminiLive
from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime
from tests.paths import ROOT
from tests.streaming.test_billed_responses import GEMINI, gemini_price_file, gemini_usage_cost

EVENT = {s.scenario_id: s for s in load_proactive(ROOT / "benchmark/v1/proactive.json")}["pa-01"]

IDS = "pa-01,pq-01"  # an event with an opening line, and a quiet control
GRID = ("--proactive", "change,every:5", "--frame-policy", "fps:1,change:0.02", "--ids", "pq-01")

# every test of this file on one worker: the module's benches start together, once
# the proactive trials play their scenes at real time (a module fixture runs them once for every test here)
pytestmark = [pytest.mark.xdist_group("proactive_stream"), pytest.mark.clock]


def _bench_args(run_dir, *extra) -> list[str]:
    return [
        sys.executable,
        "-m",
        "benchmark",
        "bench",
        "--via",
        "stream",
        "--subset",
        "proactive",
        "--judge-family",
        "lexical",
        "--conditions",
        "baseline",
        "--output-dir",
        str(run_dir),
        *extra,
    ]


class Started:
    """`wearsim bench` runs started together in the background, each with the API server it talks to.
    Proactive trials play in real time and mostly wait, so the file takes about as long as its longest
    run instead of the sum of them. `finished(name)` waits for a run (and for the others sharing its
    server), then shuts that server down, as a `with` block around the run would."""

    def __init__(self, stack: ExitStack, folder: Path):
        self.stack, self.folder, self.runs, self.servers = stack, folder, {}, {}

    def server(self, name: str, server):
        """`server` started, to be shut down when its runs are finished (or when the module ends)."""
        own = self.stack.enter_context(ExitStack())
        self.servers[name] = (own, own.enter_context(server))
        return self.servers[name][1]

    def start(self, name: str, server: str | None, argv: list[str], env: dict | None = None) -> None:
        process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})}
        )
        self.stack.callback(lambda: process.poll() is None and process.kill())
        self.runs[name] = (process, server)

    def finished(self, *names: str):
        """((returncode, stdout, stderr) for each of `names`, the server they talked to, shut down)."""
        outcomes = []
        for name in names:
            process, server = self.runs[name]
            out, err = process.communicate(timeout=900)
            outcomes.append((process.returncode, out, err))
        if server is not None:
            self.servers[server][0].close()
        return outcomes, (self.servers[server][1] if server is not None else None)


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    folder = tmp_path_factory.mktemp("proactive")
    with ExitStack() as stack:
        runs = Started(stack, folder)
        runs.start(
            "local", None, _bench_args(folder / "local", "--ids", IDS, "--synthetic-frames", "--describer", "authored")
        )
        openai = runs.server("openai", FakeOpenAIRealtime())
        prices = write_prices(folder / "openai-prices.toml", "openai-realtime:gpt-realtime-2", REALTIME_PRICES)
        prices.write_text(
            prices.read_text() + "\n" + write_prices(folder / "t.toml", TRANSCRIBE, TRANSCRIBE_PRICES).read_text()
        )
        runs.start(
            "openai",
            "openai",
            _bench_args(
                folder / "openai",
                "--ids",
                IDS,
                "--synthetic-frames",
                "--describer",
                "authored",
                "--model",
                "openai-realtime:gpt-realtime-2",
                "--base-url",
                openai.base_url,
                "--prices",
                str(prices),
            ),
            {"OPENAI_API_KEY": TEST_KEY},
        )
        # the server answers (and bills) every activity ended, as the real service may
        gemini = runs.server("gemini", FakeGeminiLive(folder, models=("gemini-3.8-live",), answer_every_activity=True))
        runs.start(
            "gemini",
            "gemini",
            _bench_args(
                folder / "gemini",
                "--ids",
                IDS,
                "--synthetic-frames",
                "--describer",
                "authored",
                "--model",
                GEMINI,
                "--base-url",
                gemini.base_url,
                "--proactive",
                "every:6",
                "--prices",
                str(gemini_price_file(folder)),
            ),
            {"GEMINI_API_KEY": TEST_KEY, "SSL_CERT_FILE": str(gemini.cert)},
        )
        grid = runs.server("grid", FakeOpenAIRealtime())
        for k in (1, 2):  # the two shards at once, as shards are meant to run
            runs.start(
                f"grid{k}",
                "grid",
                _bench_args(
                    folder / f"shard{k}",
                    "--model",
                    "openai-realtime:gpt-realtime-2",
                    "--base-url",
                    grid.base_url,
                    *GRID,
                    "--shard",
                    f"{k}/2",
                ),
                {"OPENAI_API_KEY": TEST_KEY},
            )
        native = runs.server("native", FakeOpenAIRealtime())
        runs.start(
            "native",
            "native",
            _bench_args(
                folder / "native",
                "--ids",
                "pq-01",
                "--model",
                "openai-realtime:gpt-realtime-2",
                "--base-url",
                native.base_url,
                "--proactive",
                "native",
            ),
            {"OPENAI_API_KEY": TEST_KEY},
        )
        yield runs


def _read(started, name):
    """(records, summary, stdout) of a finished run, after checking it succeeded; and its server."""
    [(status, out, err)], server = started.finished(name)
    assert status == 0, err
    run_dir = started.folder / name
    records = [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]
    return (records, json.loads((run_dir / "summary.json").read_text()), out), server


def _check_block(records, summary, strategy="change"):
    assert [r["error"] for r in records] == [None] * len(records)
    cell = summary["proactive"]["baseline"][strategy]
    for field in ("precision", "recall"):
        assert set(cell[field]) >= {"rate", "k", "n", "ci_low", "ci_high"}
    for field in (
        "false_alarms_per_min",
        "time_to_speak_p50_s",
        "time_to_speak_p95_s",
        "duplicates",
        "cost_per_hour_usd",
    ):
        assert field in cell
    # one event trial and one quiet control; one whose replies all came after its window (a machine too
    # slow for the stream's pace) is counted apart as starved, with its reason, never as a miss
    assert cell["trials"] == 2 and cell["events"] + cell["quiet_controls"] + cell["starved"] == 2
    assert cell["hits"] + cell["misses"] == cell["events"] and cell["quiet_controls"] <= 1
    assert sum(cell["starved_reasons"].values()) == cell["starved"]
    watched = {r["scenario_id"]: r["watching"] for r in records}
    # every record lists its probes (asked on the stream, each with the scene its newest frame showed)
    for watching in watched.values():
        assert watching["probes"] and all(
            p["asked_ms"] is not None and p["scene"] is not None for p in watching["probes"]
        )
        assert watching["frames_sent_ms"] and watching["scene_starts_ms"][0] == 0
    assert watched["pa-01"]["onset_ms"] == EVENT.onset_ms and watched["pa-01"]["window_end_ms"] == EVENT.window_end_ms
    quiet = watched["pq-01"]
    assert cell["false_alarms_in_quiet_controls"] == sum(not p["silent"] for p in quiet["probes"])
    return cell, watched


@pytest.mark.whisper
def test_a_local_model_watches_and_every_record_lists_its_probes_and_remarks(started):
    (records, summary, stdout), _ = _read(started, "local")
    cell, watched = _check_block(records, summary)
    # the opening line was heard by Whisper and answered as turn 1, before any probe
    opening = next(r for r in records if r["scenario_id"] == "pa-01")
    assert opening["turns"][0]["input"]["speech_source"] == "perceived"
    first_probe = watched["pa-01"]["probes"][0]["asked_ms"]
    assert first_probe > 0
    # a probe after the change was asked with a frame of the event's scene
    assert any(p["scene"] == EVENT.event.scene and p["frame_ms"] >= EVENT.onset_ms for p in watched["pa-01"]["probes"])
    assert "Events caught on time (baseline, change)" in stdout
    findings = (started.folder / "local" / "findings.md").read_text()
    assert findings.startswith("# Findings: proactive trials") and "false alarms:" in findings
    # its one plot, none of the question-and-answer ones (they would be empty)
    assert sorted(p.name for p in (started.folder / "local" / "plots").iterdir()) == ["proactive.png"]


@pytest.mark.slow
def test_openai_realtime_answers_every_probe_and_a_server_that_always_talks_fails_every_quiet_probe(started):
    (records, summary, _), server = _read(started, "openai")
    assert server.problems == []
    cell, watched = _check_block(records, summary)
    probes = sum(len(w["probes"]) for w in watched.values())
    openings = sum(bool(r["turns"]) for r in records)
    assert server.responses == probes + openings  # one response per probe, and one for the opening line
    quiet = watched["pq-01"]["probes"]
    assert quiet and all(p["outcome"] == "false_alarm" for p in quiet)
    # the run's cost is what the server billed: every response and the opening line's transcription
    billed = sum(realtime_usage_cost(u, REALTIME_PRICES) for u in server.usages) + sum(
        transcription_usage_cost(u, TRANSCRIBE_PRICES) for u in server.transcription_usages
    )
    assert billed > 0
    assert summary["cost"]["conditions"]["baseline"]["candidate_usd"] == pytest.approx(billed, rel=1e-9)


@pytest.mark.slow
def test_gemini_live_answers_every_probe_and_a_server_that_always_talks_fails_every_quiet_probe(started):
    (records, summary, _), server = _read(started, "gemini")
    assert server.problems == []
    cell, watched = _check_block(records, summary, "every:6")
    probes = sum(len(w["probes"]) for w in watched.values())
    openings = sum(bool(r["turns"]) for r in records)
    # each probe reached the API once, as a text activity of its own, and was answered
    cues = sum(text == PROBE_CUE for session in server.sessions for text in session["texts"])
    assert cues == probes and all(p["text"] == server.reply for w in watched.values() for p in w["probes"])
    # the API answered every probe and the opening line, and nothing else: no activity was opened for
    # the silence streamed after the last probe, so closing a session asks for no reply
    assert server.responses == probes + openings == len(server.usages)
    for session in server.sessions:
        assert session["activity"].count("start") == session["activity"].count("end")
    billed = sum(gemini_usage_cost(u) for u in server.usages)
    assert billed > 0
    assert summary["cost"]["conditions"]["baseline"]["candidate_usd"] == pytest.approx(billed, rel=1e-9)
    quiet = watched["pq-01"]["probes"]
    assert len(quiet) >= 4 and all(p["outcome"] == "false_alarm" for p in quiet)  # 34 s, a probe every 6 s


@pytest.mark.whisper
def test_native_on_a_chat_model_and_proactive_without_the_stream_are_refused_before_anything_starts(tmp_path):
    for extra, words in (
        (["--via", "stream", "--proactive", "native"], "needs a realtime API"),
        (["--via", "direct"], "needs --via stream"),
        (["--via", "stream", "--frame-policy", "end"], "sends no frame until the user speaks"),
    ):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "bench",
                "--subset",
                "proactive",
                "--output-dir",
                str(tmp_path / "x"),
                *extra,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2 and words in done.stderr, done.stderr
        assert not (tmp_path / "x").exists()


@pytest.mark.clock
def test_a_grid_of_strategies_and_frame_policies_runs_one_cell_per_pair_and_its_shards_merge(started, tmp_path):
    shards, _ = started.finished("grid1", "grid2")
    for status, _, err in shards:
        assert status == 0, err
    merged = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "merge",
            str(started.folder / "shard1"),
            str(started.folder / "shard2"),
            "--output-dir",
            str(tmp_path / "all"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert merged.returncode == 0, merged.stderr
    summary = json.loads((tmp_path / "all" / "summary.json").read_text())
    cells = summary["proactive"]["baseline"]
    assert sorted(cells) == ["change, change:0.02/2", "change, fps:1", "every:5, change:0.02/2", "every:5, fps:1"]
    assert all(cell["trials"] == 1 and cell["quiet_controls"] == 1 for cell in cells.values())
    records = [json.loads(line) for line in (tmp_path / "all" / "transcripts.jsonl").read_text().splitlines()]
    assert sorted((r["proactive"], r["frame_policy"]) for r in records) == sorted(
        (s, p) for s in ("change", "every:5") for p in ("fps:1", "change:0.02/2")
    )
    for record in records:  # the kept frames came along with the records that name them
        for _, name in record["watching"]["thumbnails"]:
            assert (tmp_path / "all" / name).is_file()
    # what a probe costs shows in the cost of watching
    assert all(cell["cost_per_hour_usd"] and cell["cost_per_hour_usd"] > 0 for cell in cells.values())


def test_native_asks_nothing_and_records_what_the_api_says_unasked(started):
    # neither adapter turns the API's own turn detection on: nothing comes unasked, and nothing is made up
    [(status, _, err)], server = started.finished("native")
    assert status == 0, err
    lines = (started.folder / "native" / "transcripts.jsonl").read_text().splitlines()
    [record] = [json.loads(line) for line in lines]
    assert record["proactive"] == "native" and record["watching"]["probes"] == []
    assert record["watching"]["frames_sent_ms"]  # the API was sent the frames all along
    assert server.responses == 0
    cell = json.loads((started.folder / "native" / "summary.json").read_text())["proactive"]["baseline"]["native"]
    assert cell["probes"] == 0 and cell["false_alarms"] == 0 and cell["quiet_controls"] == 1
