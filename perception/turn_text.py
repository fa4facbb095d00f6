"""Do the words end a turn? The text end of turn (`end_of_turn: "text"`, issue 59).

The transcript is decoded early, 300 ms into a silence (`perception.speech`);
under the text rule a turn whose early transcript reads as a finished sentence
ends then, and one that does not waits for the fixed silence. A transcript
reads as finished when Whisper closed it with a full stop, a question mark or
an exclamation mark and its last word is not one that leaves an English
sentence open (an article, a possessive, a conjunction, a preposition, an
auxiliary verb, a filler). The word list was written before any transcript
was read. Whisper's punctuation follows the speaker's intonation, which is
what the rule mostly rests on.

Whisper leaves out a filler ("um") and still closes the words before it with
a question mark, so the rule also hears the clip: words that end in a held
sound (the last fifth of a second of the voice barely changes from one 10 ms
frame to the next, as a drawn-out "um" or "uh" does, and a spoken word does
not) do not end the turn. The threshold was fitted on lines written for it,
in five espeak-ng voices and rates, never on the bank's
(`benchmarks/turn_hold_fit.py`).

It was chosen over the bundled SmolLM2-135M's probability of ending the user's
message: on Whisper's transcripts of the bank's lines spoken by espeak-ng, the
model separated whole lines from the words before a pause no better than this
list (docs/performance.md, "Answer sooner"), and the list costs nothing.
"""

from __future__ import annotations

import re

import numpy as np

from media_effects.audio import SAMPLE_RATE

OPEN_ENDINGS = frozenset(
    """
    a an the my your our their his its
    and or but so because if than then whether
    of to for with in on at from by about into onto like as
    is are am was were be been do does did can could should would will shall may might must have has had
    um uh er erm hmm mm
    """.split()
)
CLOSING_MARKS = ".?!"
TRAILING = ("...", "…", ",", "-", "—")
WORD = re.compile(r"[a-z']+")


HELD_SOUND_FLUX = 0.2864  # benchmarks/turn_hold_fit.py (benchmarks/results/turn_hold_fit.json)
HELD_S = 0.2  # the end of the voice that is heard for a held sound
FRAME, HOP = 512, 160  # 32 ms frames every 10 ms


def ends_the_turn(text: str, audio: np.ndarray) -> bool:
    """The early transcript `text` of the clip `audio` (float samples at SAMPLE_RATE) ends the turn: its
    words read as finished and the voice does not end in a held sound."""
    return sounds_complete(text) and spectral_flux(audio) >= HELD_SOUND_FLUX


def spectral_flux(audio: np.ndarray) -> float:
    """How much the voice's spectrum changes from frame to frame over the last `HELD_S` of the voice (the
    clip trimmed of the silence after it): the mean L1 distance between consecutive normalised magnitude
    spectra. Low for a held sound; inf for a clip too short to tell, which never holds a turn back."""
    audio = np.asarray(audio, dtype=np.float32)
    if len(audio) < FRAME + HOP:
        return float("inf")
    frames = np.lib.stride_tricks.sliding_window_view(audio, FRAME)[::HOP]
    loudness = np.sqrt(np.mean(frames**2, axis=1))
    voiced = np.nonzero(loudness > 0.1 * np.percentile(loudness, 95))[0]
    if not len(voiced):
        return float("inf")
    last = voiced[-1]
    tail = frames[max(0, last + 1 - int(HELD_S * SAMPLE_RATE / HOP)) : last + 1]
    if len(tail) < 3:
        return float("inf")
    spectra = np.abs(np.fft.rfft(tail * np.hanning(FRAME), axis=1))
    spectra /= spectra.sum(axis=1, keepdims=True) + 1e-9
    return float(np.mean(np.abs(np.diff(spectra, axis=0)).sum(axis=1)))


def sounds_complete(text: str) -> bool:
    """The transcript reads as a finished sentence (the rule in the module's docstring)."""
    text = text.strip()
    if not text or text.endswith(TRAILING) or text[-1] not in CLOSING_MARKS:
        return False
    words = WORD.findall(text.lower())
    return bool(words) and words[-1] not in OPEN_ENDINGS
