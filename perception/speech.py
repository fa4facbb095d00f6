"""Streaming turn segmentation: PCM16 chunks in, utterances out.

The Silero voice-activity model that ships inside faster-whisper scores
each 32 ms window (512 samples) for speech. An utterance starts on the first
speech window and ends after `silence_ms` of non-speech (default `SILENCE_MS`), or
when the client sends the `turn.end` hint (`end_turn`, as push-to-talk does);
its audio (with a short pad before the first speech window) is transcribed
and a `FinalTranscript` with start and end times is emitted. An utterance
is cut at `max_utterance_s` (30 s) even while the speech goes on: the rest
starts a new utterance, so no decode is ever of more than 30 s of audio.

With the text rule (`text_turn`, `perception.turn_text`) a turn ends as soon
as the early decode (below) is done and its words read as finished, with no
filler held at their end (rule `text`); else the fixed silence ends it.

With an end-of-turn model (`turn_model`, `perception.turn_end`) a pause
is judged before the fixed silence runs out: at `model_silence_ms` (200 ms)
of silence, and every `model_every_ms` (300 ms) of silence after that, the
model hears the utterance so far; when it says the speaker sounds finished
the turn ends there (rule `model`), else the fixed `silence_ms` still ends
it (rule `silence`). A final transcript says which rule ended its turn
(`model`, `text`, `silence`, `hint` for `turn.end`, `cap` for `max_utterance_s`),
the silence heard after the last speech when it ended, and the stream time
the speech ended (`speech_end_ms`: the end of its last speech window), so the
caller, who knows when each chunk arrived, can count latencies from the end
of speech itself.

Partial transcripts (when asked for) are bounded: at most one every
`partial_every_ms` of stream time and every `PARTIAL_MIN_INTERVAL_S` of
wall time, each of only the last `PARTIAL_WINDOW_S` of the utterance, and
skipped while the shared Whisper model is busy or anyone waits for it
(`Transcriber.transcribe_if_idle`): a partial never delays a final
transcript, this session's or another's.

The transcript is decoded early: once `POST_ROLL_MS` of silence follows the
last speech, the clip the silence rule would end with is final unless the
speech resumes, so it is sent to Whisper then, while the rest of the silence
is waited; when the turn ends on that clip (by the silence, the model, or a
`turn.end` hint in the silence: every rule's clip ends `POST_ROLL_MS` after
the last speech, `_clip_end`) the early decode is its transcript
(`decoded_early`), and when the speech goes on it is dropped (a queued
decode never runs). The transcript is the same either way; it is only ready
sooner. When the early decode begins, `feed` returns `SpeechPaused`, and when
it is done an `EarlyTranscript` (once per decode), so the caller can prepare
the reply while the silence is waited (the streaming session has the
embedded model evaluate the turn's prompt then: under the text rule, the
part before the words as soon as the speech pauses).

Voice activity is one stream per segmenter (`VadStream`): each 32 ms window
is scored once, with the model's state carried on from the window before
(about 0.1 ms of Silero a window).

`feed` never does CPU work on the event loop: appending a chunk and scoring
its windows run in a small pool of VAD threads, kept apart from the Whisper
decodes (which run in asyncio's default pool). A server reading many sessions at once stays free to answer keepalive
pings.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from core.records import TurnEnd
from media_effects.audio import SAMPLE_RATE, pcm16_to_float
from perception.asr import Transcriber

WINDOW = 512  # samples: 32 ms, the Silero model's input size
PRE_ROLL_MS = 300
POST_ROLL_MS = 300
POST_ROLL_SAMPLES = POST_ROLL_MS * SAMPLE_RATE // 1000
PARTIAL_WINDOW_S = 5.0  # a partial transcript decodes only the utterance's last seconds
PARTIAL_MIN_INTERVAL_S = 1.0  # and at most one starts per second of wall time, however fast audio comes
# the silence after speech that ends a user's turn, unless a session asks for another (every default of it
# reads this one: the segmenter's, the hello's and the glasses'). On the bank's lines spoken with pauses, 600 ms
# ended far more turns early than this (docs/performance.md, "Answer sooner")
SILENCE_MS = 1500
MODEL_SILENCE_MS = 200  # silence before the end-of-turn model is first asked
MODEL_EVERY_MS = 300  # and between its later checks in the same pause
TURN_END_RULES = TurnEnd.RULES  # model, text, silence, hint, cap


@dataclass(frozen=True, kw_only=True)
class SpeechStarted:
    t_ms: int


@dataclass(frozen=True, kw_only=True)
class PartialTranscript:
    text: str
    t_ms: int


@dataclass(frozen=True, kw_only=True)
class FinalTranscript:
    text: str
    start_ms: int
    end_ms: int
    decode_seconds: float
    audio: np.ndarray = field(repr=False, compare=False)
    ended_by: str = "silence"  # one of TURN_END_RULES
    silence_ms: int = 0  # silence heard after the last speech when the turn ended (stream time)
    speech_end_ms: int | None = None  # stream time the last speech window ended
    ended_at: float | None = None  # monotonic wall time the turn was ended (before decoding)
    probability: float | None = None  # the end-of-turn model's last score in this pause (None: not asked)
    decoded_early: bool = False  # decoded while the silence was waited, before the turn ended


@dataclass(frozen=True, kw_only=True)
class EarlyTranscript:
    """The early decode is done: the transcript the turn will have if it ends on this silence (its clip,
    `start_ms` to `end_ms`), told while the silence is still being waited, so the caller can get ready."""

    text: str
    start_ms: int
    end_ms: int
    decode_seconds: float


@dataclass(frozen=True, kw_only=True)
class SpeechPaused:
    """The early decode has begun: `POST_ROLL_MS` of silence follow the speech, and the clip a turn ending on
    this silence would have (`start_ms` to `end_ms`) is being decoded; its words are not known yet."""

    start_ms: int
    end_ms: int


SpeechEvent = SpeechStarted | PartialTranscript | SpeechPaused | EarlyTranscript | FinalTranscript

_VAD_POOL: ThreadPoolExecutor | None = None


def vad_pool() -> ThreadPoolExecutor:
    """The threads that score voice activity: one per core, at most four."""
    global _VAD_POOL
    if _VAD_POOL is None:
        _VAD_POOL = ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1), thread_name_prefix="wearsim-vad")
    return _VAD_POOL


def speech_onset_s(pcm16: bytes, rate: int) -> float | None:
    """Seconds from the start of a clip to its first speech (the Silero model,
    no padding), or None when it holds none: the leading silence of a spoken
    reply, for the voice-to-voice gap."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    from media_effects.audio import resample_pcm16

    audio = pcm16_to_float(resample_pcm16(pcm16, rate, SAMPLE_RATE))
    spans = get_speech_timestamps(audio, VadOptions(speech_pad_ms=0, min_speech_duration_ms=100))
    return spans[0]["start"] / SAMPLE_RATE if spans else None


class VoiceActivity:
    """The Silero voice-activity model, loaded once and shared by every stream (`stream()`)."""

    def __init__(self):
        from faster_whisper.vad import get_vad_model

        self.session = get_vad_model().session  # onnxruntime: `run` may be called from many threads at once

    def stream(self) -> VadStream:
        return VadStream(self.session)


class VadStream:
    """Speech probability of each 32 ms window of one audio stream, in order. The model's recurrent state
    and the previous window's last samples carry from each window to the next, so a window costs one
    step of the model (the same probabilities as scoring the whole stream in one call)."""

    CONTEXT = 64  # samples of the previous window the model hears before each window

    def __init__(self, session):
        self.session = session
        self.h = np.zeros((1, 1, 128), dtype=np.float32)
        self.c = np.zeros((1, 1, 128), dtype=np.float32)
        self.context = np.zeros(self.CONTEXT, dtype=np.float32)

    def probability(self, window: np.ndarray) -> float:
        """The speech probability of the stream's next `WINDOW` samples."""
        model_input = np.concatenate([self.context, window])[None].astype(np.float32, copy=False)
        out, self.h, self.c = self.session.run(None, {"input": model_input, "h": self.h, "c": self.c})
        self.context = np.array(window[-self.CONTEXT :], dtype=np.float32)
        return float(np.asarray(out).reshape(-1)[-1])


class SpeechSegmenter:
    def __init__(
        self,
        transcriber: Transcriber,
        *,
        silence_ms: int = SILENCE_MS,
        threshold: float = 0.5,
        partials: bool = False,
        partial_every_ms: int = 1000,
        vad: VoiceActivity | None = None,
        max_utterance_s: float = 30.0,
        turn_model=None,
        model_silence_ms: int = MODEL_SILENCE_MS,
        model_every_ms: int = MODEL_EVERY_MS,
        text_turn: Callable[[str, np.ndarray], bool] | None = None,
    ):
        self.transcriber = transcriber
        self.silence_ms = silence_ms
        self.turn_model = turn_model  # a `perception.turn_end.TurnEndModel`, or None: the fixed silence only
        self.text_turn = text_turn  # does an early transcript (text, clip) end the turn (`perception.turn_text`)
        self._text_verdict: tuple[asyncio.Future, bool] | None = None  # text_turn's answer for that decode
        self.model_silence_ms = model_silence_ms
        self.model_every_ms = model_every_ms
        self._next_check_ms = model_silence_ms  # silence at which the model is next asked in this pause
        self._probability: float | None = None
        self.threshold = threshold
        self.partials = partials
        self.partial_every_ms = partial_every_ms
        self.vad = (vad or VoiceActivity()).stream()  # this stream's voice activity, window after window
        self.max_samples = int(max_utterance_s * SAMPLE_RATE)
        self._audio = np.zeros(0, dtype=np.float32)  # everything since the stream (or last utterance) started
        self._origin_ms = 0  # stream time of _audio[0]
        self._scored = 0  # samples already scored by the VAD
        self._speech_start: int | None = None  # sample index of the first speech window
        self._last_speech_end = 0
        self._last_partial_ms = 0
        self._last_partial_at = float("-inf")  # wall time (monotonic) of the last partial decode
        self._early: tuple[int, asyncio.Future] | None = None  # (clip end, its decode) begun in the silence
        self._early_told = False  # its EarlyTranscript has been returned

    @property
    def in_speech(self) -> bool:
        """Voice activity hears the user now (an utterance has started and not ended)."""
        return self._speech_start is not None

    def _started(self) -> int:
        """The sample of the open utterance's first speech (callers run only while one is open)."""
        if self._speech_start is None:
            raise RuntimeError("no utterance is open")
        return self._speech_start

    def _ms(self, sample: int) -> int:
        return self._origin_ms + int(sample * 1000 / SAMPLE_RATE)

    async def feed(self, chunk: bytes, t_ms: int) -> list[SpeechEvent]:
        """Add one PCM16 mono 16 kHz chunk whose first sample is at `t_ms`."""
        loop = asyncio.get_running_loop()
        probabilities = await loop.run_in_executor(vad_pool(), self._append_and_score, chunk, t_ms)
        events: list[SpeechEvent] = []
        for probability in probabilities:  # each window once: the voice-activity state runs on through them
            end = self._scored + WINDOW
            self._scored = end
            if probability >= self.threshold:
                if self._speech_start is None:
                    self._speech_start = end - WINDOW
                    events.append(SpeechStarted(t_ms=self._ms(self._speech_start)))
                self._last_speech_end = end
                self._next_check_ms, self._probability = self.model_silence_ms, None
                self._drop_early_decode()  # the speech goes on: the clip decoded early is not the utterance
            if self._speech_start is None:
                continue
            rule = await self._rule(end)
            if rule is not None:  # the buffer starts anew at the utterance's end; later windows follow on
                events.append(await self._finish(self._clip_end(end), rule, end))
            elif self._early is None and end - self._last_speech_end >= POST_ROLL_SAMPLES:
                events.append(self._start_early_decode())
        if self._speech_start is not None and self._early is not None and not self._early_told:
            events += self._early_transcript()
        if self._speech_start is None:
            self._trim_idle()
        elif (
            self.partials
            and self._ms(self._scored) - self._last_partial_ms >= self.partial_every_ms
            and time.monotonic() - self._last_partial_at >= PARTIAL_MIN_INTERVAL_S
        ):
            self._last_partial_ms = self._ms(self._scored)
            self._last_partial_at = time.monotonic()
            recent = self._utterance_audio(self._scored)[-int(PARTIAL_WINDOW_S * SAMPLE_RATE) :]
            partial = await self.transcriber.transcribe_if_idle(recent)
            if partial is not None:
                events.append(PartialTranscript(text=partial.text, t_ms=self._last_partial_ms))
        return events

    async def _rule(self, end: int) -> str | None:
        """Which rule ends the utterance at window end `end`, or None: it goes on."""
        silent_ms = (end - self._last_speech_end) * 1000 / SAMPLE_RATE
        if end - self._started() >= self.max_samples:  # it holds while the speech goes on, too
            return "cap"
        if silent_ms >= self.silence_ms:
            return "silence"
        if self.text_turn is not None and self._early is not None and self._text_ends(self.text_turn, *self._early):
            return "text"
        if self.turn_model is not None and silent_ms >= self._next_check_ms:
            self._next_check_ms += self.model_every_ms
            from perception.turn_end import THRESHOLD

            audio = self._utterance_audio(end)
            probability: float = await asyncio.get_running_loop().run_in_executor(
                vad_pool(), self.turn_model.probability, audio
            )
            self._probability = probability
            if probability >= THRESHOLD:
                return "model"
        return None

    def _text_ends(self, text_turn: Callable[[str, np.ndarray], bool], end: int, decode: asyncio.Future) -> bool:
        """`text_turn`'s answer for the early decode `decode` of the clip ending at `end` (begun at
        POST_ROLL_MS of silence): False until it is done, then asked once."""
        if self._text_verdict is None or self._text_verdict[0] is not decode:
            if not decode.done() or decode.cancelled() or decode.exception() is not None:
                return False
            self._text_verdict = (decode, text_turn(decode.result().text, self._utterance_audio(end)))
        return self._text_verdict[1]

    def _append_and_score(self, chunk: bytes, t_ms: int) -> list[float]:
        """(In a VAD thread.) Append the chunk; the speech probability of each new whole window."""
        if not len(self._audio):
            self._origin_ms = t_ms
        self._audio = np.concatenate([self._audio, pcm16_to_float(chunk)])
        return self._score()

    def _score(self) -> list[float]:
        """(In a VAD thread.) Speech probabilities of the whole windows after `_scored`, each scored once."""
        probabilities, end = [], self._scored + WINDOW
        while end <= len(self._audio):
            probabilities.append(self.vad.probability(self._audio[end - WINDOW : end]))
            end += WINDOW
        return probabilities

    def _clip_end(self, heard_to: int) -> int:
        """Where an utterance heard up to sample `heard_to` ends, whatever rule ends it: `POST_ROLL_MS` after
        its last speech, or sooner when less has been heard."""
        return min(heard_to, self._last_speech_end + POST_ROLL_SAMPLES)

    def _start_early_decode(self) -> SpeechPaused:
        """Decode the utterance as a turn ending now would, while the silence is still being waited."""
        end = self._clip_end(self._scored)
        task = asyncio.ensure_future(self.transcriber.transcribe(self._utterance_audio(end)))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # a dropped decode's error is not lost
        self._early, self._early_told = (end, task), False
        return SpeechPaused(start_ms=self._ms(self._started()), end_ms=self._ms(end))

    def _early_transcript(self) -> list[SpeechEvent]:
        """The early decode's EarlyTranscript, once, when it has finished (a failed one tells nothing)."""
        if self._early is None or not self._early[1].done() or self._early[1].cancelled():
            return []
        self._early_told = True
        if self._early[1].exception() is not None:
            return []
        transcript = self._early[1].result()
        return [
            EarlyTranscript(
                text=transcript.text,
                start_ms=self._ms(self._started()),
                end_ms=self._ms(self._early[0]),
                decode_seconds=transcript.decode_seconds,
            )
        ]

    def _drop_early_decode(self) -> None:
        if self._early is not None:
            self._early[1].cancel()  # still queued: never decoded; already decoding: its text is thrown away
            self._early = None

    async def _decode(self, audio: np.ndarray, end: int):
        """The utterance's transcript: the early decode when it is of this very clip, else a new one."""
        early, self._early = self._early, None
        usable = (
            early is not None
            and not early[1].cancelled()  # (a loop that closed cancelled it)
            and early[1].get_loop() is asyncio.get_running_loop()
        )
        if usable and early is not None and end == early[0]:  # (new speech would have dropped it)
            return await early[1], True
        if early is not None:
            early[1].cancel()
        return await self.transcriber.transcribe(audio), False

    async def end_turn(self, t_ms: int | None = None) -> list[SpeechEvent]:
        """The client's `turn.end` hint: close the open utterance now (its clip, like the silence rule's, ends
        `POST_ROLL_MS` after the last speech, so a hint in a silence takes the early decode)."""
        if self._speech_start is None:
            return []
        return [await self._finish(self._clip_end(self._scored), "hint", self._scored)]

    def _utterance_audio(self, end: int) -> np.ndarray:
        start = max(0, self._started() - int(PRE_ROLL_MS * SAMPLE_RATE / 1000))
        return self._audio[start:end]

    async def _finish(self, end: int, rule: str, heard_to: int) -> FinalTranscript:
        """End the utterance at sample `end` by `rule`, with audio heard up to `heard_to`."""
        ended_at = time.monotonic()
        audio = self._utterance_audio(end)
        start_ms, end_ms = self._ms(self._started()), self._ms(end)
        silence_ms = max(0, int((heard_to - self._last_speech_end) * 1000 / SAMPLE_RATE))
        speech_end_ms, probability = self._ms(self._last_speech_end), self._probability
        transcript, decoded_early = await self._decode(audio, end)
        # keep only what follows the utterance
        self._origin_ms = self._ms(end)
        self._audio = self._audio[end:]
        self._scored -= end
        self._speech_start = None
        self._last_speech_end = 0
        self._next_check_ms, self._probability = self.model_silence_ms, None
        return FinalTranscript(
            text=transcript.text,
            start_ms=start_ms,
            end_ms=end_ms,
            decode_seconds=transcript.decode_seconds,
            audio=audio,
            ended_by=rule,
            silence_ms=silence_ms,
            speech_end_ms=speech_end_ms,
            ended_at=ended_at,
            probability=probability,
            decoded_early=decoded_early,
        )

    def _trim_idle(self) -> None:
        keep = int(PRE_ROLL_MS * SAMPLE_RATE / 1000)
        drop = self._scored - keep
        if drop > 0:
            self._origin_ms = self._ms(drop)
            self._audio = self._audio[drop:]
            self._scored -= drop
