"""The assistant behind a streaming session: the `Backend` protocol and its two kinds.

- `ChatBackend`: a chat `Candidate` behind perception. It hears the
  transcript only, and sees the frames as text: it holds the session's
  scene describer, describes the turn's frames for the turn's camera blocks
  and the newest frame for a probe, and keeps the conversation's message
  list. By default it gets the frame at the end of speech only (`end`).
- `RealtimeBackend` (a `MediaBackend`): a streaming multimodal API (OpenAI
  Realtime, Gemini Live), through the conversation's `LiveConversation`. It
  gets the user's audio as it arrives (resampled to the API's rate), the
  camera frames the session's frame policy lets through as they pass it (as
  glasses stream video to these APIs; one a second by default), and the
  authored camera text as a text part for a turn without frames; the
  session tells it when the turn ended. With `output="audio"` the API speaks
  its reply; the pieces go to `on_audio` as they arrive. A lost session is
  replaced by the `LiveConversation` (`candidates.realtime`), where the API
  can be told the turns so far.

The session only routes, the same way for every backend: it calls `audio`
for every chunk, `speech_started` when voice activity hears the user begin
to speak (outside a reply), and `frame` for every frame its policy sends,
then at the end of each turn `perceive` (the turn's input, with the frames it chose for
the turn) and `answer`; in a proactive session `probe` when one is due. It
calls `interrupt` when the user talks over the reply `answer` is producing
(barge-in): `answer` then returns early with what was produced so far,
marked `interrupted`, and the conversation keeps that part. When the client
stopped playing a spoken reply early, `reply_cut` says how much of it the
user heard. What a backend declares is data: the frame policy of a session
that names none (`default_policy`), and why it cannot follow a proactive
strategy (`proactive_refusal`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import ClassVar, Protocol

from candidates.realtime import LiveConversation, open_realtime_session
from candidates.realtime_base import UserPart
from core.candidate import REPLY_AUDIO_RATE, Candidate, GenerationConfig, Message, PromptWarmer, Reply
from core.records import MEDIA_CAMERA, TurnInput, build_context_message, build_probe_message
from media_effects.audio import SAMPLE_RATE, resample_pcm16
from perception.describers import SceneDescriber
from perception.frame_policy import FramePolicy
from perception.turn_input import assemble_turn_input
from streaming.proactive import Strategy


class Backend(Protocol):
    """What a server session talks to."""

    default_policy: ClassVar[FramePolicy]  # the frame policy of a session that names none
    probe_camera: str | None  # the camera text the last probe was given (None: the API had the frames)

    def proactive_refusal(self, strategy: Strategy) -> str | None:
        """None when this backend can follow a proactive session's `strategy`, else why not (one line)."""

    async def audio(self, pcm16: bytes) -> None:
        """A chunk of the user's audio, PCM16 mono 16 kHz, as it arrives."""

    async def speech_started(self) -> None:
        """Voice activity heard the user begin to speak (the audio of it has been handed over)."""

    async def frame(self, t_ms: int, jpeg: bytes) -> None:
        """A camera frame the policy sent, at stream time `t_ms`, as sent."""

    async def perceive(self, authored: TurnInput, speech: str, frame: bytes | None, context: bytes | None) -> TurnInput:
        """The turn's input: `authored` with the transcript and the turn's frame (and on turn 1 the
        context frame) the session chose from the frames sent, as this backend takes them."""

    async def prefill(self, turn_input: TurnInput) -> None:
        """The turn will be `turn_input` if it ends on the silence now being waited: get ready to answer it."""

    async def answer(
        self, turn_input: TurnInput, on_delta: Callable[[str], None], on_audio: Callable[[bytes], None]
    ) -> Reply:
        """The user's turn ended: reply, passing text and audio pieces on as they come."""

    async def probe(self, on_delta: Callable[[str], None], on_audio: Callable[[bytes], None]) -> Reply:
        """Nobody spoke: does something in view (the frames sent so far) need saying? (a proactive
        session). The reply is a remark or the silence marker."""

    async def interrupt(self) -> None:
        """The user talks over the reply `answer` is producing: end it early."""

    async def reply_cut(self, turn: int, played_ms: int) -> None:
        """The client stopped playing `turn`'s spoken reply after `played_ms`."""

    async def aclose(self) -> None: ...


NATIVE_NEEDS_REALTIME = (
    "proactive 'native' needs a realtime API: a chat model never speaks unasked (use change or every:N)"
)


class ChatBackend:
    """A chat model: the transcript, and the frames described as text by the scene describer."""

    default_policy: ClassVar[FramePolicy] = FramePolicy(kind="end")  # the frame at the end of speech, described

    def __init__(
        self, candidate: Candidate, system: str, config: GenerationConfig, describer: SceneDescriber | None = None
    ):
        self.candidate, self.system, self.config = candidate, system, config
        self.describer = describer  # None only for a session without a camera
        self.messages: list[Message] = []
        self._newest: bytes | None = None  # the newest frame sent, described for a probe
        self.probe_camera: str | None = None
        self._reply: asyncio.Task | None = None  # the request `answer` is waiting on
        self._described: dict[bytes, str] = {}  # the last two frames described, and their text

    def proactive_refusal(self, strategy: Strategy) -> str | None:
        return NATIVE_NEEDS_REALTIME if strategy.kind == "native" else None

    async def audio(self, pcm16: bytes) -> None:
        return None  # a chat model hears only the transcript

    async def speech_started(self) -> None:
        return None

    async def frame(self, t_ms: int, jpeg: bytes) -> None:
        self._newest = jpeg

    async def perceive(self, authored: TurnInput, speech: str, frame: bytes | None, context: bytes | None) -> TurnInput:
        """The turn's frames described: the camera blocks are the describer's text."""
        camera = await self._describe(frame)
        context_block = await self._describe(context)
        return assemble_turn_input(
            authored, perceived_speech=speech, perceived_camera=camera, perceived_context=context_block
        )

    async def _describe(self, jpeg: bytes | None) -> str | None:
        if jpeg is None:
            return None
        if self.describer is None:
            raise RuntimeError("a chat backend got a frame to describe but has no scene describer")
        if jpeg not in self._described:  # a turn foreseen (`prefill`) described the turn's frames already
            self._described = {
                **dict(list(self._described.items())[-1:]),
                jpeg: (await self.describer.describe(jpeg)).text,
            }
        return self._described[jpeg]

    async def prefill(self, turn_input: TurnInput) -> None:
        """A model that keeps what it evaluated (`PromptWarmer`) evaluates the conversation with this turn
        added, so `answer` starts at once when the turn is this one; other models are not asked."""
        if isinstance(self.candidate, PromptWarmer):
            messages = self.messages + [Message(role="user", text=text) for text in turn_input.messages()]
            await self.candidate.prefill(messages, self.system)

    async def answer(
        self, turn_input: TurnInput, on_delta: Callable[[str], None], on_audio: Callable[[bytes], None]
    ) -> Reply:
        return await self._ask(turn_input.messages(), on_delta)

    async def probe(self, on_delta: Callable[[str], None], on_audio: Callable[[bytes], None]) -> Reply:
        """The probe cue with the newest frame sent, described."""
        self.probe_camera = await self._describe(self._newest)
        return await self._ask([build_probe_message(self.probe_camera)], on_delta, replace(self.config, probe=True))

    async def _ask(
        self, texts: list[str], on_delta: Callable[[str], None], config: GenerationConfig | None = None
    ) -> Reply:
        """The user messages added to the conversation, and the model's reply to it all (asked with `config`,
        the session's by default)."""
        self.messages += [Message(role="user", text=text) for text in texts]
        pieces: list[str] = []

        def keep(piece: str) -> None:
            pieces.append(piece)
            on_delta(piece)

        asked = self.candidate.respond(list(self.messages), self.system, config or self.config, on_delta=keep)
        self._reply = asyncio.ensure_future(asked)
        try:
            reply = await self._reply
        except asyncio.CancelledError:
            task = asyncio.current_task()  # (a coroutine always runs in one)
            if task is None or task.cancelling():  # the session itself is closing, not a barge-in
                raise
            reply = Reply(text="".join(pieces), model=self.candidate.model_id, interrupted=True)
        finally:
            self._reply = None
        self.messages.append(Message(role="assistant", text=reply.text))
        return reply

    async def interrupt(self) -> None:
        if self._reply is not None:
            self._reply.cancel()  # the request is dropped; the words streamed so far stay the reply

    async def reply_cut(self, turn: int, played_ms: int) -> None:
        return None  # a chat model's replies are text: nothing was spoken

    async def aclose(self) -> None:
        return None  # the candidate is shared by every session; the app closes it


class MediaBackend:
    """A backend that takes the media itself: the frames as the policy sends them (one a second
    by default), so a turn's input records its camera as `media` and a probe is the cue alone."""

    default_policy: ClassVar[FramePolicy] = FramePolicy(kind="fps", rate=1.0)
    probe_camera: str | None = None  # a probe is the cue alone: the API had the frames

    def proactive_refusal(self, strategy: Strategy) -> str | None:
        return None

    async def speech_started(self) -> None:
        return None  # the audio went as it came

    async def prefill(self, turn_input: TurnInput) -> None:
        return None  # the API has had the audio and frames as they came

    async def perceive(self, authored: TurnInput, speech: str, frame: bytes | None, context: bytes | None) -> TurnInput:
        """The frames went as they passed (`frame`): the record says `media` where one was chosen."""
        return assemble_turn_input(
            authored,
            perceived_speech=speech,
            perceived_camera=MEDIA_CAMERA if frame is not None else None,
            perceived_context=MEDIA_CAMERA if context is not None else None,
            source="media",
        )


class RealtimeBackend(MediaBackend):
    """A realtime API behind the glasses: a thin user of the conversation's `LiveConversation`."""

    def __init__(self, live: LiveConversation):
        self.live = live
        self.model_id = live.model_id
        self.frames_sent = 0
        self.spoken: dict[int, tuple[str, int]] = {}  # turn -> its spoken reply's API item id and length (ms)

    @classmethod
    async def open(
        cls, model_id: str, system: str, config: GenerationConfig, *, base_url: str | None = None, output: str = "text"
    ) -> RealtimeBackend:
        live = LiveConversation(
            lambda: open_realtime_session(
                model_id, system, base_url=base_url, streaming_input=True, output=output, config=config
            ),
            model_id,
        )
        await live.start()
        return cls(live)

    async def audio(self, pcm16: bytes) -> None:
        await self.live.send_audio(resample_pcm16(pcm16, SAMPLE_RATE, self.live.input_rate))

    async def speech_started(self) -> None:
        await self.live.speech_started()

    async def frame(self, t_ms: int, jpeg: bytes) -> None:
        await self.live.send_frame(jpeg)
        self.frames_sent += 1

    async def answer(
        self, turn_input: TurnInput, on_delta: Callable[[str], None], on_audio: Callable[[bytes], None]
    ) -> Reply:
        """The frames went as they arrived (`frame`); a channel without one goes as its authored text.
        A new session is later told this turn as its words (that text, then the transcript) and its
        last frame."""
        texts = [
            build_context_message(block)
            for block, source in (
                (turn_input.context_block, turn_input.context_source),
                (turn_input.camera_block, turn_input.camera_source),
            )
            if block and source == "authored"
        ]
        frame = self.live.last_frame
        told = UserPart(text="\n".join([*texts, turn_input.speech or ""]).strip(), images=(frame,) if frame else ())
        reply = await self.live.answer(
            tuple(UserPart(text=text) for text in texts),
            audio_turn=True,
            told=(told,),
            on_delta=on_delta,
            on_audio=on_audio,
        )
        if reply.item is not None:
            self.spoken[turn_input.turn] = (reply.item, len(reply.audio) * 1000 // (2 * REPLY_AUDIO_RATE))
        return replace(reply, model=self.model_id, audio=b"", item=None)  # the audio went out through on_audio

    async def probe(self, on_delta: Callable[[str], None], on_audio: Callable[[bytes], None]) -> Reply:
        """The API has the frames: the probe is the cue alone, a text turn of its own."""
        cue = (UserPart(text=build_probe_message(None)),)
        reply = await self.live.answer(cue, audio_turn=False, on_delta=on_delta, on_audio=on_audio)
        return replace(reply, model=self.model_id, audio=b"", item=None, heard=None, transcription=None)

    async def interrupt(self) -> None:
        await self.live.interrupt()

    async def reply_cut(self, turn: int, played_ms: int) -> None:
        """Truncate that turn's spoken reply at the API, to at most its length. A cut that comes
        after a later reply was asked (the next reply's audio stopped it) still corrects the
        conversation for the turns after."""
        if turn in self.spoken:
            item, length_ms = self.spoken[turn]
            await self.live.truncate(item, min(played_ms, length_ms))

    async def aclose(self) -> None:
        await self.live.aclose()
