"""The assistant behind a streaming session: one seam, two kinds.

- `ChatBackend`: a chat `Candidate` behind perception. It needs the camera
  blocks as text (`describes_frames`), gets the turn's messages, and keeps
  the conversation's message list.
- `RealtimeBackend`: a streaming multimodal API (OpenAI Realtime, Gemini
  Live). It gets the user's audio as it arrives (resampled to the API's
  rate), the turn's frames as images, and the authored camera text as a text
  part for a turn without frames; the session tells it when the turn ended. With `output="audio"` the API
  speaks its reply; the pieces go to `on_audio` as they arrive.

The session only routes: it calls `audio` for every chunk, then `answer` at
the end of each turn, and never asks which kind it has.
"""

from __future__ import annotations

from collections.abc import Callable

from benchmark.candidates.base import Candidate, GenerationConfig, Message, Reply
from benchmark.records import TurnInput, build_context_message
from perception.audio import SAMPLE_RATE, resample_pcm16


class ChatBackend:
    describes_frames = True

    def __init__(self, candidate: Candidate, system: str, config: GenerationConfig):
        self.candidate, self.system, self.config = candidate, system, config
        self.messages: list[Message] = []

    async def audio(self, pcm16: bytes) -> None:
        return None  # a chat model hears only the transcript

    async def answer(self, turn_input: TurnInput, frames: tuple[bytes, ...], on_delta: Callable[[str], None],
                     on_audio: Callable[[bytes], None]) -> Reply:
        self.messages += [Message("user", text) for text in turn_input.messages()]
        reply = await self.candidate.respond(list(self.messages), self.system, self.config, on_delta=on_delta)
        self.messages.append(Message("assistant", reply.text))
        return reply

    async def aclose(self) -> None:
        return None  # the candidate is shared by every session; the app closes it


class RealtimeBackend:
    describes_frames = False

    def __init__(self, session, model_id: str):
        self.session, self.model_id = session, model_id

    @classmethod
    async def open(cls, model_id: str, system: str, config: GenerationConfig, *, base_url: str | None = None,
                   output: str = "text"):
        from benchmark.candidates.realtime import open_realtime_session

        session = await open_realtime_session(model_id, system, base_url=base_url, streaming_input=True,
                                              output=output, config=config)
        return cls(session, model_id)

    async def audio(self, pcm16: bytes) -> None:
        await self.session.send_audio(resample_pcm16(pcm16, SAMPLE_RATE, self.session.input_rate))

    async def answer(self, turn_input: TurnInput, frames: tuple[bytes, ...], on_delta: Callable[[str], None],
                     on_audio: Callable[[bytes], None]) -> Reply:
        """Frames go as images; a channel without one goes as its authored text."""
        texts = [build_context_message(block) for block, source in (
            (turn_input.context_block, turn_input.context_source),
            (turn_input.camera_block, turn_input.camera_source)) if block and source == "authored"]
        for text in texts:
            await self.session.send_user(text)
        if frames:
            await self.session.send_user(None, frames)
        reply = await self.session.respond(audio_turn=True, on_delta=on_delta, on_audio=on_audio)
        return Reply(reply.text, self.model_id, reply.usage, reply.done_s, reply.first_text_s,
                     reply.first_audio_s, reply.heard)

    async def aclose(self) -> None:
        await self.session.aclose()
