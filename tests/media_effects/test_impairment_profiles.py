"""Impairment profiles: the shipped ones and user files, validated with one-line errors naming the file,
the profile and the field, and the impairment sweep through wearsim bench."""

from __future__ import annotations

from pathlib import Path

import pytest

from media_effects import impairments as imp
from media_effects.frames import jpeg_comments
from media_effects.impairment_profiles import SHIPPED, Profile, load_profiles, parse_profiles, select_profiles
from tests.media_effects.test_impairments import FRAME, gray, laplacian_variance, voice

# ---------------------------------------------------------------- profiles


def test_the_shipped_profiles_are_there_documented_and_do_something():
    profiles = load_profiles()
    assert list(profiles) == ["clean", "street", "kitchen", "dim", "shaky", "accent", "weak-wifi"]
    assert all(p.description and p.source == str(SHIPPED) for p in profiles.values())
    assert profiles["clean"].is_clean and not any(p.is_clean for n, p in profiles.items() if n != "clean")
    text = SHIPPED.read_text()
    for name in profiles:  # each profile has a comment right above it saying what it models
        before = text[: text.index(f"[{name}]")].rstrip().splitlines()[-1]
        assert before.startswith("# ")


def test_a_profile_applies_its_impairments_and_repeats_for_its_seed():
    profiles = load_profiles()
    assert profiles["clean"].impair_frame(FRAME, 3) == FRAME
    assert profiles["clean"].impair_audio(voice(1)) == voice(1)
    dim = profiles["dim"]
    assert gray(dim.impair_frame(FRAME, 0)).mean() < 0.2 * gray(FRAME).mean()
    assert jpeg_comments(dim.impair_frame(FRAME, 0)) == jpeg_comments(FRAME)
    assert dim.impair_frame(FRAME, 0) == dim.impair_frame(FRAME, 0)
    assert dim.impair_frame(FRAME, 0) != dim.with_seed(1).impair_frame(FRAME, 0)
    assert dim.impair_frame(FRAME, 0) != dim.impair_frame(FRAME, 1)
    shaky = profiles["shaky"]
    assert laplacian_variance(shaky.impair_frame(FRAME, 0)) < 0.5 * laplacian_variance(FRAME)

    kitchen = profiles["kitchen"]
    clean = voice(2, 1.5)
    out = kitchen.impair_audio(clean, index=1)
    assert out == kitchen.impair_audio(clean, index=1) != kitchen.with_seed(9).impair_audio(clean, index=1)
    assert len(out) == len(clean) and imp.snr_db(clean, out) < 12
    street = profiles["street"]
    with pytest.raises(ValueError, match="babble"):
        street.impair_audio(clean)
    sources = [voice(s, 1.1) for s in range(20, 26)]
    assert abs(imp.snr_db(clean, street.impair_audio(clean, babble=sources)) - 5) < 1

    uplink = profiles["weak-wifi"].new_uplink()
    assert (uplink.latency_ms, uplink.loss, uplink.bandwidth_kbps) == (120, 0.03, 600)
    assert profiles["weak-wifi"].settings() == {
        "name": "weak-wifi",
        "seed": 0,
        "audio": {},
        "video": {},
        "uplink": {
            "latency_ms": 120.0,
            "jitter_ms": 40.0,
            "loss": 0.03,
            "bandwidth_kbps": 600.0,
            "max_queue_ms": 800.0,
        },
    }
    with pytest.raises(ValueError, match="seed"):
        dim.with_seed(-1)


def test_a_user_file_replaces_and_adds_profiles(tmp_path):
    user = tmp_path / "mine.toml"
    user.write_text(
        '[street]\ndescription = "quieter street"\naudio = { white_snr_db = 20 }\n\n'
        "[bus]\nseed = 4\n[bus.uplink]\nloss = 0.1\n"
    )
    profiles = load_profiles(user)
    assert profiles["street"].audio.white_snr_db == 20 and profiles["street"].audio.babble_snr_db is None
    assert profiles["street"].video.shake_px == 0  # replaced whole, not merged
    assert profiles["bus"].seed == 4 and profiles["bus"].source == str(user)
    assert [p.name for p in select_profiles("clean, bus,clean", user)] == ["clean", "bus"]


ERRORS = [
    ("[street\n", "not valid TOML"),
    (
        "[loud]\naudio = { white_snr_db = 80 }\n",
        "profile 'loud': field 'audio.white_snr_db': must be between -10 and 60",
    ),
    ("[loud]\naudio = { snr = 5 }\n", "profile 'loud': field 'audio.snr': unknown field"),
    ("[loud]\nvolume = 5\n", "profile 'loud': field 'volume': unknown field"),
    ("[lossy]\nuplink = { loss = 0.9 }\n", "profile 'lossy': field 'uplink.loss': must be between 0 and 0.5"),
    ("[slow]\nuplink = { bandwidth_kbps = 100 }\n", "profile 'slow': field 'uplink.bandwidth_kbps': must be 0"),
    ("[x]\nvideo = { shake_px = 2.5 }\n", "profile 'x': field 'video.shake_px': must be a whole number"),
    ("[x]\nvideo = { blur_px = true }\n", "profile 'x': field 'video.blur_px': must be a number"),
    ("[x]\naudio = { mains_hz = 55 }\n", "profile 'x': field 'audio.mains_hz': must be one of 50, 60"),
    ("[x]\naudio = 3\n", "profile 'x': field 'audio': must be a table"),
    ("x = 3\n", "profile 'x': field 'x': a profile must be a table"),
    ("[x]\nseed = -2\n", "profile 'x': field 'seed': must be a whole number >= 0"),
    ("[x]\naudio = { babble_talkers = 4 }\n", "field 'audio.babble_talkers': is set but audio.babble_snr_db is not"),
    ('["Bad Name"]\n', "profile 'Bad Name': a profile name is"),
]


@pytest.mark.parametrize("text, message", ERRORS)
def test_a_bad_profile_file_is_one_line_naming_the_file_profile_and_field(tmp_path, text, message):
    user = tmp_path / "profiles.toml"
    user.write_text(text)
    with pytest.raises(ValueError) as refused:
        load_profiles(user)
    line = str(refused.value)
    assert "\n" not in line and line.startswith(f"{user}: ") and message in line


def test_an_unknown_profile_or_an_unreadable_file_is_named(tmp_path):
    with pytest.raises(ValueError) as refused:
        select_profiles("clean,stormy")
    assert str(SHIPPED) in str(refused.value) and "'stormy'" in str(refused.value)
    assert "known: accent, clean, dim, kitchen, shaky, street, weak-wifi" in str(refused.value)
    with pytest.raises(ValueError, match="no impairment profile 'x'.*mine.toml|mine.toml.*'x'"):
        (tmp_path / "mine.toml").write_text("")
        select_profiles(["x"], tmp_path / "mine.toml")
    with pytest.raises(ValueError, match="missing.toml: cannot read"):
        load_profiles(tmp_path / "missing.toml")
    with pytest.raises(ValueError, match="at least one"):
        select_profiles(" , ")


def test_parse_profiles_takes_text_with_a_source_name():
    profiles = parse_profiles("[a]\nvideo = { jpeg_quality = 30 }\n", "inline")
    assert profiles["a"] == Profile(name="a", video=profiles["a"].video, source="inline")
    assert len(imp.jpeg_quality(FRAME, 30)) == len(profiles["a"].impair_frame(FRAME))
    assert Path(SHIPPED).name == "impairments.toml"


# ---- the impairment sweep through `wearsim bench`


def _impaired_bench(run_dir, model, base_url, env, *extra):
    import json
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "bench",
            "--model",
            model,
            "--base-url",
            base_url,
            "--judge-family",
            "lexical",
            "--conditions",
            "baseline",
            "--output-dir",
            str(run_dir),
            "--via",
            "stream",
            "--synthetic-frames",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in (run_dir / "transcripts.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_frames_a_weak_uplink_loses_never_reach_a_realtime_api_and_its_audio_gaps_are_recorded(tmp_path):
    from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime

    profiles = tmp_path / "mine.toml"
    profiles.write_text(
        '[lossy]\ndescription = "a third of every send lost"\n[lossy.uplink]\nloss = 0.3\n'
        "latency_ms = 40.0\njitter_ms = 10.0\n"
    )
    with FakeOpenAIRealtime() as server:
        records = _impaired_bench(
            tmp_path / "rt",
            "openai-realtime:gpt-realtime",
            server.base_url,
            {"OPENAI_API_KEY": TEST_KEY},
            "--impair",
            "weak-wifi,lossy",
            "--impairments-file",
            str(profiles),
            "--frame-policy",
            "fps:10",
            "--ids",
            "sc-01,sc-05",
        )
        images = sum(
            1
            for s in server.sessions
            for item in s["items"]
            for part in item["content"]
            if part["type"] == "input_image"
        )
    assert len(records) == 4 and all(r["error"] is None for r in records)
    turns = [turn for r in records for turn in r["turns"]]
    lost = [t for turn in turns for t in turn["glasses"].get("frames_lost_ms", [])]
    # the server was offered exactly the frames played but not lost, and the API got exactly those sent
    assert (
        sum(turn["frames"]["offered"] for turn in turns)
        == sum(turn["glasses"]["frames_played"] for turn in turns) - len(lost)
        and lost
    )
    assert images == sum(turn["frames"]["sent"] for turn in turns) > 0
    for record in records:  # a lost frame is never among a session's frames sent
        assert not (
            {t for turn in record["turns"] for t in turn["glasses"].get("frames_lost_ms", [])}
            & {t for turn in record["turns"] for t in turn["frames"]["sent_ms"]}
        )
    lossy = [turn for r in records if r["impairment"] == "lossy" for turn in r["turns"]]
    assert all(turn["glasses"]["audio_lost_ms"] for turn in lossy)  # the gaps the server heard, in the record
    assert all(turn["glasses"]["impairment"] == "lossy" and turn["glasses"]["uplink_delay_ms"] >= 40 for turn in lossy)


@pytest.mark.slow
def test_an_impairment_sweep_reports_each_profile_against_clean_and_repeats_from_its_seed(tmp_path):
    import json

    from tests.fake_openai import FakeOpenAI

    with FakeOpenAI(reply="The one in your hand now.") as server:
        records = _impaired_bench(
            tmp_path / "sweep",
            "openai:fake",
            server.base_url,
            {"OPENAI_API_KEY": ""},
            "--impair",
            "clean,dim,street",
            "--describer",
            "ocr",
            "--ids",
            "sc-02",
        )
        again = _impaired_bench(
            tmp_path / "again",
            "openai:fake",
            server.base_url,
            {"OPENAI_API_KEY": ""},
            "--impair",
            "dim",
            "--describer",
            "ocr",
            "--ids",
            "sc-02",
        )
    assert sorted(r["impairment"] for r in records) == ["clean", "dim", "street"]
    by_cell = {(r["scenario_id"], r["impairment"]): r for r in records}
    for record in records:
        for turn in record["turns"]:
            glasses = turn["glasses"]
            assert glasses["impairment"] == record["impairment"] and isinstance(glasses["impairment_seed"], int)
        assert record["turns"][0]["glasses"]["frames_degraded"] == (
            0 if record["impairment"] == "clean" else record["turns"][0]["glasses"]["frames_played"]
        )
    # a profile's draws come from the run's seed and the cell: the same cell hears and reads the same
    for rerun in again:
        first = by_cell[(rerun["scenario_id"], rerun["impairment"])]
        assert [t["input"]["speech"] for t in rerun["turns"]] == [t["input"]["speech"] for t in first["turns"]]
        assert [t["input"]["camera_block"] for t in rerun["turns"]] == [
            t["input"]["camera_block"] for t in first["turns"]
        ]
    rows = json.loads((tmp_path / "sweep" / "summary.json").read_text())["by_impairment"]["baseline"]
    assert set(rows) == {"clean", "dim", "street"}
    # the dark frames are read worse than the clean ones; the street's babble is heard worse
    assert rows["dim"]["camera_similarity"] < rows["clean"]["camera_similarity"]
    assert rows["street"]["word_error_rate"] > rows["clean"]["word_error_rate"]
    assert "against_clean" not in rows["clean"] and rows["dim"]["against_clean"]["pairs"] <= 1
    findings = (tmp_path / "sweep" / "findings.md").read_text()
    assert "## Real-world conditions (impairment profiles)" in findings and "| `dim` |" in findings


def test_speech_variety_speaks_the_line_afresh_in_another_voice_and_rate():
    from core.scenario import load_bank
    from media_effects.impairment_profiles import select_profiles
    from simulator.timeline import plan_turn

    scenario = load_bank().get("sc-05")  # its lines are recorded: media/sc-05/turn_1.wav
    [accent] = select_profiles("accent")
    plain, spoken = plan_turn(scenario, 1, 0), plan_turn(scenario, 1, 0, profile=accent)
    assert plain.speech_source == "media" and spoken.speech_source == "tts"
    audio = lambda plan: b"".join(i.payload for i in plan.items if i.kind == "audio")  # noqa: E731
    assert len(audio(spoken)) < len(audio(plain))  # 200 words a minute against 150
    assert audio(plan_turn(scenario, 1, 0, profile=accent)) == audio(spoken)  # the same voice, the same speech
    with pytest.raises(ValueError) as caught:
        parse_profiles('[x]\n[x.audio]\nvoice = "klingon"\n', "mine.toml")
    assert "mine.toml: profile 'x': field 'audio.voice'" in str(caught.value)
