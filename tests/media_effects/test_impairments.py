"""The impairment library: each impairment (audio, video, uplink) measurably does
what it says, and everything repeats exactly for a seed. The profiles and the
impairment sweep: test_impairment_profiles.py."""

from __future__ import annotations

import struct

import cv2
import numpy as np
import pytest

from media_effects import impairments as imp
from media_effects.frames import decode_jpeg, encode_jpeg, jpeg_comments
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

        def at(hz, spectrum=spectrum, freqs=freqs):
            return spectrum[np.argmin(np.abs(freqs - hz))]

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
