"""A turn prefilled in the silence (issue 59): when the early transcript comes, the session hands the backend
the turn's input as it will be (`Backend.prefill`), so the embedded model evaluates the prompt while the
end-of-turn silence is waited. The prefill asks exactly what the turn then asks, sends and counts no frame,
and describes each frame once."""

from __future__ import annotations

import asyncio

import numpy as np

from core.candidate import GenerationConfig, Reply
from perception.speech import EarlyTranscript, FinalTranscript, SpeechPaused, SpeechStarted
from streaming import wire
from streaming.backends import ChatBackend
from streaming.session import Session
from tests.streaming.test_barge_in import of, until
from tests.streaming.test_chat_backend import Describer


class Segmenter:
    """b"S" starts speech; b"P" the pause (the early decode begun); b"E" is the early transcript; b"F" ends the
    turn on the same clip."""

    in_speech = False

    def __init__(self, early: bool):
        self.early = early

    async def feed(self, pcm16: bytes, t_ms: int) -> list:
        if pcm16 == b"S":
            return [SpeechStarted(t_ms=t_ms)]
        if pcm16 == b"P" and self.early:
            return [SpeechPaused(start_ms=500, end_ms=1500)]
        if pcm16 == b"E" and self.early:
            return [EarlyTranscript(text="What is this?", start_ms=500, end_ms=1500, decode_seconds=0.01)]
        if pcm16 == b"F":
            return [
                FinalTranscript(
                    text="What is this?", start_ms=500, end_ms=1500, decode_seconds=0.01, audio=np.zeros(1, np.float32)
                )
            ]
        return []

    async def end_turn(self) -> list:
        return []


class Warmer:
    """A chat model that keeps what it evaluated (`core.candidate.PromptWarmer`)."""

    model_id, family = "local", "local"

    def __init__(self):
        self.prefilled: list[list[str]] = []
        self.asked: list[list[str]] = []

    async def prefill(self, messages, system):
        self.prefilled.append([m.text for m in messages])

    async def respond(self, messages, system, config, on_delta=None):
        self.asked.append([m.text for m in messages])
        on_delta("It is a mug.")
        return Reply(text="It is a mug.", model=self.model_id)


def one_turn(early: bool, end_of_turn: str = "silence"):
    candidate, describer, events = Warmer(), Describer(), []

    async def go():
        async def send(event):
            events.append(event)

        backend = ChatBackend(candidate, "sys", GenerationConfig(), describer)
        config = wire.SessionConfig(camera=True, end_of_turn=end_of_turn)
        session = Session(config, Segmenter(early), backend, send)
        worker = asyncio.create_task(session.run())
        await session.on_media(wire.Media(kind=wire.KIND_FRAME, t_ms=1000, payload=b"mug"))
        for chunk, t_ms in ((b"S", 500), (b"a", 1500), (b"P", 1600), (b"E", 1800)):
            await session.on_media(wire.Media(kind=wire.KIND_AUDIO, t_ms=t_ms, payload=chunk))
        if early:
            await until(lambda: len(candidate.prefilled) == (3 if end_of_turn == "text" else 1))
        await session.on_media(wire.Media(kind=wire.KIND_AUDIO, t_ms=3000, payload=b"F"))
        await until(lambda: of(events, wire.Metrics, 1))
        worker.cancel()
        await session.aclose()

    asyncio.run(go())
    return candidate, describer, events


def test_the_prefill_asks_what_the_turn_then_asks_and_sends_no_frame_of_its_own():
    candidate, describer, events = one_turn(early=True)
    [turn_input] = of(events, wire.TurnInputEvent, 1)
    assert candidate.prefilled == candidate.asked == [list(turn_input.input.messages())]
    assert "a view of mug" in candidate.asked[0][-1]
    assert describer.seen == [b"mug"]  # described once, for the prefill; the turn took that text
    plain_candidate, _, plain = one_turn(early=False)
    assert plain_candidate.prefilled == [] and plain_candidate.asked == candidate.asked
    [metrics], [plain_metrics] = of(events, wire.Metrics, 1), of(plain, wire.Metrics, 1)
    assert metrics.frames == plain_metrics.frames and metrics.frames.sent == 1  # the turn's frame, counted once


def test_under_the_text_end_of_turn_the_prompt_before_the_words_is_prefilled_as_the_user_speaks():
    """The turn may end as soon as its words are decoded, so the session prefills the turn without them (the
    conversation and its camera block) when the speech starts and again at the pause (the model skips what it
    holds already), then with them; under the fixed silence there is time enough, and it does not."""
    candidate, describer, events = one_turn(early=True, end_of_turn="text")
    [turn_input] = of(events, wire.TurnInputEvent, 1)
    asked = list(turn_input.input.messages())
    at_start, at_pause, with_words = candidate.prefilled
    assert at_start[: len(asked) - 1] == at_pause[:-1] == asked[:-1]  # at the start no frame was sent yet
    assert not any("What is this?" in text for text in at_start)
    assert at_pause[-1] == asked[-1].removesuffix("What is this?") and "a view of mug" in at_pause[-1]
    assert with_words == asked and candidate.asked == [asked]
    assert describer.seen == [b"mug"]
    silence_candidate, _, _ = one_turn(early=True)
    assert silence_candidate.prefilled == [asked]
