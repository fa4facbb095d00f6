"""The impairment library: each impairment measurably does what it says,
everything repeats exactly for a seed, and profile files are validated with
one-line errors naming the file, the profile and the field."""

from __future__ import annotations

import struct
from pathlib import Path

import cv2
import numpy as np
import pytest

from media_effects import impairments as imp
from media_effects.frames import decode_jpeg, encode_jpeg, jpeg_comments
from media_effects.impairment_profiles import SHIPPED, Profile, load_profiles, parse_profiles, select_profiles
from media_effects.synthetic import synthetic_frame

RATE = imp.SAMPLE_RATE


def voice(seed: int, seconds: float = 1.0, silence_after: float = 0.0, f0: float | None = None) -> bytes:
    """A speech-like PCM16 clip: a harmonic tone with a wandering pitch and syllable-rate loudness,
    then `silence_after` seconds of silence."""
    generator = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    pitch = (f0 or generator.uniform(100, 220)) * (1 + 0.05 * np.sin(2 * np.pi * 0.7 * t))
    phase = 2 * np.pi * np.cumsum(pitch) / RATE
    tone = sum(np.sin(k * phase) / k for k in range(1, 6))
    envelope = 0.55 + 0.45 * np.sin(2 * np.pi * 4 * t + generator.uniform(0, 6))
    samples = np.concatenate([6000 * tone * envelope, np.zeros(int(silence_after * RATE))])
    return imp.float_to_pcm(samples)


def samples(pcm: bytes) -> np.ndarray:
    return imp.pcm_to_float(pcm)


def peak_hz(signal: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(signal))
    return float(np.fft.rfftfreq(len(signal), 1 / RATE)[np.argmax(spectrum)])


# ---------------------------------------------------------------- audio


@pytest.mark.parametrize("kind", ["white", "babble", "hum"])
@pytest.mark.parametrize("snr", [0.0, 10.0, 25.0])
def test_noise_is_added_at_the_requested_snr(kind, snr):
    clean = voice(1, 2.0)
    babble_sources = [voice(s, 1.3) for s in range(10, 15)]
    noisy = imp.add_noise(clean, snr, kind, seed=4, babble_sources=babble_sources)
    assert len(noisy) == len(clean) and noisy != clean
    assert abs(imp.snr_db(clean, noisy) - snr) < 1.0


def test_hum_is_at_the_mains_frequency_with_harmonics():
    clean = bytes(2 * RATE)  # silence: the hum alone, at the nominal speech level minus the SNR
    for mains in (50, 60):
        noise = samples(imp.add_noise(clean, 10, "hum", mains_hz=mains))
        assert abs(peak_hz(noise) - mains) < 1.5
        spectrum = np.abs(np.fft.rfft(noise))
        freqs = np.fft.rfftfreq(len(noise), 1 / RATE)
        at = lambda hz: spectrum[np.argmin(np.abs(freqs - hz))]  # noqa: E731
        assert at(2 * mains) > 20 * at(2 * mains + 25)  # a harmonic, not a broad band
    rms_dbfs = 20 * np.log10(np.sqrt(imp.power(noise)) / imp.PCM_MAX)
    assert abs(rms_dbfs - (imp.NOMINAL_SPEECH_DBFS - 10)) < 0.5


def test_babble_is_made_of_the_speech_it_is_given():
    tone = imp.float_to_pcm(5000 * np.sin(2 * np.pi * 440 * np.arange(RATE // 2) / RATE))
    noise = samples(imp.add_noise(voice(1, 1.5), 5, "babble", babble_sources=[tone])) - samples(voice(1, 1.5))
    assert abs(peak_hz(noise) - 440) < 3
    with pytest.raises(ValueError, match="source speech"):
        imp.add_noise(voice(1), 5, "babble")
    with pytest.raises(ValueError, match="noise kind"):
        imp.add_noise(voice(1), 5, "pink")


def test_reverb_lengthens_the_energy_tail_and_keeps_length_and_level():
    clean = voice(2, 0.8, silence_after=1.2)
    speech_end = int(0.8 * RATE)
    tail = slice(speech_end + int(0.05 * RATE), speech_end + int(0.6 * RATE))
    assert imp.power(samples(clean)[tail]) == 0
    tails = []
    for rt60 in (0.3, 1.0):
        wet = imp.reverb(clean, rt60, seed=1)
        assert len(wet) == len(clean)
        assert abs(10 * np.log10(imp.power(samples(wet)) / imp.power(samples(clean)))) < 0.5
        tails.append(imp.power(samples(wet)[tail]))
    assert tails[0] > 0 and tails[1] > 3 * tails[0]  # a longer RT60 rings longer
    assert imp.reverb(clean, 0) == clean


def test_level_changes_by_the_decibels_asked_and_clips_without_wrapping():
    clean = voice(3)
    louder = samples(imp.change_level(clean, 6.0))
    loud = np.abs(samples(clean)) > 100
    assert np.allclose(louder[loud] / samples(clean)[loud], 10 ** (6 / 20), rtol=0.01)
    clipped = samples(imp.change_level(clean, 40.0))
    assert clipped.max() == imp.PCM_MAX and clipped.min() == -imp.PCM_MAX - 1
    assert np.all(np.sign(clipped) == np.sign(samples(clean)))  # saturated, never wrapped round
    with pytest.raises(ValueError, match="even number"):
        imp.change_level(b"\x00\x01\x02", 3.0)


def test_audio_repeats_for_a_seed_and_differs_for_another():
    clean = voice(5)
    assert imp.add_noise(clean, 5, seed=7) == imp.add_noise(clean, 5, seed=7)
    assert imp.add_noise(clean, 5, seed=7) != imp.add_noise(clean, 5, seed=8)
    assert imp.add_noise(clean, 5, seed=7, index=1) != imp.add_noise(clean, 5, seed=7, index=2)
    assert imp.reverb(clean, 0.5, seed=7) == imp.reverb(clean, 0.5, seed=7) != imp.reverb(clean, 0.5, seed=8)


# ---------------------------------------------------------------- video

FRAME = synthetic_frame("A green mug sits on the left of a wooden desk beside a stack of paper and a pen.")


def gray(jpeg: bytes) -> np.ndarray:
    return cv2.cvtColor(decode_jpeg(jpeg), cv2.COLOR_BGR2GRAY)


def laplacian_variance(jpeg: bytes) -> float:
    return float(cv2.Laplacian(gray(jpeg), cv2.CV_64F).var())


def test_motion_blur_lowers_the_laplacian_variance():
    sharp = laplacian_variance(FRAME)
    assert laplacian_variance(imp.motion_blur(FRAME, 5, 90)) < 0.6 * sharp
    assert laplacian_variance(imp.motion_blur(FRAME, 15, 30)) < 0.25 * sharp
    kernel = imp.blur_kernel(9, 0)
    assert kernel.sum() == pytest.approx(1) and np.count_nonzero(kernel.sum(axis=1)) == 1  # horizontal
    assert imp.motion_blur(FRAME, 1) is not None


def test_low_light_lowers_the_brightness_and_adds_sensor_noise():
    bright = gray(FRAME).astype(float)
    dim = gray(imp.low_light(FRAME, 0.3)).astype(float)
    assert dim.mean() == pytest.approx(0.3 * bright.mean(), rel=0.03)
    quiet = dim - 0.3 * bright
    noisy = gray(imp.low_light(FRAME, 0.3, 12, seed=2)).astype(float) - 0.3 * bright
    assert noisy.std() > 8 and quiet.std() < 2


def test_occlusion_covers_about_the_requested_share():
    plain = encode_jpeg(np.full((480, 640, 3), 200, np.uint8))
    for share in (0.05, 0.25, 0.6):
        covered = float((gray(imp.occlude(plain, share, seed=9)) < 100).mean())
        assert abs(covered - share) < 0.01 + 0.03 * share
    with pytest.raises(ValueError, match="occlusion share"):
        imp.occlude(plain, 0.9)
    places = {tuple(np.argwhere(gray(imp.occlude(plain, 0.1, seed=s)) < 100).mean(axis=0).round()) for s in range(4)}
    assert len(places) == 4  # the seed places the blob


def test_shake_moves_the_frame_by_the_seeded_offset():
    texture = cv2.resize(
        np.random.default_rng(0).integers(0, 255, (60, 80), np.uint8), (640, 480), interpolation=cv2.INTER_NEAREST
    )
    frame = encode_jpeg(cv2.cvtColor(texture, cv2.COLOR_GRAY2BGR), 95)
    offsets = set()
    for index in range(5):
        dx, dy = imp.shake_offset(12, seed=3, index=index)
        assert max(abs(dx), abs(dy)) <= 12
        offsets.add((dx, dy))
        moved = gray(imp.shake(frame, 12, seed=3, index=index, quality=95)).astype(np.float32)
        (mx, my), _ = cv2.phaseCorrelate(gray(frame).astype(np.float32), moved)
        assert abs(mx - dx) < 0.5 and abs(my - dy) < 0.5
    assert len(offsets) > 1
    assert imp.shake_offset(0, seed=3, index=1) == (0, 0)


def test_every_video_impairment_keeps_the_comment_and_a_lower_quality_is_smaller():
    comments = jpeg_comments(FRAME)
    assert comments and comments[0].startswith(b"wearsim-synthetic-frame: ")
    for out in (
        imp.motion_blur(FRAME, 7),
        imp.low_light(FRAME, 0.4, 5),
        imp.jpeg_quality(FRAME, 20),
        imp.occlude(FRAME, 0.2),
        imp.shake(FRAME, 8, index=1),
    ):
        assert out != FRAME and jpeg_comments(out) == comments
    assert len(imp.jpeg_quality(FRAME, 15)) < 0.7 * len(imp.jpeg_quality(FRAME, 90))


def test_video_goes_through_the_decode_limits():
    data = bytearray(encode_jpeg(np.full((16, 16, 3), 90, np.uint8)))
    struct.pack_into(">HH", data, data.index(b"\xff\xc0") + 5, 16384, 16384)
    with pytest.raises(ValueError, match="over the limit"):
        imp.motion_blur(bytes(data), 9)


def test_video_repeats_for_a_seed_and_differs_for_another():
    assert imp.low_light(FRAME, 0.3, 10, seed=1) == imp.low_light(FRAME, 0.3, 10, seed=1)
    assert imp.low_light(FRAME, 0.3, 10, seed=1) != imp.low_light(FRAME, 0.3, 10, seed=2)
    assert imp.occlude(FRAME, 0.2, seed=1) == imp.occlude(FRAME, 0.2, seed=1) != imp.occlude(FRAME, 0.2, seed=2)


# ---------------------------------------------------------------- uplink


def test_uplink_loss_over_ten_thousand_sends_is_near_the_setting():
    for loss in (0.03, 0.2):
        uplink = imp.Uplink(loss=loss, seed=11)
        arrived = [uplink.deliver(20 * i, "audio", 640) for i in range(10_000)]
        rate = arrived.count(None) / len(arrived)
        assert abs(rate - loss) < 0.1 * loss + 0.005
        assert uplink.lost["audio"] == arrived.count(None)
        assert all(a == 20 * i for i, a in enumerate(arrived) if a is not None)  # no latency asked, none added


def test_uplink_repeats_for_a_seed_and_kinds_draw_apart():
    def run(seed, with_frames):
        uplink = imp.Uplink(loss=0.1, jitter_ms=30, latency_ms=50, seed=seed)
        out = []
        for i in range(500):
            out.append(uplink.deliver(20 * i, "audio", 640))
            if with_frames and i % 10 == 0:
                uplink.deliver(20 * i, "frame", 30_000)
        return out

    audio_only = [a is None for a in run(5, False)]
    assert run(5, True) == run(5, True) and run(5, True) != run(6, True)
    assert [a is None for a in run(5, True)] == audio_only  # which chunks are lost does not depend on frames


def test_latency_and_jitter_delay_sends_but_never_reorder_them():
    uplink = imp.Uplink(latency_ms=100, jitter_ms=40, seed=2)
    arrivals = [uplink.deliver(20 * i, "audio", 640) for i in range(5000)]
    delays = np.array([a - 20 * i for i, a in enumerate(arrivals)])
    assert delays.min() >= 100 and 100 + 40 * 0.6 < delays.mean() < 100 + 40 * 1.2
    assert all(b >= a for a, b in zip(arrivals, arrivals[1:]))
    assert imp.Uplink(latency_ms=100).deliver(250, "frame", 10_000) == 350


def test_the_bandwidth_cap_queues_frames_and_drops_those_that_would_be_too_late():
    # 1000 kbit/s = 1 bit per us: a 50,000-byte frame takes 400 ms; one is sent every 100 ms
    uplink = imp.Uplink(bandwidth_kbps=1000, max_queue_ms=1000)
    arrivals = [uplink.deliver(100 * i, "frame", 50_000) for i in range(8)]
    # frame 0 leaves at 400, 1 at 800 (700 ms late), 2 at 1200 (1000 ms: still allowed); 3, 4 and 5 would
    # be 1300, 1200 and 1100 ms late: dropped, taking no link time; 6 leaves at 1600, 7 would wait (1300)
    assert arrivals == [400, 800, 1200, None, None, None, 1600, None]
    assert uplink.dropped == {"audio": 0, "frame": 4} and uplink.lost == {"audio": 0, "frame": 0}
    # audio is never dropped by the cap: it waits its turn on the link
    late_audio = uplink.deliver(700, "audio", 640)
    assert late_audio == pytest.approx(1600 + 640 * 8 / 1000)


def test_uplink_refuses_bad_settings_and_kinds():
    with pytest.raises(ValueError, match="loss"):
        imp.Uplink(loss=1.0)
    with pytest.raises(ValueError, match="negative"):
        imp.Uplink(latency_ms=-1)
    with pytest.raises(ValueError, match="kind"):
        imp.Uplink().deliver(0, "video", 10)


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
