"""The media library: synthesized speech, imported recordings, verification."""

import shutil
import subprocess
import sys

import cv2
import numpy as np
import pytest

from core.scenario import load_bank
from media_effects.media import MEDIA_ROOT
from media_effects.media_library import import_recording, load_index, synth_bank, verify
from simulator.timeline import plan_turn

BANK = load_bank()


@pytest.mark.clock
def test_shipped_media_verifies_and_covers_every_turn():
    done = subprocess.run(
        [sys.executable, "-m", "benchmark", "media", "verify"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout
    files = load_index(MEDIA_ROOT)["files"]
    for scenario in BANK.scenarios:
        for name in ("turn_1", "turn_2", "turn_3_repair"):
            entry = files[f"{scenario.scenario_id}/{name}.wav"]
            assert entry["source"] == "synthesized" and entry["duration_s"] > 0.3
    stills = [k for k, v in files.items() if v["kind"] == "still"]
    assert "sc-47/context.jpg" in stills and len(stills) >= 7


def test_synth_import_and_verify(tmp_path):
    bank = BANK.select(limit=1)
    assert synth_bank(bank, tmp_path) == 3
    assert synth_bank(bank, tmp_path) == 0  # existing files are kept
    wav = tmp_path / "sc-01" / "turn_1.wav"
    recording = tmp_path / "phone.wav"
    shutil.copyfile(wav, recording)
    written = import_recording(tmp_path, "sc-01", "turn_2", recording, start=0.1, end=0.9)
    assert [p.name for p in written] == ["turn_2.wav"]
    entry = load_index(tmp_path)["files"]["sc-01/turn_2.wav"]
    assert entry["source"] == "recorded" and abs(entry["duration_s"] - 0.8) < 0.01
    video = tmp_path / "clip.mp4"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"mp4v"), 10, (64, 48))
    for i in range(30):
        writer.write(np.full((48, 64, 3), (i * 8) % 255, np.uint8))
    writer.release()
    assert [p.name for p in import_recording(tmp_path, "sc-01", "turn_1", video, start=1.0)] == ["turn_1.mp4"]
    plan = plan_turn(bank.scenarios[0], 1, 0, media_root=tmp_path)
    assert plan.has_frames and plan.speech_source == "media"
    assert verify(tmp_path) == []
    wav.write_bytes(wav.read_bytes()[:-100])
    (tmp_path / "sc-01" / "stray.png").write_bytes(b"x")
    problems = verify(tmp_path)
    assert "sc-01/turn_1.wav: sha256 differs from the index" in problems
    assert "sc-01/stray.png: on disk but not in the index" in problems


def test_timeline_turn_shape():
    plan = plan_turn(BANK.get("sc-47"), 1, 0)
    kinds = [item.kind for item in plan.items]
    assert kinds[-1] == "turn.end" and plan.has_frames
    frames = [item for item in plan.items if item.kind == "frame"]
    audio = [item for item in plan.items if item.kind == "audio"]
    assert frames[0].t_ms == 0 and audio[0].t_ms == 1500  # the context segment: frames only
    assert all(len(a.payload) == 640 for a in audio[:-1])
    assert [b.t_ms - a.t_ms for a, b in zip(audio, audio[1:])] == [20] * (len(audio) - 1)
    no_frames = plan_turn(BANK.get("sc-01"), 2, 10_000)
    assert not no_frames.has_frames and no_frames.items[0].t_ms == 10_000


@pytest.mark.slow
def test_synthesized_speech_says_the_current_text(tmp_path):
    """A changed utterance needs its speech regenerated: espeak-ng is deterministic, so each
    synthesized WAV must hash like a fresh synthesis of the bank's current text (voice and
    rate from the index note)."""
    import re

    from media_effects.media_library import SPEECH_TURNS, sha256
    from media_effects.tts import synthesize

    files = load_index(MEDIA_ROOT)["files"]
    stale = []
    for scenario in BANK.scenarios:
        for name, field in SPEECH_TURNS.items():
            entry = files[f"{scenario.scenario_id}/{name}.wav"]
            if entry["source"] != "synthesized":
                continue
            voice, rate, source = re.fullmatch(r"espeak-ng voice (\S+) rate (\d+) from (\w+)", entry["note"]).groups()
            assert source == field
            fresh = tmp_path / f"{scenario.scenario_id}-{name}.wav"
            synthesize(getattr(scenario, field), fresh, voice=voice, rate=int(rate))
            if sha256(fresh) != entry["sha256"]:
                stale.append(f"{scenario.scenario_id}/{name}.wav")
    assert stale == [], "run `wearsim media synth` after deleting these"


def test_import_refuses_empty_audio_and_backwards_windows_and_writes_nothing(tmp_path):
    from media_effects.media_library import import_recording
    from media_effects.tts import write_wav

    empty = tmp_path / "empty.wav"
    write_wav(empty, b"")
    root = tmp_path / "media"
    with pytest.raises(ValueError, match="no audio samples"):
        import_recording(root, "sc-01", "turn_1", empty)
    speech = tmp_path / "speech.wav"
    write_wav(speech, b"\x10\x00" * 16000)
    with pytest.raises(ValueError, match="the end must come after the start"):
        import_recording(root, "sc-01", "turn_1", speech, start=5, end=1)
    with pytest.raises(ValueError, match="no audio samples in that window"):
        import_recording(root, "sc-01", "turn_1", speech, start=3, end=4)  # the file lasts 1 s
    assert not root.exists() or not any(root.rglob("*.wav"))


def test_two_frame_sources_for_one_turn_use_the_newest_and_warn(tmp_path):
    import os

    import cv2
    import numpy as np

    from media_effects.media import STILL, VIDEO, find
    from media_effects.media_library import two_sources

    folder = tmp_path / "sc-05"
    folder.mkdir()
    still, video = folder / "turn_1.jpg", folder / "turn_1.mp4"
    cv2.imwrite(str(still), np.zeros((8, 8, 3), np.uint8))
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"mp4v"), 5, (16, 16))
    writer.write(np.zeros((16, 16, 3), np.uint8))
    writer.release()
    os.utime(still, (1_000_000, 1_000_000))  # the still is older
    assert find(tmp_path, "sc-05", "turn_1", STILL + VIDEO) == video
    [warning] = two_sources(tmp_path)
    assert "sc-05/turn_1: 2 sources" in warning and "turn_1.mp4, is used" in warning
