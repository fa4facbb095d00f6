"""Real-world impairments the simulated glasses can apply: pure functions of
their input and a seed, so a run repeats exactly.

- Audio, on PCM16 mono 16 kHz bytes (the wire's format), same length out:
  `add_noise` (white, babble mixed from speech the caller passes in, or a
  mains hum with harmonics) at a signal-to-noise ratio in dB, `reverb` (a
  synthetic exponentially decaying room response, RT60 in seconds) and
  `change_level` (dB, clipped to the PCM16 range, never wrapped).
- Video, JPEG bytes to JPEG bytes (decoded by `media_effects.frames.decode_jpeg`,
  so the decode limits hold; the JPEG comment segments are kept):
  `motion_blur`, `low_light` (gain plus Gaussian sensor noise),
  `jpeg_quality`, `occlude` (a dark blob over a share of the frame) and
  `shake` (a small seeded translation per frame).
- Uplink: `Uplink.deliver(t_ms, kind, size_bytes)` decides when a send
  arrives (latency, jitter, a bandwidth cap with a frame queue) or that it is
  lost (None).

Named profiles combine them (`media_effects/impairments.toml`, and a user file
over it: `load_profiles`); docs/impairments.md describes each one.

Randomness: every draw comes from a generator seeded with (seed, what is
drawn, which chunk or frame), so one frame's shake does not depend on how
many frames came before it, and the audio's fate does not depend on the
frames'.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import cv2
import numpy as np

from media_effects.frames import decode_jpeg, encode_jpeg, jpeg_comments, with_comment

SAMPLE_RATE = 16_000
PCM_MAX = 32767
NOMINAL_SPEECH_DBFS = -26.0  # the level noise is set against when a clip is silent (a typical speech level)
NOISE_KINDS = ("white", "babble", "hum")
HUM_HARMONICS = 5  # the mains frequency and four harmonics, amplitude 1/k
BABBLE_TALKERS = 6  # talkers mixed into babble (drawn from the sources given, each looped at its own offset)
OCCLUDER_BGR = (18, 18, 22)  # the dark blob (a hand, a sleeve, hair over the lens)
DEFAULT_JPEG_QUALITY = 85  # what a re-encoded frame gets unless a profile sets jpeg_quality
MAX_OCCLUSION = 0.75  # an upright ellipse in the frame's own aspect covers up to pi/4 of it


def rng(seed: int, stream: str, index: int = 0) -> np.random.Generator:
    """The generator for one stream (`"shake"`, `"audio-noise"`, ...) and one chunk or frame."""
    return np.random.default_rng([int(seed), zlib.crc32(stream.encode()), int(index)])


# ---------------------------------------------------------------- audio


def pcm_to_float(pcm: bytes) -> np.ndarray:
    if len(pcm) % 2:
        raise ValueError(f"PCM16 audio has an even number of bytes, got {len(pcm)}")
    return np.frombuffer(pcm, "<i2").astype(np.float64)


def float_to_pcm(samples: np.ndarray) -> bytes:
    """Samples on the PCM16 scale, rounded and clipped to its range (a loud sample saturates)."""
    return np.clip(np.rint(samples), -PCM_MAX - 1, PCM_MAX).astype("<i2").tobytes()


def power(samples: np.ndarray) -> float:
    return float(np.mean(samples * samples)) if len(samples) else 0.0


def snr_db(clean: bytes, noisy: bytes) -> float:
    """The signal-to-noise ratio of `noisy` against `clean` (same length), in dB."""
    signal, other = pcm_to_float(clean), pcm_to_float(noisy)
    if len(signal) != len(other):
        raise ValueError("snr_db compares two clips of the same length")
    noise = power(other - signal)
    return float("inf") if noise == 0 else 10 * np.log10(max(power(signal), 1e-12) / noise)


def white_noise(length: int, generator: np.random.Generator) -> np.ndarray:
    return generator.standard_normal(length)


def hum(length: int, mains_hz: float, generator: np.random.Generator) -> np.ndarray:
    """A steady mains hum: `mains_hz` and its harmonics, amplitude 1/k, each at a random phase."""
    t = np.arange(length) / SAMPLE_RATE
    phases = generator.uniform(0, 2 * np.pi, HUM_HARMONICS)
    return sum(np.sin(2 * np.pi * mains_hz * k * t + phases[k - 1]) / k for k in range(1, HUM_HARMONICS + 1))


def babble(
    length: int, sources: Sequence[bytes], generator: np.random.Generator, talkers: int = BABBLE_TALKERS
) -> np.ndarray:
    """Several talkers at once: `talkers` utterances drawn from `sources` (PCM16 speech, e.g. the
    bank's own synthesized lines), each looped to `length` from its own random offset, each at the
    same level, summed."""
    clips = [pcm_to_float(s) for s in sources]
    clips = [c for c in clips if power(c) > 0]
    if not clips:
        raise ValueError("babble noise needs source speech: pass at least one non-silent PCM16 clip")
    mixed = np.zeros(length)
    for choice in generator.integers(0, len(clips), talkers):
        clip = clips[choice]
        start = int(generator.integers(0, len(clip)))
        looped = np.resize(np.roll(clip, -start), length)
        mixed += looped / np.sqrt(power(clip))
    return mixed


def scaled_noise(
    samples: np.ndarray,
    snr: float,
    kind: str = "white",
    *,
    seed: int = 0,
    index: int = 0,
    babble_sources: Sequence[bytes] = (),
    mains_hz: float = 50.0,
    talkers: int = BABBLE_TALKERS,
) -> np.ndarray:
    """Noise of `kind` (white, babble mixed from `babble_sources`, or hum at `mains_hz`) whose mean power
    is `snr` dB below that of `samples` (a silent clip is taken to be at `NOMINAL_SPEECH_DBFS`)."""
    generator = rng(seed, f"noise-{kind}", index)
    if kind == "white":
        noise = white_noise(len(samples), generator)
    elif kind == "babble":
        noise = babble(len(samples), babble_sources, generator, talkers)
    elif kind == "hum":
        noise = hum(len(samples), mains_hz, generator)
    else:
        raise ValueError(f"noise kind must be one of {', '.join(NOISE_KINDS)}, got {kind!r}")
    if not len(samples):
        return noise
    signal_power = power(samples) or (PCM_MAX * 10 ** (NOMINAL_SPEECH_DBFS / 20)) ** 2
    return noise * np.sqrt(signal_power / (power(noise) * 10 ** (snr / 10)))


def add_noise(
    pcm: bytes,
    snr: float,
    kind: str = "white",
    *,
    seed: int = 0,
    index: int = 0,
    babble_sources: Sequence[bytes] = (),
    mains_hz: float = 50.0,
    talkers: int = BABBLE_TALKERS,
) -> bytes:
    """`pcm` with noise added at `snr` dB below the clip's mean power (`scaled_noise`), clipped to the
    PCM16 range."""
    samples = pcm_to_float(pcm)
    return float_to_pcm(
        samples
        + scaled_noise(
            samples,
            snr,
            kind,
            seed=seed,
            index=index,
            babble_sources=babble_sources,
            mains_hz=mains_hz,
            talkers=talkers,
        )
    )


def room_response(rt60_s: float, generator: np.random.Generator, drr_db: float = 0.0) -> np.ndarray:
    """A synthetic room impulse response: the direct sound (1.0), then Gaussian noise decaying by
    60 dB over `rt60_s`, scaled so the direct-to-reverberant energy ratio is `drr_db`."""
    length = max(int(rt60_s * SAMPLE_RATE), 1)
    t = np.arange(1, length + 1) / SAMPLE_RATE
    tail = generator.standard_normal(length) * np.exp(-3 * np.log(10) * t / rt60_s)
    tail *= np.sqrt(10 ** (-drr_db / 10) / np.sum(tail * tail))
    return np.concatenate([[1.0], tail])


def reverb(pcm: bytes, rt60_s: float, *, seed: int = 0, index: int = 0, drr_db: float = 0.0) -> bytes:
    """`pcm` played in a room with reverberation time `rt60_s` (convolved with `room_response`), cut to
    its own length and brought back to its own mean power."""
    samples = pcm_to_float(pcm)
    if rt60_s <= 0 or not len(samples):
        return pcm
    response = room_response(rt60_s, rng(seed, "reverb", index), drr_db)
    size = 1 << int(np.ceil(np.log2(len(samples) + len(response))))
    wet = np.fft.irfft(np.fft.rfft(samples, size) * np.fft.rfft(response, size), size)[: len(samples)]
    before, after = power(samples), power(wet)
    if after > 0:
        wet *= np.sqrt(before / after)
    return float_to_pcm(wet)


def change_level(pcm: bytes, gain_db: float) -> bytes:
    """`pcm` made `gain_db` louder (or quieter), clipped to the PCM16 range."""
    if gain_db == 0:
        return pcm
    return float_to_pcm(pcm_to_float(pcm) * 10 ** (gain_db / 20))


# ---------------------------------------------------------------- video
# Each impairment is a function of the decoded image (`*_image`, used by a profile's single pass:
# one decode, one encode) and of JPEG bytes.


def recode(jpeg: bytes, image: np.ndarray, quality: int = DEFAULT_JPEG_QUALITY) -> bytes:
    """`image` encoded as a JPEG carrying `jpeg`'s comment segments, in their order."""
    out = encode_jpeg(image, quality)
    for comment in reversed(jpeg_comments(jpeg)):
        out = with_comment(out, comment)
    return out


def blur_kernel(length_px: float, angle_deg: float) -> np.ndarray:
    """A line `length_px` long at `angle_deg` (0 = horizontal), summing to 1."""
    size = max(int(np.ceil(length_px)), 1) | 1  # odd, so the line is centred
    kernel = np.zeros((size, size), np.float32)
    centre = size // 2
    dx, dy = np.cos(np.radians(angle_deg)), -np.sin(np.radians(angle_deg))
    half = (length_px - 1) / 2
    start = (round(centre - dx * half), round(centre - dy * half))
    end = (round(centre + dx * half), round(centre + dy * half))
    cv2.line(kernel, start, end, 1.0, 1, cv2.LINE_AA)
    return kernel / kernel.sum()


def motion_blur_image(image: np.ndarray, length_px: float, angle_deg: float = 0.0) -> np.ndarray:
    if length_px <= 1:
        return image
    return cv2.filter2D(image, -1, blur_kernel(length_px, angle_deg), borderType=cv2.BORDER_REFLECT)


def motion_blur(jpeg: bytes, length_px: float, angle_deg: float = 0.0, *, quality: int = DEFAULT_JPEG_QUALITY) -> bytes:
    """The frame smeared along a line `length_px` long at `angle_deg` (the head moving while the
    shutter is open)."""
    return recode(jpeg, motion_blur_image(decode_jpeg(jpeg), length_px, angle_deg), quality)


def low_light_image(
    image: np.ndarray, gain: float, noise_sigma: float = 0.0, *, seed: int = 0, index: int = 0
) -> np.ndarray:
    out = image.astype(np.float32) * gain
    if noise_sigma > 0:
        out += rng(seed, "sensor-noise", index).normal(0, noise_sigma, image.shape).astype(np.float32)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def low_light(
    jpeg: bytes,
    gain: float,
    noise_sigma: float = 0.0,
    *,
    seed: int = 0,
    index: int = 0,
    quality: int = DEFAULT_JPEG_QUALITY,
) -> bytes:
    """A dim scene: every pixel times `gain` (< 1), plus Gaussian sensor noise of `noise_sigma`
    grey levels (a camera raising its gain in the dark)."""
    return recode(jpeg, low_light_image(decode_jpeg(jpeg), gain, noise_sigma, seed=seed, index=index), quality)


def jpeg_quality(jpeg: bytes, quality: int) -> bytes:
    """The frame re-encoded at JPEG `quality` (1-100; a starved encoder's blocks and ringing)."""
    if not 1 <= quality <= 100:
        raise ValueError(f"JPEG quality must be 1-100, got {quality}")
    return recode(jpeg, decode_jpeg(jpeg), quality)


def occluder(width: int, height: int, share: float, generator: np.random.Generator):
    """((cx, cy), (half_width, half_height)): an upright ellipse of `share` of the frame's area, at a
    random place and a random aspect, wholly inside the frame."""
    area = share * width * height
    ratio = width / height * generator.uniform(0.75, 1.33)
    a, b = np.sqrt(area * ratio / np.pi), np.sqrt(area / (np.pi * ratio))
    if a > width / 2 or b > height / 2:  # too big for that aspect: the frame's own aspect fits up to pi/4
        ratio = width / height
        a, b = np.sqrt(area * ratio / np.pi), np.sqrt(area / (np.pi * ratio))
    cx = generator.uniform(a, max(width - a, a))
    cy = generator.uniform(b, max(height - b, b))
    return (cx, cy), (a, b)


def occlude_image(image: np.ndarray, share: float, *, seed: int = 0, index: int = 0) -> np.ndarray:
    if not 0 <= share <= MAX_OCCLUSION:
        raise ValueError(f"occlusion share must be 0-{MAX_OCCLUSION}, got {share}")
    if share == 0:
        return image
    image = image.copy()
    height, width = image.shape[:2]
    (cx, cy), (a, b) = occluder(width, height, share, rng(seed, "occlusion", index))
    bits = 4  # the ellipse's centre and axes to 1/16 pixel
    scale = 1 << bits
    cv2.ellipse(
        image,
        (round(cx * scale), round(cy * scale)),
        (round(a * scale), round(b * scale)),
        0,
        0,
        360,
        OCCLUDER_BGR,
        -1,
        cv2.LINE_AA,
        bits,
    )
    return image


def occlude(jpeg: bytes, share: float, *, seed: int = 0, index: int = 0, quality: int = DEFAULT_JPEG_QUALITY) -> bytes:
    """A dark blob (an upright ellipse) over `share` (0-0.75) of the frame, placed by the seed."""
    return recode(jpeg, occlude_image(decode_jpeg(jpeg), share, seed=seed, index=index), quality)


def shake_offset(max_px: int, *, seed: int = 0, index: int = 0) -> tuple[int, int]:
    """(dx, dy), each in [-max_px, max_px]: frame `index`'s camera shake."""
    if max_px <= 0:
        return 0, 0
    dx, dy = rng(seed, "shake", index).integers(-max_px, max_px + 1, 2)
    return int(dx), int(dy)


def shake_image(image: np.ndarray, max_px: int, *, seed: int = 0, index: int = 0) -> np.ndarray:
    dx, dy = shake_offset(max_px, seed=seed, index=index)
    if dx == dy == 0:
        return image
    matrix = np.array([[1, 0, dx], [0, 1, dy]], dtype=np.float32)
    return cv2.warpAffine(image, matrix, (image.shape[1], image.shape[0]), borderMode=cv2.BORDER_REPLICATE)


def shake(jpeg: bytes, max_px: int, *, seed: int = 0, index: int = 0, quality: int = DEFAULT_JPEG_QUALITY) -> bytes:
    """The frame moved by `shake_offset(max_px, seed=, index=)`: the content moves right and down for
    positive offsets, the edge pixels fill the uncovered border."""
    return recode(jpeg, shake_image(decode_jpeg(jpeg), max_px, seed=seed, index=index), quality)


# ---------------------------------------------------------------- uplink

AUDIO, FRAME = "audio", "frame"


class Uplink:
    """The glasses' uplink for one session, deterministic from its seed.

    `deliver(t_ms, kind, size_bytes)` is called for each send in the order of the
    timeline (`kind` is "audio" for a PCM chunk, "frame" for a JPEG) and returns the
    time it reaches the server, in ms, or None when it is lost:
    - each send is lost with probability `loss` (a lost audio chunk leaves a gap,
      a lost frame is never sent), independently, drawn per kind and per send;
    - with a `bandwidth_kbps` cap (0 = none) sends go over one link in order,
      each taking size * 8 / bandwidth ms; a frame that would not be through
      the link (queue and transmission) within `max_queue_ms` of being sent is
      dropped and takes no link time (audio is never dropped by the cap, only
      late);
    - then `latency_ms` plus a half-normal jitter of scale `jitter_ms`; one
      WebSocket keeps its order, so nothing arrives before an earlier send.
    """

    def __init__(
        self,
        *,
        latency_ms: float = 0.0,
        jitter_ms: float = 0.0,
        loss: float = 0.0,
        bandwidth_kbps: float = 0.0,
        max_queue_ms: float = 1000.0,
        seed: int = 0,
    ):
        if not 0 <= loss < 1:
            raise ValueError(f"uplink loss must be in [0, 1), got {loss}")
        if latency_ms < 0 or jitter_ms < 0 or bandwidth_kbps < 0 or max_queue_ms < 0:
            raise ValueError("uplink latency, jitter, bandwidth and queue limit must not be negative")
        self.latency_ms, self.jitter_ms, self.loss = latency_ms, jitter_ms, loss
        self.bandwidth_kbps, self.max_queue_ms, self.seed = bandwidth_kbps, max_queue_ms, seed
        self.link_free_ms = 0.0  # when the capped link has sent everything queued so far
        self.last_arrival_ms = float("-inf")
        self.sent = {AUDIO: 0, FRAME: 0}
        self.lost = {AUDIO: 0, FRAME: 0}  # to the loss probability
        self.dropped = {AUDIO: 0, FRAME: 0}  # to the bandwidth queue (frames only)

    def deliver(self, t_ms: float, kind: str, size_bytes: int) -> float | None:
        if kind not in (AUDIO, FRAME):
            raise ValueError(f"uplink send kind must be 'audio' or 'frame', got {kind!r}")
        index = self.sent[kind]
        self.sent[kind] += 1
        draws = rng(self.seed, f"uplink-{kind}", index).random(2)
        if draws[0] < self.loss:
            self.lost[kind] += 1
            return None
        leaves = t_ms
        if self.bandwidth_kbps > 0:
            start = max(t_ms, self.link_free_ms)
            leaves = start + size_bytes * 8 / self.bandwidth_kbps  # kbit/s = bits per ms
            if kind == FRAME and leaves - t_ms > self.max_queue_ms:
                self.dropped[kind] += 1
                return None
            self.link_free_ms = leaves
        # half-normal jitter from the second uniform draw (inverse of the normal CDF of (1 + u) / 2)
        jitter = self.jitter_ms * _half_normal(draws[1]) if self.jitter_ms > 0 else 0.0
        arrives = max(leaves + self.latency_ms + jitter, self.last_arrival_ms)
        self.last_arrival_ms = arrives
        return arrives


def _half_normal(u: float) -> float:
    """|Z| for a standard normal Z, from a uniform u in [0, 1)."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(min(0.5 + u / 2, 1 - 1e-12))
