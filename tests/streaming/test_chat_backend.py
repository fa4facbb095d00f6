"""The session's two kinds of backend, each taking the frames the policy sends the same way:
a chat backend turns them into camera blocks itself (the turn's chosen frames described, the
newest frame for a probe), a media backend records them as `media`; what each declares is
data (its default frame policy, the proactive strategies it refuses)."""

from __future__ import annotations

import asyncio

from core.candidate import GenerationConfig, Reply
from core.records import MEDIA_CAMERA, PROBE_CUE, TurnInput, build_context_message
from perception.describers import Description
from streaming.backends import ChatBackend, MediaBackend
from streaming.proactive import parse_strategy
from streaming.session import default_policy


class Describer:
    name, model = "fake", "fake"

    def __init__(self):
        self.seen: list[bytes] = []

    async def describe(self, jpeg: bytes, previous: bytes | None = None) -> Description:
        self.seen.append(jpeg)
        return Description(
            text=f"a view of {jpeg.decode()}", describer=self.name, model=self.model, cached=False, seconds=0.0
        )


class Candidate:
    model_id, family = "chat", "local"

    def __init__(self):
        self.asked: list[list[str]] = []
        self.configs: list[GenerationConfig] = []

    async def respond(self, messages, system, config, on_delta=None):
        self.asked.append([m.text for m in messages])
        self.configs.append(config)
        return Reply(text="[silent]", model=self.model_id)


def authored(turn: int) -> TurnInput:
    return TurnInput(
        turn=turn,
        camera_block="authored camera",
        speech="authored words",
        camera_source="authored",
        speech_source="authored",
        context_block=None,
        context_source=None,
        timings={},
    )


def test_a_chat_backend_describes_the_turn_s_frames_and_for_a_probe_the_newest_it_got():
    async def go():
        describer, candidate = Describer(), Candidate()
        backend = ChatBackend(candidate, "sys", GenerationConfig(), describer)
        for t_ms, jpeg in ((0, b"A"), (1000, b"B"), (2000, b"C")):
            await backend.frame(t_ms, jpeg)
        turn_input = await backend.perceive(authored(1), "what is this", b"B", b"A")
        await backend.probe(lambda piece: None, lambda pcm: None)
        return describer.seen, candidate.asked, turn_input

    seen, asked, turn_input = asyncio.run(go())
    assert seen == [b"B", b"A", b"C"]  # the turn's frame, its context frame; then the newest for the probe
    assert (turn_input.camera_block, turn_input.camera_source) == ("a view of B", "perceived")
    assert (turn_input.context_block, turn_input.context_source) == ("a view of A", "perceived")
    assert turn_input.speech == "what is this" and turn_input.speech_source == "perceived"
    assert asked[-1][-1] == build_context_message("a view of C")


def test_a_media_backend_records_the_frames_as_media_and_without_one_the_authored_text_stays():
    async def go():
        backend = MediaBackend()
        return (
            await backend.perceive(authored(1), "what is this", b"B", None),
            await backend.perceive(authored(2), "and this", None, None),
        )

    with_frame, without = asyncio.run(go())
    assert (with_frame.camera_block, with_frame.camera_source, with_frame.speech_source) == (
        MEDIA_CAMERA,
        "media",
        "media",
    )
    assert (without.camera_block, without.camera_source) == ("authored camera", "authored")


def test_a_chat_backend_without_frames_probes_with_the_cue_alone_and_describes_nothing():
    async def go():
        describer, candidate = Describer(), Candidate()
        backend = ChatBackend(candidate, "sys", GenerationConfig(), describer)
        turn_input = await backend.perceive(authored(3), "the repair", None, None)
        await backend.probe(lambda piece: None, lambda pcm: None)
        return describer.seen, candidate.asked, turn_input

    seen, asked, turn_input = asyncio.run(go())
    assert seen == [] and asked[-1][-1] == PROBE_CUE and turn_input.camera_source == "authored"


def test_what_a_backend_declares_is_its_default_policy_and_the_strategies_it_refuses():
    chat, media = ChatBackend(Candidate(), "", GenerationConfig()), MediaBackend()
    assert default_policy(chat).name == "end" and default_policy(media).name == "fps:1"
    assert default_policy(chat, proactive=True).name == "fps:1"
    assert "needs a realtime API" in chat.proactive_refusal(parse_strategy("native"))
    assert chat.proactive_refusal(parse_strategy("change")) is None
    assert media.proactive_refusal(parse_strategy("native")) is None


def test_a_chat_backend_asks_a_probe_marked_as_one_with_the_session_s_settings():
    """The mark the embedded model places requests by (`candidates.local.LocalModel`)."""

    async def go():
        candidate = Candidate()
        backend = ChatBackend(candidate, "sys", GenerationConfig(max_tokens=123), Describer())
        await backend.answer(authored(1), lambda piece: None, lambda pcm: None)
        await backend.probe(lambda piece: None, lambda pcm: None)
        await backend.answer(authored(2), lambda piece: None, lambda pcm: None)
        return candidate.configs

    configs = asyncio.run(go())
    assert [(config.probe, config.max_tokens) for config in configs] == [(False, 123), (True, 123), (False, 123)]
