"""Barge-in: the user talks while the assistant is still answering.

The session's worker keeps listening while a reply is generated; with
`barge_in` the new speech interrupts the reply (a chat request is dropped,
OpenAI Realtime gets `response.cancel`, Gemini Live the next activity's
start), the reply ends `interrupted` with the words produced so far, and
the conversation keeps that part. Without it the next turn waits for the
reply, and the backend gets audio in arrival order after the reply.
The adapters run through the real SDKs against tests/fake_realtime.py.
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from candidates import GenerationConfig
from candidates.realtime import open_realtime_session
from core.candidate import Reply
from perception.speech import FinalTranscript, SpeechStarted
from streaming import wire
from streaming.backends import ChatBackend, MediaBackend
from streaming.session import Session
from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime

WORDS = 40
LONG_REPLY = " ".join(f"w{i}" for i in range(WORDS))


class ScriptedSegmenter:
    """Voice activity by script: the chunk b"S" starts speech, b"F<words>" ends it with that transcript."""

    in_speech = False

    async def feed(self, pcm16: bytes, t_ms: int) -> list:
        if pcm16 == b"S":
            return [SpeechStarted(t_ms=t_ms)]
        if pcm16.startswith(b"F"):
            return [
                FinalTranscript(
                    text=pcm16[1:].decode(),
                    start_ms=t_ms - 500,
                    end_ms=t_ms,
                    decode_seconds=0.01,
                    audio=np.zeros(1, np.float32),
                )
            ]
        return []

    async def end_turn(self) -> list:
        return []


class SlowCandidate:
    """A chat model that streams `WORDS` words, one every 20 ms."""

    model_id, family = "slow", "local"

    def __init__(self):
        self.asked: list[list[tuple[str, str]]] = []

    async def respond(self, messages, system, config, on_delta=None):
        self.asked.append([(m.role, m.text) for m in messages])
        pieces = []
        for i in range(WORDS):
            await asyncio.sleep(0.02)
            pieces.append(f"w{i} ")
            on_delta(pieces[-1])
        return Reply(text="".join(pieces), model=self.model_id)


async def until(condition, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.005)


def of(events, kind, turn=None):
    return [e for e in events if isinstance(e, kind) and (turn is None or e.turn == turn)]


async def converse(backend, *, barge_in: bool, second_final_during_reply: bool = False):
    """Turn 1; speech starts again once the reply is under way; turn 2. The events the client got."""
    events: list = []

    async def send(event):
        events.append(event)

    session = Session(wire.SessionConfig(camera=False, barge_in=barge_in), ScriptedSegmenter(), backend, send)
    worker = asyncio.create_task(session.run())

    async def say(chunk: bytes, t_ms: int):
        await session.on_media(wire.Media(kind=wire.KIND_AUDIO, t_ms=t_ms, payload=chunk))

    await say(b"S", 0)
    await say(b"FWhat is this?", 1000)
    await until(lambda: of(events, wire.AssistantDelta, 1))
    await say(b"S", 2000)
    await say(b"a", 2020)
    if not second_final_during_reply:
        await until(lambda: of(events, wire.AssistantDone, 1))
    await say(b"FAnd now?", 3000)
    await until(lambda: of(events, wire.Metrics, 2))
    worker.cancel()
    await session.aclose()
    return events


@pytest.mark.slow
def test_speech_during_a_reply_interrupts_it_and_the_conversation_keeps_what_was_said():
    candidate = SlowCandidate()
    events = asyncio.run(converse(ChatBackend(candidate, "Be brief.", GenerationConfig()), barge_in=True))
    [first] = of(events, wire.AssistantDone, 1)
    [second] = of(events, wire.AssistantDone, 2)
    assert first.interrupted and 0 < len(first.text.split()) < WORDS
    assert not second.interrupted and len(second.text.split()) == WORDS
    # the new speech was seen while the reply was coming, and stopped it
    started = [i for i, e in enumerate(events) if isinstance(e, wire.SpeechStarted)]
    assert started[1] < events.index(first)
    assert candidate.asked[1] == [("user", "What is this?"), ("assistant", first.text), ("user", "And now?")]
    assert json.loads(wire.encode_event(first))["interrupted"] is True
    assert "interrupted" not in json.loads(wire.encode_event(second))  # sent only when true
    assert wire.decode_event(wire.encode_event(first)) == first


@pytest.mark.slow
def test_without_barge_in_the_reply_runs_to_the_end_and_the_next_turn_waits_for_it():
    candidate = SlowCandidate()
    backend = ChatBackend(candidate, "Be brief.", GenerationConfig())
    events = asyncio.run(converse(backend, barge_in=False, second_final_during_reply=True))
    [first] = of(events, wire.AssistantDone, 1)
    assert not first.interrupted and len(first.text.split()) == WORDS
    started = [i for i, e in enumerate(events) if isinstance(e, wire.SpeechStarted)]
    [final2] = of(events, wire.TranscriptFinal, 2)
    # speech is reported as it happens, but turn 2 starts after turn 1's reply and metrics
    assert started[1] < events.index(first) < events.index(of(events, wire.Metrics, 1)[0]) < events.index(final2)
    assert candidate.asked[1][1] == ("assistant", first.text)


class RecordingBackend(MediaBackend):
    """A backend that logs what reaches it, in order; each reply takes 0.2 s."""

    def __init__(self):
        self.log: list[str] = []

    async def audio(self, pcm16: bytes) -> None:
        if not any(pcm16):  # the silence the session puts where the stream's audio skipped time
            self.log.append(f"silence {len(pcm16) // 32} ms")
        else:
            self.log.append(f"audio {pcm16[:1].decode()}")

    async def frame(self, t_ms: int, jpeg: bytes) -> None:
        self.log.append(f"frame {t_ms}")

    async def answer(self, turn_input, on_delta, on_audio) -> Reply:
        self.log.append(f"answer {turn_input.turn}")
        on_delta("Fine.")
        await asyncio.sleep(0.2)
        self.log.append(f"answered {turn_input.turn}")
        return Reply(text="Fine.", model="recording")

    async def interrupt(self) -> None:
        self.log.append("interrupt")

    async def reply_cut(self, turn: int, played_ms: int) -> None:
        self.log.append(f"cut {turn} {played_ms}")

    async def aclose(self) -> None:
        return None


def test_audio_frames_and_a_reply_cut_that_arrive_during_a_reply_reach_the_backend_after_it_in_order():
    async def go():
        backend = RecordingBackend()
        session = Session(
            wire.SessionConfig(camera=True, barge_in=False),
            ScriptedSegmenter(),
            backend,
            send=lambda event: asyncio.sleep(0),
        )
        worker = asyncio.create_task(session.run())
        for kind, t_ms, payload in (
            (wire.KIND_AUDIO, 0, b"S"),
            (wire.KIND_AUDIO, 900, b"Fone"),
            (wire.KIND_AUDIO, 1000, b"x"),
            (wire.KIND_FRAME, 2000, b"\xff\xd8"),
            (wire.KIND_AUDIO, 2020, b"y"),
        ):  # the frame on the default policy's slot
            await session.on_media(wire.Media(kind=kind, t_ms=t_ms, payload=payload))
        await session.on_reply_cut(1, 700)  # the client stopped playing turn 1's reply
        await until(lambda: "answered 1" in backend.log and not session.busy)
        worker.cancel()
        await session.aclose()
        return backend.log

    log = asyncio.run(go())
    # these one-byte chunks last no time, so the stream time between them reaches the backend as silence
    assert log == [
        "audio S",
        "silence 900 ms",
        "audio F",
        "answer 1",
        "answered 1",
        "silence 100 ms",
        "audio x",
        "frame 2000",
        "silence 1020 ms",
        "audio y",
        "cut 1 700",
    ]


def _interrupt_after_first_words(session, first_audio: bytes):
    """Turn 1 asked and cut off at its first words; turn 2 asked and answered in full."""

    async def go():
        heard = asyncio.Event()
        await session.send_audio(first_audio)
        reply = asyncio.create_task(session.respond(audio_turn=True, on_delta=lambda piece: heard.set()))
        await heard.wait()
        await session.interrupt()
        cut = await reply
        await session.send_audio(first_audio)
        full = await session.respond(audio_turn=True)
        await session.aclose()
        return cut, full

    return go()


@pytest.mark.slow
def test_openai_realtime_barge_in_cancels_the_response_and_a_late_cancel_is_not_the_next_turns_error(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    with FakeOpenAIRealtime(reply=LONG_REPLY, word_delay_s=0.02) as server:

        async def go():
            session = await open_realtime_session(
                "openai-realtime:x",
                "Be brief.",
                base_url=server.base_url,
                streaming_input=True,
                config=GenerationConfig(),
            )
            cut, full = await _interrupt_after_first_words(session, b"\x01\x00" * 4800)
            return cut, full

        async def late_cancel():
            session = await open_realtime_session(
                "openai-realtime:x",
                "Be brief.",
                base_url=server.base_url,
                streaming_input=True,
                config=GenerationConfig(),
            )
            await session.interrupt()  # no response running: nothing is sent
            await session.connection.send({"type": "response.cancel"})  # one that crossed a response.done
            await session.send_audio(b"\x01\x00" * 4800)
            reply = await session.respond(audio_turn=True)
            await session.aclose()
            return reply

        cut, full = asyncio.run(go())
        after_late_cancel = asyncio.run(late_cancel())
    assert server.problems == []
    assert cut.interrupted and 0 < len(cut.text.split()) < WORDS
    assert not full.interrupted and full.text == LONG_REPLY
    assert server.sessions[0]["events"].count("response.cancel") == 1
    assert server.sessions[1]["events"].count("response.cancel") == 1
    assert after_late_cancel.text == LONG_REPLY and not after_late_cancel.interrupted


@pytest.mark.slow
def test_gemini_live_barge_in_opens_the_next_activity_which_cuts_the_reply_off(gemini_env):
    with gemini_env(reply=LONG_REPLY, word_delay_s=0.02) as server:

        async def go():
            session = await open_realtime_session(
                "gemini-live:x", "Be brief.", base_url=server.base_url, streaming_input=True, config=GenerationConfig()
            )
            return await _interrupt_after_first_words(session, b"\x01\x00" * 3200)

        cut, full = asyncio.run(go())
    assert server.problems == []
    assert cut.interrupted and 0 < len(cut.text.split()) < WORDS
    assert not full.interrupted and full.text == LONG_REPLY
    # the interruption was the start of turn 2's activity: no second start for its audio
    assert server.sessions[0]["activity"] == ["start", "end", "start", "end"]


def test_barge_in_is_a_boolean_of_the_hello_and_off_by_default():
    assert wire.SessionConfig().barge_in is False
    assert wire.SessionConfig.from_dict({"barge_in": True}).barge_in is True
    with pytest.raises(wire.WireError, match="barge_in must be true or false") as info:
        wire.SessionConfig.from_dict({"barge_in": "yes"})
    assert info.value.code == "bad_hello"


def test_a_reply_cut_names_a_turn_and_whole_milliseconds():
    assert wire.read_reply_cut(wire.decode_message(wire.encode_message("reply.cut", turn=2, played_ms=1500))) == (
        2,
        1500,
    )
    for turn, played_ms, field in (
        (0, 10, "turn"),
        ("1", 10, "turn"),
        (True, 10, "turn"),
        (1, -5, "played_ms"),
        (1, 2.5, "played_ms"),
        (1, None, "played_ms"),
    ):
        with pytest.raises(wire.WireError, match=f"'{field}' must be") as info:
            wire.read_reply_cut({"type": "reply.cut", "turn": turn, "played_ms": played_ms})
        assert info.value.code == "bad_message"


def test_openai_realtime_truncates_a_spoken_reply_to_what_was_heard(monkeypatch):
    """Through the backend: each turn's spoken reply is truncated by its own item, to at most its length."""
    from core.records import TurnInput
    from streaming.backends import RealtimeBackend

    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    speech = b"\x10\x00" * 24000  # 1 s of reply audio at 24 kHz, over the reply's words
    with FakeOpenAIRealtime(reply="It is the red one.", speech=speech) as server:

        async def go():
            backend = await RealtimeBackend.open(
                "openai-realtime:x", "Be brief.", GenerationConfig(), base_url=server.base_url, output="audio"
            )
            for turn in (1, 2):
                await backend.audio(b"\x01\x00" * 3200)
                await backend.answer(
                    TurnInput(turn=turn, camera_block=None, speech="", camera_source=None, speech_source=None),
                    print,
                    lambda pcm: None,
                )
            await backend.reply_cut(2, 400)
            await backend.reply_cut(1, 60_000)  # an earlier turn, cut when the next reply came: its length
            await backend.reply_cut(7, 100)  # a turn never answered: nothing to cut
            await backend.live.session.truncate("an-item-the-api-never-gave", 100)  # refused: not the next turn's error
            await backend.audio(b"\x01\x00" * 3200)
            reply = await backend.answer(
                TurnInput(turn=3, camera_block=None, speech="", camera_source=None, speech_source=None),
                print,
                lambda pcm: None,
            )
            await backend.aclose()
            return reply

        reply = asyncio.run(go())
    assert server.problems == []
    assert reply.text == "It is the red one." and not reply.interrupted
    assert server.sessions[0]["truncations"] == [("item_reply_2", 0, 400), ("item_reply_1", 0, 1000)]


def test_a_text_reply_has_nothing_to_truncate(monkeypatch):
    from core.records import TurnInput
    from streaming.backends import RealtimeBackend

    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    with FakeOpenAIRealtime() as server:

        async def go():
            backend = await RealtimeBackend.open(
                "openai-realtime:x", "Be brief.", GenerationConfig(), base_url=server.base_url
            )
            await backend.audio(b"\x01\x00" * 3200)
            await backend.answer(
                TurnInput(turn=1, camera_block=None, speech="", camera_source=None, speech_source=None), print, print
            )
            await backend.reply_cut(1, 400)
            await backend.aclose()

        asyncio.run(go())
    assert "conversation.item.truncate" not in server.sessions[0]["events"]


def test_barge_in_on_the_real_local_model_drops_its_request_and_the_next_turn_is_answered(local_llama_url):
    """The real llama.cpp server with the bundled SmolLM2, through the OpenAI SDK: the streamed
    request is dropped at the first words, and the same server answers the next turn in full."""
    from candidates.openai_chat import OpenAIChatCandidate

    async def go():
        candidate = OpenAIChatCandidate("smollm2", base_url=local_llama_url, api_key="x")
        backend = ChatBackend(candidate, "Answer in three long paragraphs.", GenerationConfig(max_tokens=200))
        events = await converse(backend, barge_in=True)
        await candidate.aclose()
        return events, backend.messages

    events, messages = asyncio.run(go())
    [first] = of(events, wire.AssistantDone, 1)
    [second] = of(events, wire.AssistantDone, 2)
    assert first.interrupted and first.text.strip()
    assert not second.interrupted and second.text.strip()
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[1].text == first.text
