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

It was chosen over the bundled SmolLM2-135M's probability of ending the user's
message: on Whisper's transcripts of the bank's lines spoken by espeak-ng, the
model separated whole lines from the words before a pause no better than this
list (docs/performance.md, "Answer sooner"), and the list costs nothing.
"""

from __future__ import annotations

import re

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


def sounds_complete(text: str) -> bool:
    """The transcript reads as a finished sentence (the rule in the module's docstring)."""
    text = text.strip()
    if not text or text.endswith(TRAILING) or text[-1] not in CLOSING_MARKS:
        return False
    words = WORD.findall(text.lower())
    return bool(words) and words[-1] not in OPEN_ENDINGS
