"""One connection's pipeline: audio -> VAD -> ASR (and, as it arrives, to
the backend); frames -> buffer -> describer; at each end of speech a
TurnInput goes to the assistant backend and its reply streams back. The
session only routes: perception does the work, the backend
(`streaming.backends`: a chat candidate or a realtime API) answers.

Turns are numbered by final transcripts: the first utterance is turn 1, the
second turn 2, the third (the repair) turn 3.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from benchmark.records import MEDIA_CAMERA, TurnInput
from perception.describers import SceneDescriber
from perception.frames import FrameBuffer, pick_context_frame, select_frame
from perception.speech import FinalTranscript, PartialTranscript, SpeechSegmenter, SpeechStarted
from perception.turn_input import assemble_turn_input
from streaming import wire
from streaming.wire import KIND_AUDIO, Media, SessionConfig

Send = Callable[[wire.ServerEvent], Awaitable[None]]


class Session:
    def __init__(self, config: SessionConfig, segmenter: SpeechSegmenter, describer: SceneDescriber,
                 backend, send: Send):
        self.config = config
        self.segmenter = segmenter
        self.describer = describer
        self.backend = backend  # streaming.backends.ChatBackend or RealtimeBackend
        self.send = send
        self.frames = FrameBuffer()
        self.turn = 0

    async def on_media(self, media: Media) -> None:
        if media.kind == KIND_AUDIO:
            await self.backend.audio(media.payload)
            for event in await self.segmenter.feed(media.payload, media.t_ms):
                await self._on_speech(event)
        elif self.config.camera:
            self.frames.add(media.t_ms, media.payload)

    async def on_turn_end(self) -> None:
        for event in await self.segmenter.end_turn():
            await self._on_speech(event)

    async def _on_speech(self, event) -> None:
        if isinstance(event, SpeechStarted):
            await self.send(wire.SpeechStarted(event.t_ms))
        elif isinstance(event, PartialTranscript):
            await self.send(wire.TranscriptPartial(event.text, event.t_ms))
        elif isinstance(event, FinalTranscript):
            await self._run_turn(event)

    async def _turn_input(self, turn: int, final: FinalTranscript) -> tuple[TurnInput, tuple[bytes, ...]]:
        """The turn's input and the frames it sends as images (context first).

        The turn's frame (and on turn 1 the context frame) is described as text
        for a chat backend, or sent as an image to a realtime one; the authored
        camera text the glasses declared fills a channel without a frame."""
        camera_on = self.config.camera and turn <= 2
        fallback = self.config.fallback_camera.get(str(turn)) if camera_on else None
        frame = context_jpeg = fallback_context = None
        if camera_on:
            chosen = select_frame(list(self.frames.frames), final.start_ms, final.end_ms, self.config.frame_selection)
            frame = chosen.jpeg if chosen is not None else None
            if turn == 1:
                earlier = self.frames.before(final.start_ms)
                context_jpeg = pick_context_frame(earlier, frame) if (frame is not None and earlier) else None
                if context_jpeg is None and not earlier:  # no frame at all before the first words
                    fallback_context = self.config.fallback_context
        authored = TurnInput(turn, fallback or None, "", "authored" if fallback else None, None,
                             fallback_context or None, "authored" if fallback_context else None,
                             {"asr_decode_s": round(final.decode_seconds, 4)})
        if self.backend.describes_frames:
            camera = (await self.describer.describe(frame)).text if frame is not None else None
            context = (await self.describer.describe(context_jpeg)).text if context_jpeg is not None else None
            return assemble_turn_input(authored, perceived_speech=final.text, perceived_camera=camera,
                                       perceived_context=context), ()
        turn_input = assemble_turn_input(
            authored, perceived_speech=final.text, perceived_camera=MEDIA_CAMERA if frame is not None else None,
            perceived_context=MEDIA_CAMERA if context_jpeg is not None else None, source="media")
        return turn_input, tuple(j for j in (context_jpeg, frame) if j is not None)

    async def _run_turn(self, final: FinalTranscript) -> None:
        self.turn += 1
        turn = self.turn
        speech_end = time.monotonic()
        await self.send(wire.TranscriptFinal(turn, final.text, final.start_ms, final.end_ms))
        transcript_at = time.monotonic()
        turn_input, frames = await self._turn_input(turn, final)
        camera_at = time.monotonic()
        await self.send(wire.CameraBlock(turn, turn_input.camera_block, turn_input.camera_source,
                                         turn_input.context_block, turn_input.context_source))
        await self.send(wire.TurnInputEvent(turn, turn_input))
        first_token: list[float] = []
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        def on_delta(piece: str) -> None:
            if not first_token:
                first_token.append(time.monotonic())
            queue.put_nowait(piece)

        async def forward() -> None:  # deltas go out while the reply is still coming
            while (piece := await queue.get()) is not None:
                await self.send(wire.AssistantDelta(turn, piece))

        forwarder = asyncio.create_task(forward())
        asked_at = time.monotonic()
        try:
            reply = await self.backend.answer(turn_input, frames, on_delta)
        finally:
            queue.put_nowait(None)
            await forwarder
        done_at = time.monotonic()
        await self.send(wire.AssistantDone(turn, reply.text, reply.usage.input_tokens, reply.usage.output_tokens,
                                           reply.heard))
        first = first_token[0] if first_token else done_at
        since_speech_end = final.decode_seconds - speech_end  # add a monotonic time: seconds since speech ended
        await self.send(wire.Metrics(turn, {
            "speech_end_to_transcript_final": round(transcript_at + since_speech_end, 4),
            "speech_end_to_camera_block": round(camera_at + since_speech_end, 4),
            "speech_end_to_first_token": round(first + since_speech_end, 4),
            "speech_end_to_first_audio": (None if reply.first_audio_s is None
                                          else round(asked_at + reply.first_audio_s + since_speech_end, 4)),
            "speech_end_to_reply_done": round(done_at + since_speech_end, 4),
            "turn_end_to_first_token": round(first - asked_at, 4)}))

    async def aclose(self) -> None:
        await self.backend.aclose()
