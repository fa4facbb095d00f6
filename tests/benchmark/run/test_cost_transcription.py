"""A realtime API's input transcription, billed apart from the reply: its
usage read from either documented shape (tokens, or seconds of audio),
matched to the turn by the OpenAI Realtime adapter, carried on the wire and
in the record, and priced by the transcription model's own entry (a model
with no price, or a usage that never came, makes the cost unknown, never
0). The stream run that checks summary.json's cost against the server's
usage is in tests/benchmark/run/test_cost_runs.py."""

from __future__ import annotations

import asyncio

import pytest

from benchmark.cost.prices import Price, Spend, price_table, transcription_cost
from candidates.model_ids import transcription_model
from candidates.openai_realtime import TRANSCRIBE_MODEL
from candidates.realtime import open_realtime_session
from candidates.usage import openai_transcription_usage
from core.candidate import Reply, TranscriptionUsage, UsageError
from core.records import TurnInput, TurnResult
from streaming import wire
from tests.fake_realtime import OPENAI_RATE, TEST_KEY, TRANSCRIBE_USAGE, FakeOpenAIRealtime

MODEL = "openai:gpt-4o-mini-transcribe"
PRICE = Price(
    model=MODEL,
    rates={"text_input": 1.0, "text_output": 4.0, "audio_input": 2.0, "audio_minute": 0.006},
    date="d",
    source="s",
)


def test_both_documented_shapes_are_read_and_anything_else_is_not_reported():
    tokens = openai_transcription_usage(TRANSCRIBE_USAGE["tokens"](2500), MODEL)
    assert tokens == TranscriptionUsage(
        model=MODEL, input_tokens=29, output_tokens=8, input_audio_tokens=25, input_text_tokens=4
    )  # 2.5 s: 25 audio tokens and 4 of prompt text
    assert openai_transcription_usage(TRANSCRIBE_USAGE["duration"](2500), MODEL) == TranscriptionUsage(
        model=MODEL, seconds=2.5
    )
    # the split settled by the total when one part is missing; unknown when both are
    assert (
        openai_transcription_usage(
            {"type": "tokens", "input_tokens": 10, "output_tokens": 2, "input_token_details": {"audio_tokens": 7}},
            MODEL,
        ).input_text_tokens
        == 3
    )
    assert (
        openai_transcription_usage({"type": "tokens", "input_tokens": 10, "output_tokens": 2}, MODEL).input_audio_tokens
        is None
    )
    for odd in (None, {}, {"type": "duration", "seconds": "2"}, {"type": "tokens", "input_tokens": -1}):
        assert openai_transcription_usage(odd, MODEL).reported is False, odd


def test_a_transcription_is_priced_by_its_own_entry_and_unknown_is_never_zero():
    tokens = TranscriptionUsage(
        model=MODEL, input_tokens=100, output_tokens=20, input_audio_tokens=90, input_text_tokens=10
    )
    assert transcription_cost(tokens, PRICE, MODEL).usd == pytest.approx((90 * 2.0 + 10 * 1.0 + 20 * 4.0) / 1e6)
    assert transcription_cost(TranscriptionUsage(model=MODEL, seconds=90), PRICE, MODEL).usd == pytest.approx(0.009)
    both = tokens + TranscriptionUsage(model=MODEL, seconds=30)  # a turn transcribed twice, once of each shape
    assert transcription_cost(both, PRICE, MODEL).usd == pytest.approx(0.00027 + 0.003)
    assert transcription_cost(None, PRICE, MODEL).usd == 0  # nothing transcribed apart
    unknown = [
        transcription_cost(tokens, None, MODEL),
        transcription_cost(TranscriptionUsage(model=MODEL, reported=False), PRICE, MODEL),
        transcription_cost(
            TranscriptionUsage(model=MODEL, seconds=3),
            Price(model=MODEL, rates={"audio_input": 2.0}, date="d", source="s"),
            MODEL,
        ),
        transcription_cost(
            TranscriptionUsage(
                model=MODEL, input_tokens=10, output_tokens=0, input_audio_tokens=None, input_text_tokens=None
            ),
            PRICE,
            MODEL,
        ),
    ]  # split unknown
    assert all(cost.usd is None and cost.why for cost in unknown), unknown
    assert "no price for openai:gpt-4o-mini-transcribe" in unknown[0].why[0]
    spend = Spend(table=price_table())
    spend.add(MODEL, TranscriptionUsage(model=MODEL, reported=False))  # --budget: an unknown cost stops the run
    assert spend.unknown and spend.usd == 0


def test_the_shipped_table_prices_the_adapters_transcription_model_both_ways():
    assert transcription_model("openai-realtime:gpt-realtime-1.5") == f"openai:{TRANSCRIBE_MODEL}" == MODEL
    assert transcription_model("gemini-live:gemini-3.8-live") is None and transcription_model("openai:x") is None
    price = price_table().get(MODEL)
    assert {"audio_input", "text_input", "text_output", "audio_minute"} <= set(price.rates)
    assert price.date and price.source and not price.free
    assert (
        transcription_cost(TranscriptionUsage(model=MODEL, seconds=60), price, MODEL).usd == price.rates["audio_minute"]
    )


def test_the_json_form_round_trips_on_the_wire_and_in_a_record_and_names_bad_fields():
    usage = TranscriptionUsage(
        model=MODEL,
        input_tokens=29,
        output_tokens=8,
        input_audio_tokens=25,
        input_text_tokens=None,
        seconds=0.0,
        reported=True,
    )
    assert TranscriptionUsage.from_json(usage.to_json()) == usage
    with pytest.raises(UsageError) as info:
        TranscriptionUsage.from_json({"model": "", "input_tokens": -1, "seconds": "2", "reported": 1, "x": 0})
    assert len(info.value.problems) == 5
    done = wire.AssistantDone(turn=2, text="It is.", transcription=usage)
    assert wire.decode_event(wire.encode_event(done)) == done
    assert "transcription" not in wire.encode_event(
        wire.AssistantDone(turn=2, text="It is.")
    )  # absent when there is none
    with pytest.raises(wire.WireError, match="transcription"):
        wire.decode_event(
            '{"type": "assistant.done", "turn": 1, "text": "", "usage": {}, '
            '"transcription": {"model": "m", "seconds": -1}}'
        )
    turn = TurnResult(
        turn=1,
        input=TurnInput(turn=1, camera_block=None, speech="hi", camera_source=None, speech_source="media"),
        reply=Reply(text="It is.", model="openai-realtime:x", transcription=usage),
    )
    assert TurnResult.from_json(turn.to_json(), "line 1").reply.transcription == usage
    assert TurnResult.from_json({**turn.to_json(), "reply": {"text": "t"}}, "l").reply.transcription is None


@pytest.mark.slow
@pytest.mark.parametrize("shape,when", [("tokens", "before"), ("duration", "late"), ("tokens", "never")])
def test_the_adapter_keeps_each_turns_transcription_beside_its_reply(monkeypatch, shape, when):
    """Matched by the committed item, whether it comes before the reply or after it; a transcription
    that never comes is one whose usage was not reported (its cost unknown)."""
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)

    async def two_turns(base_url):
        session = await open_realtime_session(
            "openai-realtime:gpt-realtime", "Be brief.", base_url=base_url, streaming_input=True
        )
        try:
            replies = []
            for seconds in (0.5, 1.2):
                await session.send_audio(b"\x01\x00" * int(OPENAI_RATE * seconds))
                replies.append(await session.respond(audio_turn=True))
            await session.send_user("And without audio?")
            replies.append(await session.respond(audio_turn=False))
            return replies
        finally:
            await session.aclose()

    with FakeOpenAIRealtime(transcription_usage=shape, transcripts=when) as server:
        replies = asyncio.run(two_turns(server.base_url))
    assert server.problems == []
    assert replies[2].transcription is None  # no audio committed: nothing transcribed
    if when == "never":
        assert [r.transcription for r in replies[:2]] == [TranscriptionUsage(model=MODEL, reported=False)] * 2
        return
    assert [r.transcription for r in replies[:2]] == [
        openai_transcription_usage(u, MODEL) for u in server.transcription_usages
    ]
    assert replies[1].transcription != replies[0].transcription  # each turn its own item's usage
