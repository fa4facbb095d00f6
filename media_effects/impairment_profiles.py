"""Named impairment profiles: `media_effects/impairments.toml`, and a user file over it.

    profiles = load_profiles()                      # the shipped ones
    profiles = load_profiles("my_profiles.toml")    # a user file's profiles replace or add to them
    street = select_profiles("clean,street", "my_profiles.toml")[1].with_seed(7)
    pcm = street.impair_audio(pcm, index=turn, babble=bank_utterances)
    jpeg = street.impair_frame(jpeg, index=frame_number)
    uplink = street.new_uplink()                    # a fresh Uplink for one session

A profile file is TOML: one table per profile, with an optional
`description`, an optional `seed` and the sections `audio`, `video` and
`uplink`, each holding only the fields in `AUDIO`, `VIDEO` and `UPLINK`
below (a field left out does nothing). A user profile with a shipped
profile's name replaces it whole. Every problem is a `ValueError` of one line
naming the file, the profile and the field.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from media_effects import impairments as imp
from media_effects.frames import decode_jpeg

SHIPPED = Path(__file__).with_name("impairments.toml")
MAX_FILE_BYTES = 1_000_000
PROFILE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


@dataclass(frozen=True, kw_only=True)
class Field:
    """One profile field: its type, its allowed range (or choices) and what it means."""

    kind: type  # float or int (numbers), str
    low: float | None = None
    high: float | None = None
    choices: tuple = ()
    meaning: str = ""

    def check(self, value) -> str | None:
        """Why `value` is not allowed, or None."""
        if self.kind is str:
            if not isinstance(value, str):
                return f"must be a string, got {value!r}"
        elif (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or (self.kind is int and not isinstance(value, int))
        ):
            return f"must be {'a whole number' if self.kind is int else 'a number'}, got {value!r}"
        if self.choices and value not in self.choices:
            return f"must be one of {', '.join(map(str, self.choices))}, got {value!r}"
        if self.low is not None and not self.low <= value <= self.high:
            return f"must be between {self.low:g} and {self.high:g}, got {value!r}"
        return None


# espeak-ng's English voices: speech variety (accents); a line is then spoken afresh, not taken from media/
SPEECH_VOICES = ("en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-gb-x-gbclan", "en-gb-x-gbcwmd", "en-029")
AUDIO = {
    "white_snr_db": Field(kind=float, low=-10, high=60, meaning="white noise at this signal-to-noise ratio (dB)"),
    "babble_snr_db": Field(kind=float, low=-10, high=60, meaning="babble (several talkers) at this SNR (dB)"),
    "babble_talkers": Field(kind=int, low=2, high=12, meaning="talkers mixed into the babble"),
    "hum_snr_db": Field(kind=float, low=-10, high=60, meaning="mains hum with harmonics at this SNR (dB)"),
    "mains_hz": Field(kind=int, choices=(50, 60), meaning="the hum's mains frequency"),
    "reverb_rt60_s": Field(kind=float, low=0, high=3, meaning="room reverberation time: seconds to decay by 60 dB"),
    "reverb_drr_db": Field(kind=float, low=-20, high=20, meaning="direct-to-reverberant energy ratio (dB)"),
    "gain_db": Field(kind=float, low=-40, high=20, meaning="level change (dB), clipped to the PCM16 range"),
    "voice": Field(kind=str, choices=SPEECH_VOICES, meaning="the espeak-ng voice that speaks the lines instead"),
    "speech_rate_wpm": Field(kind=int, low=80, high=320, meaning="the speaking rate of that voice (words a minute)"),
}
VIDEO = {
    "occlusion": Field(kind=float, low=0, high=imp.MAX_OCCLUSION, meaning="share of the frame under a dark blob"),
    "shake_px": Field(kind=int, low=0, high=64, meaning="largest camera shake per frame (pixels, each axis)"),
    "blur_px": Field(kind=float, low=0, high=60, meaning="motion blur length (pixels)"),
    "blur_angle_deg": Field(kind=float, low=-180, high=180, meaning="motion blur direction (0 = horizontal)"),
    "light_gain": Field(kind=float, low=0.02, high=1, meaning="brightness factor of a dim scene"),
    "sensor_noise": Field(
        kind=float, low=0, high=64, meaning="Gaussian sensor noise (standard deviation, grey levels)"
    ),
    "jpeg_quality": Field(kind=int, low=5, high=100, meaning="JPEG quality the frame is re-encoded at"),
}
UPLINK = {
    "latency_ms": Field(kind=float, low=0, high=5000, meaning="added one-way latency (ms)"),
    "jitter_ms": Field(kind=float, low=0, high=2000, meaning="half-normal jitter scale (ms)"),
    "loss": Field(kind=float, low=0, high=0.5, meaning="probability that a send is lost"),
    "bandwidth_kbps": Field(
        kind=float, low=0, high=1_000_000, meaning="link rate cap (kbit/s); 0 = none, else at least 300"
    ),
    "max_queue_ms": Field(
        kind=float, low=0, high=10_000, meaning="a frame not through the capped link in this long is dropped"
    ),
}
SECTIONS = {"audio": AUDIO, "video": VIDEO, "uplink": UPLINK}
MIN_BANDWIDTH_KBPS = 300  # the 16 kHz PCM16 audio alone is 256 kbit/s


@dataclass(frozen=True, kw_only=True)
class AudioImpairment:
    white_snr_db: float | None = None
    babble_snr_db: float | None = None
    babble_talkers: int = imp.BABBLE_TALKERS
    hum_snr_db: float | None = None
    mains_hz: int = 50
    reverb_rt60_s: float = 0.0
    reverb_drr_db: float = 0.0
    gain_db: float = 0.0
    voice: str | None = None  # another speaker: the line synthesized with this espeak-ng voice
    speech_rate_wpm: int | None = None  # and at this rate

    @property
    def is_clean(self) -> bool:
        return not self.degrades and not self.respeaks

    @property
    def degrades(self) -> bool:
        """The profile changes the captured audio (noise, reverb, level)."""
        return not (
            self.white_snr_db is None
            and self.babble_snr_db is None
            and self.hum_snr_db is None
            and self.reverb_rt60_s == 0
            and self.gain_db == 0
        )

    @property
    def respeaks(self) -> bool:
        """The profile changes who speaks (voice or rate), so lines are synthesized afresh."""
        return self.voice is not None or self.speech_rate_wpm is not None


@dataclass(frozen=True, kw_only=True)
class VideoImpairment:
    occlusion: float = 0.0
    shake_px: int = 0
    blur_px: float = 0.0
    blur_angle_deg: float = 0.0
    light_gain: float = 1.0
    sensor_noise: float = 0.0
    jpeg_quality: int | None = None

    @property
    def is_clean(self) -> bool:
        return (
            self.occlusion == 0
            and self.shake_px == 0
            and self.blur_px <= 1
            and self.light_gain == 1
            and self.sensor_noise == 0
            and self.jpeg_quality is None
        )


@dataclass(frozen=True, kw_only=True)
class UplinkImpairment:
    latency_ms: float = 0.0
    jitter_ms: float = 0.0
    loss: float = 0.0
    bandwidth_kbps: float = 0.0
    max_queue_ms: float = 1000.0

    @property
    def is_clean(self) -> bool:
        return self.latency_ms == 0 and self.jitter_ms == 0 and self.loss == 0 and self.bandwidth_kbps == 0


@dataclass(frozen=True, kw_only=True)
class Profile:
    """A named set of impairments and the seed every random draw comes from."""

    name: str
    description: str = ""
    seed: int = 0
    audio: AudioImpairment = field(default_factory=AudioImpairment)
    video: VideoImpairment = field(default_factory=VideoImpairment)
    uplink: UplinkImpairment = field(default_factory=UplinkImpairment)
    source: str = ""  # the file it came from

    @property
    def is_clean(self) -> bool:
        return self.audio.is_clean and self.video.is_clean and self.uplink.is_clean

    def with_seed(self, seed: int) -> Profile:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"an impairment seed is a whole number >= 0, got {seed!r}")
        return replace(self, seed=seed)

    def settings(self) -> dict:
        """The profile as plain data, for a record: name, seed and the fields that are set."""

        def set_fields(section) -> dict:
            default = type(section)()
            return {
                f.name: getattr(section, f.name)
                for f in fields(section)
                if getattr(section, f.name) != getattr(default, f.name)
            }

        return {
            "name": self.name,
            "seed": self.seed,
            "audio": set_fields(self.audio),
            "video": set_fields(self.video),
            "uplink": set_fields(self.uplink),
        }

    def impair_audio(self, pcm: bytes, *, index: int = 0, babble: Sequence[bytes] = ()) -> bytes:
        """PCM16 mono 16 kHz speech (one utterance, `index` numbering it in the run) in this profile's
        room (reverb), with its noises (each at its SNR against that speech) and level. Babble needs
        `babble`: PCM16 clips of other speech, e.g. the bank's own synthesized lines."""
        a = self.audio
        if a.reverb_rt60_s > 0:
            pcm = imp.reverb(pcm, a.reverb_rt60_s, seed=self.seed, index=index, drr_db=a.reverb_drr_db)
        speech = imp.pcm_to_float(pcm)
        noisy = speech.copy()
        for kind, snr in (("white", a.white_snr_db), ("babble", a.babble_snr_db), ("hum", a.hum_snr_db)):
            if snr is None:
                continue
            if kind == "babble" and not babble:
                raise ValueError(f"impairment profile {self.name!r} adds babble: pass babble= (PCM16 speech clips)")
            noisy += imp.scaled_noise(
                speech,
                snr,
                kind,
                seed=self.seed,
                index=index,
                babble_sources=babble,
                mains_hz=a.mains_hz,
                talkers=a.babble_talkers,
            )
        return imp.change_level(imp.float_to_pcm(noisy), a.gain_db)

    def impair_frame(self, jpeg: bytes, index: int = 0) -> bytes:
        """Frame `index` of the run through this profile's video impairments in one pass (one decode,
        one encode): a blob in front of the lens, the head's shake, motion blur, then a dim sensor
        with its noise, encoded at the profile's JPEG quality. The JPEG comment is kept; a profile
        with no video impairment returns the frame untouched."""
        v = self.video
        if v.is_clean:
            return jpeg
        image = decode_jpeg(jpeg)
        image = imp.occlude_image(image, v.occlusion, seed=self.seed, index=index)
        image = imp.shake_image(image, v.shake_px, seed=self.seed, index=index)
        image = imp.motion_blur_image(image, v.blur_px, v.blur_angle_deg)
        if v.light_gain != 1 or v.sensor_noise > 0:
            image = imp.low_light_image(image, v.light_gain, v.sensor_noise, seed=self.seed, index=index)
        return imp.recode(jpeg, image, v.jpeg_quality or imp.DEFAULT_JPEG_QUALITY)

    def new_uplink(self) -> imp.Uplink:
        """A fresh uplink model for one session, seeded by the profile's seed."""
        u = self.uplink
        return imp.Uplink(
            latency_ms=u.latency_ms,
            jitter_ms=u.jitter_ms,
            loss=u.loss,
            bandwidth_kbps=u.bandwidth_kbps,
            max_queue_ms=u.max_queue_ms,
            seed=self.seed,
        )


SECTION_TYPES = {"audio": AudioImpairment, "video": VideoImpairment, "uplink": UplinkImpairment}


def _problem(source: str, profile: str, where: str, text: str) -> ValueError:
    return ValueError(f"{source}: profile {profile!r}: field {where!r}: {text}")


def _section(source: str, name: str, section: str, body) -> object:
    if not isinstance(body, dict):
        raise _problem(source, name, section, "must be a table of settings")
    spec = SECTIONS[section]
    for key, value in body.items():
        if key not in spec:
            raise _problem(source, name, f"{section}.{key}", f"unknown field; {section} takes {', '.join(spec)}")
        why = spec[key].check(value)
        if why:
            raise _problem(source, name, f"{section}.{key}", why)
    values = {k: float(v) if spec[k].kind is float else v for k, v in body.items()}
    if section == "uplink" and 0 < values.get("bandwidth_kbps", 0) < MIN_BANDWIDTH_KBPS:
        raise _problem(
            source,
            name,
            "uplink.bandwidth_kbps",
            f"must be 0 (no cap) or at least {MIN_BANDWIDTH_KBPS} (the audio alone is 256 kbit/s), "
            f"got {body['bandwidth_kbps']!r}",
        )
    if section == "audio" and "babble_talkers" in values and "babble_snr_db" not in values:
        raise _problem(source, name, "audio.babble_talkers", "is set but audio.babble_snr_db is not")
    if section == "audio" and "reverb_drr_db" in values and not values.get("reverb_rt60_s"):
        raise _problem(source, name, "audio.reverb_drr_db", "is set but audio.reverb_rt60_s is not")
    return SECTION_TYPES[section](**values)


def parse_profiles(text: str, source: str) -> dict[str, Profile]:
    """The profiles in a TOML text; `source` names it in every error."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{source}: not valid TOML: {' '.join(str(exc).split())}") from None
    profiles = {}
    for name, body in data.items():
        if not PROFILE_NAME.fullmatch(name):
            raise ValueError(
                f"{source}: profile {name!r}: a profile name is lower-case letters, digits, '-' and '_' (up to 40)"
            )
        if not isinstance(body, dict):
            raise _problem(source, name, name, "a profile must be a table ([name] with its settings)")
        settings: dict[str, Any] = {}  # checked field by field below
        for key, value in body.items():
            if key == "description":
                if not isinstance(value, str):
                    raise _problem(source, name, key, f"must be a string, got {value!r}")
                settings[key] = " ".join(value.split())
            elif key == "seed":
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise _problem(source, name, key, f"must be a whole number >= 0, got {value!r}")
                settings[key] = value
            elif key in SECTIONS:
                settings[key] = _section(source, name, key, value)
            else:
                raise _problem(
                    source, name, key, "unknown field; a profile takes description, seed, audio, video, uplink"
                )
        profiles[name] = Profile(name=name, source=source, **settings)
    return profiles


def _read(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the impairments file: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{path}: an impairments file is at most {MAX_FILE_BYTES:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not valid TOML: not UTF-8 text") from None


def load_profiles(path: str | Path | None = None) -> dict[str, Profile]:
    """The shipped profiles, with a user file's (`--impairments-file`) over them: a profile of the same
    name replaces the shipped one whole."""
    profiles = parse_profiles(_read(SHIPPED), str(SHIPPED))
    if path is not None:
        profiles.update(parse_profiles(_read(Path(path)), str(path)))
    return profiles


def select_profiles(names: str | Iterable[str], path: str | Path | None = None) -> list[Profile]:
    """The named profiles in order (`"clean,street"` or a list); an unknown name is a ValueError naming
    the files looked in and the profiles they hold."""
    wanted = [n.strip() for n in (names.split(",") if isinstance(names, str) else names) if n.strip()]
    if not wanted:
        raise ValueError("name at least one impairment profile")
    profiles = load_profiles(path)
    for name in wanted:
        if name not in profiles:
            files = str(SHIPPED) + (f" or {path}" if path is not None else "")
            raise ValueError(f"{files}: no impairment profile {name!r} (known: {', '.join(sorted(profiles))})")
    return [profiles[name] for name in dict.fromkeys(wanted)]
