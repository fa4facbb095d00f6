"""One connection's pipeline: audio -> VAD -> ASR; frames -> buffer ->
describer; at each end of speech a TurnInput goes to the assistant backend
and its reply streams back. The session only routes: perception does the
work, the backend is a `Candidate`.

Turns are numbered by final transcripts: the first utterance is turn 1, the
second turn 2, the third (the repair) turn 3.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from benchmark.candidates.base import Candidate, GenerationConfig, Message
from benchmark.records import TurnInput
from perception.describers import SceneDescriber
from perception.frames import FrameBuffer, pick_context_frame, select_frame
from perception.speech import FinalTranscript, PartialTranscript, SpeechSegmenter, SpeechStarted
from perception.turn_input import assemble_turn_input
from streaming import wire
from streaming.wire import KIND_AUDIO, Media, SessionConfig

Send = Callable[[wire.ServerEvent], Awaitable[None]]


class Session:
    def __init__(self, config: SessionConfig, segmenter: SpeechSegmenter, describer: SceneDescriber,
                 candidate: Candidate, send: Send):
        self.config = config
        self.segmenter = segmenter
        self.describer = describer
        self.candidate = candidate
        self.send = send
        self.frames = FrameBuffer()
        self.messages: list[Message] = []
        self.turn = 0

    async def on_media(self, media: Media) -> None:
        if media.kind == KIND_AUDIO:
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

    async def _turn_input(self, turn: int, final: FinalTranscript) -> TurnInput:
        """Describe the turn's frame (and on turn 1 the context frame), then apply
        the fallback rule to the authored camera text the glasses declared."""
        camera_on = self.config.camera and turn <= 2
        fallback = self.config.fallback_camera.get(str(turn)) if camera_on else None
        camera = context = fallback_context = None
        if camera_on:
            frame = select_frame(list(self.frames.frames), final.start_ms, final.end_ms, self.config.frame_selection)
            if frame is not None:
                camera = (await self.describer.describe(frame.jpeg)).text
            if turn == 1:
                earlier = self.frames.before(final.start_ms)
                jpeg = pick_context_frame(earlier, frame.jpeg) if (frame is not None and earlier) else None
                if jpeg is not None:
                    context = (await self.describer.describe(jpeg)).text
                elif not earlier:  # no frame at all before the first words
                    fallback_context = self.config.fallback_context
        authored = TurnInput(turn, fallback or None, "", "authored" if fallback else None, None,
                             fallback_context or None, "authored" if fallback_context else None,
                             {"asr_decode_s": round(final.decode_seconds, 4)})
        return assemble_turn_input(authored, perceived_speech=final.text, perceived_camera=camera,
                                   perceived_context=context)

    async def _run_turn(self, final: FinalTranscript) -> None:
        self.turn += 1
        turn = self.turn
        speech_end = time.monotonic()
        await self.send(wire.TranscriptFinal(turn, final.text, final.start_ms, final.end_ms))
        transcript_at = time.monotonic()
        turn_input = await self._turn_input(turn, final)
        camera_at = time.monotonic()
        await self.send(wire.CameraBlock(turn, turn_input.camera_block, turn_input.camera_source,
                                         turn_input.context_block, turn_input.context_source))
        self.messages += [Message("user", text) for text in turn_input.messages()]
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
        try:
            reply = await self.candidate.respond(
                list(self.messages), self.config.system_prompt,
                GenerationConfig(temperature=self.config.temperature, max_tokens=self.config.max_tokens),
                on_delta=on_delta)
        finally:
            queue.put_nowait(None)
            await forwarder
        done_at = time.monotonic()
        self.messages.append(Message("assistant", reply.text))
        await self.send(wire.AssistantDone(turn, reply.text, reply.usage.input_tokens, reply.usage.output_tokens))
        first = first_token[0] if first_token else done_at
        await self.send(wire.Metrics(turn, {
            "speech_end_to_transcript_final": round(transcript_at - speech_end + final.decode_seconds, 4),
            "speech_end_to_camera_block": round(camera_at - speech_end + final.decode_seconds, 4),
            "speech_end_to_first_token": round(first - speech_end + final.decode_seconds, 4),
            "speech_end_to_reply_done": round(done_at - speech_end + final.decode_seconds, 4)}))
