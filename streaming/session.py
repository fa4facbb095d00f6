"""One connection's pipeline: audio -> VAD -> ASR (and, as it arrives, to
the backend); frames -> buffer -> the session's frame policy -> the frames it
lets through, to the backend as they pass; at each end of speech the turn's
frames are chosen, the backend makes the TurnInput of them (a chat backend
describes them, a realtime API had them), answers, and its reply streams
back. The session only routes, the same way for every backend: perception
does the work, the backend (`streaming.backends`: a chat candidate or a
realtime API) sees and answers; a proactive session's probes are
`streaming.probes`.

Frames meet the policy in stream order, as the audio clock reaches them
(`streaming.session_frames`: the policy's gate, the frames sent, each turn's
frame facts).

The app's reader hands every message over at once (`on_media`,
`on_turn_end`) and goes back to reading, so the connection's keepalive pings
are answered however long a turn takes. Frames go straight into the
session's byte-capped `FrameBuffer`; audio and `turn.end` wait in order in a
queue for the session's one worker task, which feeds the backend and the
segmenter and runs each turn; the CPU work (voice activity, Whisper, frame
selection with its JPEG decoding, the opencv describer's analysis) runs in
threads. When the queue holds
`wire.MAX_PENDING_AUDIO_BYTES` of audio, `on_media` waits until the worker
has caught up: the client is slowed down by flow control, never failed.

A turn's reply is generated in its own task while the worker goes on
reading: voice activity and transcripts of what the user says next are sent
as they happen. Audio and frames for the backend wait (`_held`) until the
reply is done, so the backend gets them in arrival order after it, as a
realtime API would otherwise take them as the user's next turn. With
`barge_in` in the session config, speech that starts while a reply is being
generated interrupts it (`backend.interrupt`): the reply ends early, and its
`assistant.done` says `interrupted` and has the words produced up to then.
Without it (the benchmark: the glasses' script runs on its own clock) the
next turn waits for the reply. If a reply runs so long that the held audio
reaches the queue's audio cap, the worker waits for the reply as well: the
client is paced, as before. A client that stopped playing a spoken reply
early says how much was heard (`reply.cut`); that goes to the backend in
the same order as audio and frames (`backend.reply_cut`), so a realtime
API's conversation keeps only the part the user heard.

Audio keeps the stream's clock: when a chunk's stream time jumps past where
the last one ended by 30 ms to 5 s (the glasses' uplink lost a chunk), the
gap is filled with silence before it, for voice activity and for a realtime
API alike, and kept in `audio_gaps_ms`.

A turn ends when the segmenter says so: after the session's fixed silence,
on `turn.end`, or (a hello with `end_of_turn: "model"`) when the end-of-turn
model hears a finished utterance after a short silence; for a realtime API
that is when its turn is committed and answered, as for a chat backend. When
the transcript is ready before the silence is over (`EarlyTranscript`), the
turn's input as it would then be goes to the backend (`Backend.prefill`: the
embedded model evaluates the prompt meanwhile, so its first token comes as
the turn ends). The
worker keeps the arrival time of each audio chunk, so a turn's latencies
count from the moment its end of speech reached the server (the silence
waited included), and its metrics carry which rule ended it (`TurnEnd`).

Turns are numbered by final transcripts: the first utterance is turn 1, the
second turn 2, the third (the repair) turn 3.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from core.candidate import REPLY_AUDIO_RATE
from core.records import TurnEnd, TurnInput, TurnMetrics
from media_effects.frames import FrameBuffer
from perception.frame_policy import FramePolicy
from perception.speech import (
    EarlyTranscript,
    FinalTranscript,
    PartialTranscript,
    SpeechPaused,
    SpeechSegmenter,
    SpeechStarted,
)
from streaming import wire
from streaming.backends import Backend
from streaming.proactive import parse_strategy
from streaming.probe_pace import ProbePace
from streaming.probes import Probes
from streaming.relay import Relay
from streaming.session_frames import SessionFrames
from streaming.wire import KIND_AUDIO, Media, SessionConfig

Send = Callable[[wire.ServerEvent], Awaitable[None]]
TURN_END = "turn.end"
WATCH_END = "watch.end"
BYTES_PER_MS = 32  # PCM16 mono at 16 kHz
MIN_AUDIO_GAP_MS = 30  # a jump in the audio's stream times this long or longer is filled with silence
MAX_AUDIO_GAP_MS = 5000  # a longer jump is a new stretch of audio (a paused microphone), not a loss
MAX_ARRIVALS = 3000  # audio chunks whose arrival times are kept: a minute of 20 ms chunks
MAX_HELD_FRAMES = 64  # sent frames waiting for a reply to end before they go to the backend


PROACTIVE_POLICY = FramePolicy(kind="fps", rate=1.0)  # a proactive session needs frames while nobody speaks


def default_policy(backend: Backend, proactive: bool = False) -> FramePolicy:
    """The frame policy of a session that names none: the backend's (`end` for a chat backend,
    one frame a second for a realtime API), one frame a second for a proactive session."""
    return PROACTIVE_POLICY if proactive else backend.default_policy


@dataclass(frozen=True, kw_only=True)
class ReplyCut:
    """The client stopped playing `turn`'s spoken reply after `played_ms` (a `reply.cut`)."""

    turn: int
    played_ms: int


class Session:
    def __init__(
        self,
        config: SessionConfig,
        segmenter: SpeechSegmenter,
        backend: Backend,
        send: Send,
        *,
        frames: FrameBuffer | None = None,
        policy: FramePolicy | None = None,
        camera_profile=None,
        max_pending_audio: int = wire.MAX_PENDING_AUDIO_BYTES,
        pace: ProbePace | None = None,
    ):
        self.config = config
        self.segmenter = segmenter
        self.backend = backend
        self.send = send
        self.frames = frames if frames is not None else FrameBuffer()  # as the camera offered them
        self.strategy = parse_strategy(config.proactive) if config.proactive else None
        self.policy = policy or default_policy(backend, self.strategy is not None)
        if self.strategy is not None and self.strategy.probes and self.policy.kind == "end":
            raise wire.WireError(
                "bad_hello",
                "frame policy 'end' sends no frame until the user speaks; a proactive "
                "session needs one that streams (fps:1, speech:1/0.5, change:0.02)",
            )
        if self.strategy is not None and (refusal := backend.proactive_refusal(self.strategy)):
            raise wire.WireError("bad_hello", refusal)
        self.pace = pace  # the server's: a spoken turn here holds every session's probes back
        self.probes = Probes(self.strategy, backend, send, pace) if self.strategy is not None else None
        self.window = SessionFrames(config, self.policy, self.frames, camera_profile)
        self.sent = self.window.sent  # the frames the policy let through, as sent
        self._audio_end_ms: int | None = None  # stream time where the last audio chunk ended
        self.audio_gaps_ms: list[tuple[int, int]] = []  # (start, length) of the silence put in for lost audio
        self.turn = 0
        self.max_pending_audio = max_pending_audio
        self.pending_audio = 0  # bytes of audio queued for the worker
        self._queue: deque[tuple[Media | ReplyCut | str, float]] = deque()  # each item with its arrival time
        self._queued = asyncio.Event()  # the worker has something to do
        self._drained = asyncio.Event()  # the queue's audio is under the cap
        self._drained.set()
        self._working = False
        self._reply: asyncio.Task | None = None  # the turn whose reply is being generated
        self._prefill: asyncio.Task | None = None  # the next turn's prompt, being made ready in the silence
        self._held: list[Media | ReplyCut] = []  # for the backend, waiting for that reply
        self._held_audio = 0
        # (stream time a chunk of audio ends, wall time it arrived): when the end of speech reached the server
        self._arrivals: deque[tuple[int, float]] = deque(maxlen=MAX_ARRIVALS)

    # ---- the reader's side: never waits, except for flow control

    async def on_media(self, media: Media) -> None:
        if media.kind == KIND_AUDIO:
            while self.pending_audio + len(media.payload) > self.max_pending_audio and self.pending_audio:
                self._drained.clear()
                await self._drained.wait()
            self.pending_audio += len(media.payload)
            self._put(media)
        elif self.config.camera:
            self.frames.add(media.t_ms, media.payload)  # the worker offers it to the policy in stream order

    async def on_turn_end(self) -> None:
        self._put(TURN_END)

    async def on_watch_end(self) -> None:
        self._put(WATCH_END)

    async def on_reply_cut(self, turn: int, played_ms: int) -> None:
        self._put(ReplyCut(turn=turn, played_ms=played_ms))

    @property
    def behind(self) -> bool:
        """The worker holds at least half the queue's audio cap: the server, not the client, sets the pace."""
        return self.pending_audio * 2 >= self.max_pending_audio

    @property
    def busy(self) -> bool:
        """Something is queued or in progress (a turn, its reply)."""
        return self._working or bool(self._queue) or self._reply is not None

    def _put(self, item: Media | ReplyCut | str) -> None:
        self._queue.append((item, time.monotonic()))
        self._queued.set()

    # ---- the worker

    async def run(self) -> None:
        """The session's worker: audio and turn ends in arrival order. Returns
        never; raises when the backend or perception fails."""
        while True:
            while not self._queue and not self._reply_finished:
                self._queued.clear()
                await self._queued.wait()
            self._working = True
            try:
                if self._reply_finished:
                    await self._end_reply()
                    continue
                item, arrived = self._queue.popleft()
                if item == TURN_END:
                    await self._gate_frames(float("inf"))
                    for event in await self.segmenter.end_turn():
                        await self._on_speech(event)
                elif item == WATCH_END:
                    await self._gate_frames(float("inf"))
                    await self._end_reply()
                    done = (
                        self.probes.done()
                        if self.probes is not None
                        else wire.WatchDone(probes=0, frames={"sent_ms": []})
                    )
                    await self.send(done)
                elif isinstance(item, ReplyCut):
                    await self._to_backend(item)
                elif isinstance(item, Media):  # audio: frames are taken on arrival, never queued
                    self.pending_audio -= len(item.payload)
                    if self.pending_audio + wire.MAX_MESSAGE_BYTES <= self.max_pending_audio:
                        self._drained.set()
                    self.window.start_window(item.t_ms)
                    await self._gate_frames(item.t_ms)
                    for chunk in self._with_gap(item):
                        await self._to_backend(chunk)
                        self._arrivals.append((chunk.t_ms + len(chunk.payload) // BYTES_PER_MS, arrived))
                        for event in await self.segmenter.feed(chunk.payload, chunk.t_ms):
                            await self._on_speech(event)
                    await self._maybe_probe()
            finally:
                self._working = False

    def _with_gap(self, audio: Media) -> list[Media]:
        """The chunk, after silence for the stream time no audio came for (a chunk the uplink
        lost), so voice activity and a realtime API keep the stream's timing."""
        end = self._audio_end_ms
        gap = 0 if end is None else audio.t_ms - end
        chunks = [audio]
        if end is not None and MIN_AUDIO_GAP_MS <= gap <= MAX_AUDIO_GAP_MS:
            chunks.insert(0, Media(kind=KIND_AUDIO, t_ms=end, payload=bytes(gap * BYTES_PER_MS)))
            self.audio_gaps_ms.append((end, gap))
        self._audio_end_ms = audio.t_ms + len(audio.payload) // BYTES_PER_MS
        return chunks

    @property
    def _reply_finished(self) -> bool:
        return self._reply is not None and self._reply.done()

    @property
    def _replying(self) -> bool:
        return self._reply is not None and not self._reply.done()

    async def _to_backend(self, item: Media | ReplyCut) -> None:
        """Audio, a frame or a reply cut to the backend, or held while a reply is being generated."""
        if self._reply is not None:
            if isinstance(item, ReplyCut):
                self._held.append(item)
                return
            if item.kind != KIND_AUDIO:
                self._held.append(item)
                frames = [m for m in self._held if isinstance(m, Media) and m.kind != KIND_AUDIO]
                if len(frames) > MAX_HELD_FRAMES:  # a very long reply: the oldest is dropped, and not counted sent
                    self._held.remove(frames[0])
                    self.window.unsend(frames[0].t_ms)
                return
            if self._held_audio + len(item.payload) <= self.max_pending_audio:
                self._held.append(item)
                self._held_audio += len(item.payload)
                return
            await self._end_reply()  # a long reply: wait for it, and the client waits for us
        if isinstance(item, ReplyCut):
            await self.backend.reply_cut(item.turn, item.played_ms)
        elif item.kind == KIND_AUDIO:
            await self.backend.audio(item.payload)
        else:
            await self.backend.frame(item.t_ms, item.payload)

    async def _end_reply(self) -> None:
        """Wait for the reply being generated (its error is raised here), then
        give the backend the audio and frames held meanwhile."""
        reply, self._reply = self._reply, None
        if reply is not None:
            await reply
        held, self._held, self._held_audio = self._held, [], 0
        for item in held:
            await self._to_backend(item)

    # ---- frames and the policy (streaming.session_frames)

    async def _gate_frames(self, upto_ms: float) -> None:
        """Offer the policy every frame not yet offered up to stream time `upto_ms`, in order."""
        await self.window.offer(upto_ms, lambda: self.segmenter.in_speech, self._frame_sent)

    async def _frame_sent(self, t_ms: int, jpeg: bytes) -> None:
        """A frame the policy let through: to the probes, and to the backend."""
        if self.probes is not None:
            await self.probes.watched(t_ms, jpeg)
        await self._to_backend(Media(kind=wire.KIND_FRAME, t_ms=t_ms, payload=jpeg))

    # ---- proactive probes (streaming.probes)

    async def _maybe_probe(self) -> None:
        """Start a probe when one is due, nobody speaks and nothing is being answered."""
        if self.probes is None or self._reply is not None or self.segmenter.in_speech or self._audio_end_ms is None:
            return
        probe = await self.probes.due(self._audio_end_ms)
        if probe is None:
            return
        self._reply = asyncio.create_task(probe, name=f"probe {self.probes.asked}")
        self._reply.add_done_callback(lambda _: self._queued.set())

    async def _on_speech(self, event) -> None:
        if isinstance(event, SpeechStarted):
            await self.send(wire.SpeechStarted(t_ms=event.t_ms))
            self._prefill_before_words(event.t_ms, event.t_ms)
            if self.pace is not None:
                self.pace.hold(self)  # until this turn's first reply text (or its end)
            if not self._replying:  # its audio has reached the backend (a reply holds it back)
                await self.backend.speech_started()
            elif self.config.barge_in:
                await self.backend.interrupt()
        elif isinstance(event, PartialTranscript):
            await self.send(wire.TranscriptPartial(text=event.text, t_ms=event.t_ms))
        elif isinstance(event, SpeechPaused):
            self._prefill_before_words(event.start_ms, event.end_ms)
        elif isinstance(event, EarlyTranscript):
            if self._reply is None:
                self._prefill_next(event)
        elif isinstance(event, FinalTranscript):
            heard_at = time.monotonic()  # latencies count any wait for the previous reply
            await self._end_reply()  # the previous turn's reply first: one conversation, in order
            window = self.window.take_window()  # the frames offered until this turn is asked
            self._reply = asyncio.create_task(
                self._run_turn(event, heard_at, window, self.window.gated_ms), name=f"turn {self.turn + 1}"
            )
            self._reply.add_done_callback(lambda _: self._queued.set())  # the worker ends it

    def _prefill_before_words(self, start_ms: int, end_ms: int) -> None:
        """Under the text rule a turn may end as soon as its words are decoded, so the part of its prompt
        before them (the conversation, the camera block of the frames so far) is evaluated while the user
        speaks, and again at the pause if the frame chosen then differs (the backend skips what it holds)."""
        if self.config.end_of_turn == "text" and self._reply is None:
            self._prefill_next(EarlyTranscript(text="", start_ms=start_ms, end_ms=end_ms, decode_seconds=0))

    def _prefill_next(self, early: EarlyTranscript) -> None:
        """Prefill the next turn from `early`, after the prefill before it (the backend continues it)."""
        self._prefill = asyncio.create_task(self._prefill_turn(early, self._prefill), name=f"prefill {self.turn + 1}")

    async def _prefill_turn(self, early: EarlyTranscript, before: asyncio.Task | None) -> None:
        """The next turn's input as it will be if the turn ends on this silence, to the backend to get ready
        (`Backend.prefill`): nothing is sent or counted, and a failure here is the turn's to meet."""
        if before is not None:
            await asyncio.wait([before])
        try:
            await self.backend.prefill(await self._turn_input(self.turn + 1, early, None))
        except Exception:  # noqa: BLE001 (the turn itself asks again and reports what fails)
            return

    async def _turn_input(
        self, turn: int, final: FinalTranscript | EarlyTranscript, window: list[list] | None
    ) -> TurnInput:
        """The turn's input: the backend's (`Backend.perceive`) of the turn's frame (and on turn 1
        the context frame) chosen by `SessionFrames.for_turn`, or the authored camera text standing in.
        With no `window` the turn is only foreseen: its frames are chosen, not sent."""
        frame, context_jpeg, fallback, fallback_context = await self.window.for_turn(
            turn, final, window or [], self.backend.frame if window is not None else None
        )
        authored = TurnInput(
            turn=turn,
            camera_block=fallback or None,
            speech="",
            camera_source="authored" if fallback else None,
            speech_source=None,
            context_block=fallback_context or None,
            context_source="authored" if fallback_context else None,
            timings={"asr_decode_s": round(final.decode_seconds, 4)},
        )
        return await self.backend.perceive(authored, final.text, frame, context_jpeg)

    async def _run_turn(self, final: FinalTranscript, heard_at: float, window: list[list], gated_ms: float) -> None:
        try:
            await self._answer_turn(final, heard_at, window, gated_ms)
        finally:
            if self.pace is not None:
                self.pace.release(self)

    async def _answer_turn(self, final: FinalTranscript, heard_at: float, window: list[list], gated_ms: float) -> None:
        self.turn += 1
        turn = self.turn
        await self.send(wire.TranscriptFinal(turn=turn, text=final.text, start_ms=final.start_ms, end_ms=final.end_ms))
        transcript_at = time.monotonic()
        turn_input = await self._turn_input(turn, final, window)
        frames, frame_age_s = self.window.facts(final.end_ms, window, gated_ms)  # after `end` picked its frames
        camera_at = time.monotonic()
        await self.send(
            wire.CameraBlock(
                turn=turn,
                text=turn_input.camera_block,
                source=turn_input.camera_source,
                context=turn_input.context_block,
                context_source=turn_input.context_source,
            )
        )
        await self.send(wire.TurnInputEvent(turn=turn, input=turn_input))
        first_token: list[float] = []
        async with Relay(self.send) as relay:  # text and audio go out while the reply is still coming

            def on_delta(piece: str) -> None:
                if not first_token:
                    first_token.append(time.monotonic())
                    if self.pace is not None:
                        self.pace.release(self)  # the user has an answer coming: probes may go on
                relay.put(wire.AssistantDelta(turn=turn, text=piece))

            def on_audio(pcm16: bytes) -> None:
                relay.put(
                    wire.AssistantAudio(turn=turn, audio=base64.b64encode(pcm16).decode("ascii"), rate=REPLY_AUDIO_RATE)
                )

            asked_at = time.monotonic()
            reply = await self.backend.answer(turn_input, on_delta, on_audio)
        done_at = time.monotonic()
        await self.send(
            wire.AssistantDone(
                turn=turn,
                text=reply.text,
                usage=reply.usage,
                heard=reply.heard,
                interrupted=reply.interrupted,
                session_lost=reply.session_lost,
                incomplete=reply.incomplete,
                transcription=reply.transcription,
            )
        )
        first = first_token[0] if first_token else done_at
        ended_at = final.ended_at if final.ended_at is not None else heard_at - final.decode_seconds
        speech_end_at = self._arrival(final.speech_end_ms, ended_at)
        since_speech_end = -speech_end_at  # add a monotonic time: seconds since the end of speech arrived
        await self.send(
            wire.Metrics(
                turn=turn,
                latency_s=TurnMetrics(
                    transcript_final=transcript_at + since_speech_end,
                    camera_block=camera_at + since_speech_end,
                    first_token=first + since_speech_end,
                    first_audio=None
                    if reply.first_audio_s is None
                    else asked_at + reply.first_audio_s + since_speech_end,
                    reply_done=done_at + since_speech_end,
                    turn_end_to_first_token=first - asked_at,
                    last_frame_age_s=frame_age_s,
                ),
                frames=frames,
                turn_end=TurnEnd(
                    rule=final.ended_by,
                    silence_s=final.silence_ms / 1000,
                    after_speech_s=ended_at + since_speech_end,
                    probability=final.probability,
                ),
            )
        )

    def _arrival(self, t_ms: int | None, default: float) -> float:
        """Wall time the audio at stream time `t_ms` reached the server (the chunk holding it), else `default`."""
        if t_ms is not None:
            for end_ms, arrived in self._arrivals:
                if end_ms >= t_ms:
                    return arrived
        return default

    async def aclose(self) -> None:
        for task in (self._reply, self._prefill):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._queue.clear()
        self._held.clear()
        if self.probes is not None:
            self.probes.close()
        if self.pace is not None:
            self.pace.release(self)
        self.window.close()  # the frames offered and the frames sent: released, and out of the budget, now
        await self.backend.aclose()
