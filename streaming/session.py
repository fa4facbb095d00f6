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
from benchmark.protocol import build_context_message, build_user_turn
from perception.describers import SceneDescriber
from perception.frames import FrameBuffer, pick_context_frame, select_frame
from perception.speech import FinalTranscript, PartialTranscript, SpeechSegmenter, SpeechStarted
from perception.turn_input import TurnInput
from streaming.wire import KIND_AUDIO, Media, SessionConfig

Send = Callable[[dict], Awaitable[None]]


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
        self.first_frame_seen = False

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
            await self.send({"type": "speech.started", "t_ms": event.t_ms})
        elif isinstance(event, PartialTranscript):
            await self.send({"type": "transcript.partial", "text": event.text, "t_ms": event.t_ms})
        elif isinstance(event, FinalTranscript):
            await self._run_turn(event)

    async def _camera(self, turn: int, final: FinalTranscript) -> tuple[str | None, str | None, str | None, str | None]:
        """(camera block, source, context block, context source) for the turn."""
        if not self.config.camera or turn > 2:
            return None, None, None, None
        frame = select_frame(list(self.frames.frames), final.start_ms, final.end_ms, self.config.frame_selection)
        if frame is not None:
            camera = (await self.describer.describe(frame.jpeg)).text
            source = "perceived"
        else:
            camera = self.config.fallback_camera.get(str(turn))
            source = "authored" if camera else None
        context, context_source = None, None
        if turn == 1:
            earlier = self.frames.before(final.start_ms)
            jpeg = pick_context_frame(earlier, frame.jpeg) if (frame is not None and earlier) else None
            if jpeg is not None:
                context, context_source = (await self.describer.describe(jpeg)).text, "perceived"
            elif self.config.fallback_context and not earlier:
                context, context_source = self.config.fallback_context, "authored"
        return camera, source, context, context_source

    async def _run_turn(self, final: FinalTranscript) -> None:
        self.turn += 1
        turn = self.turn
        speech_end = time.monotonic()
        await self.send({"type": "transcript.final", "turn": turn, "text": final.text,
                         "start_ms": final.start_ms, "end_ms": final.end_ms})
        transcript_at = time.monotonic()
        camera, source, context, context_source = await self._camera(turn, final)
        camera_at = time.monotonic()
        turn_input = TurnInput(turn, camera, final.text, source, "perceived", context, context_source,
                               timings={"asr_decode_s": round(final.decode_seconds, 4)})
        await self.send({"type": "camera.block", "turn": turn, "text": camera, "source": source,
                         "context": context, "context_source": context_source})
        if context:
            self.messages.append(Message("user", build_context_message(context)))
        user_message = build_user_turn(camera, final.text)
        self.messages.append(Message("user", user_message))
        await self.send({"type": "turn.input", "turn": turn, "input": turn_input.to_dict(),
                         "user_message": user_message,
                         "context_message": build_context_message(context) if context else None})
        first_token: list[float] = []
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        def on_delta(piece: str) -> None:
            if not first_token:
                first_token.append(time.monotonic())
            queue.put_nowait(piece)

        async def forward() -> None:  # deltas go out while the reply is still coming
            while (piece := await queue.get()) is not None:
                await self.send({"type": "assistant.delta", "turn": turn, "text": piece})

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
        await self.send({"type": "assistant.done", "turn": turn, "text": reply.text,
                         "usage": {"input_tokens": reply.usage.input_tokens,
                                   "output_tokens": reply.usage.output_tokens}})
        first = first_token[0] if first_token else done_at
        await self.send({"type": "metrics", "turn": turn, "latency_s": {
            "speech_end_to_transcript_final": round(transcript_at - speech_end + final.decode_seconds, 4),
            "speech_end_to_camera_block": round(camera_at - speech_end + final.decode_seconds, 4),
            "speech_end_to_first_token": round(first - speech_end + final.decode_seconds, 4),
            "speech_end_to_reply_done": round(done_at - speech_end + final.decode_seconds, 4)}})
