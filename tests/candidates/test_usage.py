"""Usage by modality: each provider's usage fields read from payloads in their
documented shapes, through the adapters against the local fakes, and the
`Usage` kept whole by the response cache, the records and the wire."""

from __future__ import annotations

import asyncio
import json

import pytest

from candidates import GenerationConfig, Image, Message, open_candidate
from candidates.usage import anthropic_usage, gemini_usage, openai_chat_usage, openai_realtime_usage
from core.candidate import USAGE_FIELDS, Usage, UsageError
from tests.fake_openai import FakeOpenAI
from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime

UNKNOWN = None


def split(usage: Usage) -> dict:
    return {k: v for k, v in usage.to_json().items() if k not in ("input_tokens", "output_tokens")}


# ---------------------------------------------------------------- payloads as the providers document them


def test_openai_chat_usage_with_its_details():
    payload = {
        "prompt_tokens": 1200,
        "completion_tokens": 90,
        "total_tokens": 1290,
        "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 30,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
    usage = openai_chat_usage(payload, images_sent=False)
    assert (usage.input_tokens, usage.output_tokens) == (1200, 90)
    assert split(usage) == {
        "input_text_tokens": 1200,
        "input_audio_tokens": 0,
        "input_image_tokens": 0,
        "cached_input_tokens": 1024,
        "cached_text_tokens": 1024,
        "cached_audio_tokens": 0,
        "cached_image_tokens": 0,
        "output_text_tokens": 90,
        "output_audio_tokens": 0,
    }
    # with an image sent, chat completions do not say which prompt tokens were the image's
    with_image = openai_chat_usage(payload, images_sent=True)
    assert with_image.input_text_tokens is UNKNOWN and with_image.input_image_tokens is UNKNOWN
    assert with_image.cached_text_tokens is UNKNOWN and with_image.cached_input_tokens == 1024


def test_openai_chat_usage_without_details_leaves_the_cached_part_unknown():
    usage = openai_chat_usage({"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}, images_sent=False)
    assert usage.input_text_tokens == 11 and usage.output_text_tokens == 7
    assert usage.cached_input_tokens is UNKNOWN and usage.cached_text_tokens is UNKNOWN
    assert openai_chat_usage(None, images_sent=False) == Usage()


def test_openai_realtime_response_done_usage():
    event = {
        "type": "response.done",
        "response": {
            "status": "completed",
            "usage": {
                "total_tokens": 2710,
                "input_tokens": 2530,
                "output_tokens": 180,
                "input_token_details": {
                    "text_tokens": 430,
                    "audio_tokens": 1930,
                    "image_tokens": 170,
                    "cached_tokens": 1536,
                    "cached_tokens_details": {"text_tokens": 384, "audio_tokens": 1152, "image_tokens": 0},
                },
                "output_token_details": {"text_tokens": 40, "audio_tokens": 140},
            },
        },
    }
    usage = openai_realtime_usage(event["response"]["usage"])
    assert usage == Usage(
        input_tokens=2530,
        output_tokens=180,
        input_text_tokens=430,
        input_audio_tokens=1930,
        input_image_tokens=170,
        cached_input_tokens=1536,
        cached_text_tokens=384,
        cached_audio_tokens=1152,
        cached_image_tokens=0,
        output_text_tokens=40,
        output_audio_tokens=140,
    )


def test_openai_realtime_usage_missing_a_part_is_unknown_unless_the_rest_settles_it():
    # a beta endpoint that does not send image_tokens: text + audio make the total, so no image tokens
    usage = openai_realtime_usage(
        {
            "input_tokens": 300,
            "output_tokens": 20,
            "input_token_details": {"text_tokens": 100, "audio_tokens": 200, "cached_tokens": 0},
            "output_token_details": {"text_tokens": 20},
        }
    )
    assert usage.input_image_tokens == 0 and usage.output_audio_tokens == 0 and usage.cached_text_tokens == 0
    # no details at all: the split is unknown, not zero
    bare = openai_realtime_usage({"input_tokens": 300, "output_tokens": 20})
    assert all(value is UNKNOWN for value in split(bare).values())


def test_gemini_usage_metadata_with_modality_lists():
    wire = {
        "promptTokenCount": 1310,
        "candidatesTokenCount": 52,
        "thoughtsTokenCount": 100,
        "cachedContentTokenCount": 1024,
        "totalTokenCount": 1462,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 278}, {"modality": "IMAGE", "tokenCount": 1032}],
        "cacheTokensDetails": [{"modality": "TEXT", "tokenCount": 250}, {"modality": "IMAGE", "tokenCount": 774}],
        "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": 52}],
    }
    usage = gemini_usage(wire)
    assert usage == Usage(
        input_tokens=1310,
        output_tokens=152,
        input_text_tokens=278,
        input_audio_tokens=0,
        input_image_tokens=1032,
        cached_input_tokens=1024,
        cached_text_tokens=250,
        cached_audio_tokens=0,
        cached_image_tokens=774,
        output_text_tokens=152,
        output_audio_tokens=0,
    )  # thinking is billed as output text
    # the SDK's object (snake_case) reads the same
    from google.genai import types

    assert gemini_usage(types.GenerateContentResponseUsageMetadata.model_validate(wire)) == usage


def test_gemini_live_usage_metadata_counts_video_frames_as_image_tokens():
    from google.genai import types

    wire = {
        "promptTokenCount": 900,
        "responseTokenCount": 375,
        "totalTokenCount": 1275,
        "promptTokensDetails": [
            {"modality": "TEXT", "tokenCount": 60},
            {"modality": "AUDIO", "tokenCount": 324},
            {"modality": "VIDEO", "tokenCount": 516},
        ],
        "responseTokensDetails": [{"modality": "AUDIO", "tokenCount": 375}],
    }
    message = types.LiveServerMessage.model_validate({"usageMetadata": wire})
    usage = gemini_usage(message.usage_metadata)
    assert usage == Usage(
        input_tokens=900,
        output_tokens=375,
        input_text_tokens=60,
        input_audio_tokens=324,
        input_image_tokens=516,
        cached_input_tokens=0,
        cached_text_tokens=0,
        cached_audio_tokens=0,
        cached_image_tokens=0,
        output_text_tokens=0,
        output_audio_tokens=375,
    )
    # a count Gemini leaves out is 0 (its JSON omits zeros); a list it leaves out is an unknown split
    bare = gemini_usage({"promptTokenCount": 40, "responseTokenCount": 8})
    assert bare.cached_input_tokens == 0 and bare.input_text_tokens is UNKNOWN and bare.output_text_tokens is UNKNOWN
    assert gemini_usage(
        {"promptTokenCount": 40, "responseTokenCount": 8}, text_only_input=True, text_only_output=True
    ) == Usage(
        input_tokens=40,
        output_tokens=8,
        input_text_tokens=40,
        input_audio_tokens=0,
        input_image_tokens=0,
        cached_input_tokens=0,
        cached_text_tokens=0,
        cached_audio_tokens=0,
        cached_image_tokens=0,
        output_text_tokens=8,
        output_audio_tokens=0,
    )
    # a modality we cannot price makes that direction's split unknown rather than guessed
    odd = gemini_usage(
        {
            "promptTokenCount": 40,
            "responseTokenCount": 8,
            "promptTokensDetails": [{"modality": "DOCUMENT", "tokenCount": 40}],
        }
    )
    assert odd.input_text_tokens is UNKNOWN


def test_anthropic_usage_with_cache_reads():
    payload = {
        "input_tokens": 120,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 2048,
        "output_tokens": 64,
        "service_tier": "standard",
    }
    usage = anthropic_usage(payload, images_sent=False)
    # Anthropic's input_tokens leaves the cache out: the input is all three together
    assert usage == Usage(
        input_tokens=2168,
        output_tokens=64,
        input_text_tokens=2168,
        input_audio_tokens=0,
        input_image_tokens=0,
        cached_input_tokens=2048,
        cached_text_tokens=2048,
        cached_audio_tokens=0,
        cached_image_tokens=0,
        output_text_tokens=64,
        output_audio_tokens=0,
    )
    with_image = anthropic_usage(payload, images_sent=True)
    assert with_image.input_text_tokens is UNKNOWN and with_image.cached_text_tokens is UNKNOWN


# ---------------------------------------------------------------- through the adapters


@pytest.mark.slow
def test_the_openai_chat_adapter_records_the_details_the_endpoint_sent():
    async def ask(server, stream):
        async with open_candidate("openai:fake", base_url=server.base_url) as model:
            first = await model.respond(
                [Message(role="user", text="What is in my hand? " * 40)],
                "Be brief.",
                GenerationConfig(),
                on_delta=(lambda _: None) if stream else None,
            )
            again = await model.respond(
                [
                    Message(role="user", text="What is in my hand? " * 40),
                    Message(role="assistant", text=first.text),
                    Message(role="user", text="And now?"),
                ],
                "Be brief.",
                GenerationConfig(),
            )
            return first, again

    for stream in (False, True):
        with FakeOpenAI(detailed_usage=True) as server:
            replies = asyncio.run(ask(server, stream))
        for reply, sent in zip(replies, server.usages, strict=True):
            assert reply.usage == openai_chat_usage(sent, images_sent=False)
            assert reply.usage.cached_input_tokens == sent["prompt_tokens_details"]["cached_tokens"]
        assert replies[1].usage.cached_text_tokens > 0  # the second request began with the first


def test_the_openai_realtime_adapter_records_each_response_done_usage(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)

    async def two_turns(base_url):
        async with open_candidate("openai-realtime:gpt-realtime", base_url=base_url) as model:
            talk = model.conversation()
            try:
                messages = [
                    Message(
                        role="user", text="[Camera: a red mug]\nWhat is this?", images=(Image(data=b"\xff\xd8jpeg"),)
                    )
                ]
                first = await talk.respond(messages, "Be brief.", GenerationConfig())
                messages += [Message(role="assistant", text=first.text), Message(role="user", text="And now?")]
                return first, await talk.respond(messages, "Be brief.", GenerationConfig())
            finally:
                await talk.aclose()

    with FakeOpenAIRealtime(reply="A red mug.") as server:
        replies = asyncio.run(two_turns(server.base_url))
    assert [r.usage for r in replies] == [openai_realtime_usage(u) for u in server.usages]
    assert replies[0].usage.input_image_tokens == 85 and replies[1].usage.cached_image_tokens == 85


def test_the_gemini_live_adapter_records_usage_by_modality(gemini_env):
    async def one_turn():
        async with open_candidate("gemini-live:gemini-live-x", base_url=server.base_url) as model:
            talk = model.conversation()
            try:
                return await talk.respond(
                    [Message(role="user", text="[Camera: a red mug]\nWhat is this?")], "Be brief.", GenerationConfig()
                )
            finally:
                await talk.aclose()

    with gemini_env(reply="A red mug.") as server:
        reply = asyncio.run(one_turn())
    [sent] = server.usages
    assert reply.usage == gemini_usage(sent, text_only_output=True)
    assert reply.usage.input_text_tokens == sent["promptTokenCount"] and reply.usage.output_text_tokens == 4


@pytest.mark.slow
def test_the_anthropic_adapter_records_cache_reads(monkeypatch):
    pytest.importorskip("anthropic")
    from tests.fake_anthropic import FakeAnthropic

    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)

    async def ask(base_url):
        async with open_candidate("anthropic:claude-x", base_url=base_url) as model:
            return await model.respond(
                [Message(role="user", text="What now?")], "Be brief.", GenerationConfig(max_tokens=64)
            )

    with FakeAnthropic(reply="The drill in your hand.", cache_read=512) as server:
        reply = asyncio.run(ask(server.base_url))
    assert reply.usage == Usage(
        input_tokens=21 + 512,
        output_tokens=5,
        input_text_tokens=533,
        input_audio_tokens=0,
        input_image_tokens=0,
        cached_input_tokens=512,
        cached_text_tokens=512,
        cached_audio_tokens=0,
        cached_image_tokens=0,
        output_text_tokens=5,
        output_audio_tokens=0,
    )


# ---------------------------------------------------------------- kept whole

FULL = Usage(
    input_tokens=2530,
    output_tokens=180,
    input_text_tokens=430,
    input_audio_tokens=1930,
    input_image_tokens=170,
    cached_input_tokens=1536,
    cached_text_tokens=384,
    cached_audio_tokens=1152,
    cached_image_tokens=0,
    output_text_tokens=40,
    output_audio_tokens=140,
)


def test_usage_json_round_trip_and_its_errors():
    assert Usage.from_json(FULL.to_json()) == FULL
    assert set(FULL.to_json()) == set(USAGE_FIELDS)
    assert Usage.from_json({"input_tokens": 3, "output_tokens": 1}) == Usage(
        input_tokens=3, output_tokens=1
    )  # older: the split unknown
    with pytest.raises(UsageError) as info:
        Usage.from_json({"input_tokens": -1, "cached_text_tokens": "7", "output_audio_tokens": True})
    assert {p.split("'")[1] for p in info.value.problems} == {
        "input_tokens",
        "cached_text_tokens",
        "output_audio_tokens",
    }
    # two replies' usage together: a part unknown in either is unknown in the sum
    assert (FULL + FULL).input_audio_tokens == 3860 and (
        FULL + Usage(input_tokens=1, output_tokens=1)
    ).input_audio_tokens is UNKNOWN


def test_the_response_cache_keeps_the_split(tmp_path):
    from candidates.cache import ResponseCache
    from core.candidate import Reply

    cache = ResponseCache(tmp_path)
    cache.put("k", Reply(text="hi", model="openai:x", usage=FULL), model="openai:x", endpoint="e", role="candidate")
    assert cache.get("k").usage == FULL
    # an entry written before the split (usage as [input, output]) still reads, the split unknown
    old = json.dumps({"text": "hi", "model": "openai:x", "usage": [5, 2]})
    cache._db().execute(
        "INSERT INTO replies (key, model, endpoint, role, created, reply) VALUES "
        "('old', 'openai:x', 'e', 'candidate', 0, ?)",
        (old,),
    )
    assert cache.get("old").usage == Usage(input_tokens=5, output_tokens=2)
    cache.close()


def test_records_keep_the_split_and_judge_usage_and_name_bad_fields(tmp_path):
    from core.candidate import Reply
    from core.judge import Verdict
    from core.records import RecordError, TrialRecord, TurnResult, authored_turn_input
    from core.scenario import load_bank

    scenario = load_bank().scenarios[0]
    turn = TurnResult(
        turn=1, input=authored_turn_input(scenario, 1), reply=Reply(text="A mug.", model="openai:x", usage=FULL)
    )
    verdict = Verdict(
        label="current",
        rationale="r",
        judge="openai:judge",
        raw="{}",
        usage=Usage(
            input_tokens=300,
            output_tokens=20,
            input_text_tokens=300,
            input_audio_tokens=0,
            input_image_tokens=0,
            cached_input_tokens=0,
            cached_text_tokens=0,
            cached_audio_tokens=0,
            cached_image_tokens=0,
            output_text_tokens=20,
            output_audio_tokens=0,
        ),
    )
    record = TrialRecord(
        scenario_id=scenario.scenario_id,
        condition="baseline",
        trial=0,
        target_context="current",
        cue_type="location",
        turns=(turn,),
        turn_2_judge=verdict,
    )
    line = json.loads(record.to_line())
    assert line["turns"][0]["reply"]["usage"] == FULL.to_json()
    back = TrialRecord.from_json(line)
    assert back.turns[0].reply.usage == FULL and back.turn_2_judge.usage == verdict.usage
    assert back.turn_2_ranking_judge is None
    # a record from before the split: the totals only, no judge usage
    line["turns"][0]["reply"]["usage"] = {"input_tokens": 9, "output_tokens": 4}
    del line["turn_2_judge_usage"]
    old = TrialRecord.from_json(line)
    assert old.turns[0].reply.usage == Usage(input_tokens=9, output_tokens=4) and old.turn_2_judge.usage is None
    line["turns"][0]["reply"]["usage"] = {"input_tokens": 9, "output_tokens": 4, "input_audio_tokens": 2.5}
    line["turn_2_judge_usage"] = {"input_tokens": "many"}
    with pytest.raises(RecordError) as info:
        TrialRecord.from_json(line, "t.jsonl: line 3")
    text = "\n".join(info.value.problems)
    assert "t.jsonl: line 3: field 'turns[0]': field 'reply.usage.input_audio_tokens' must be" in text
    assert "t.jsonl: line 3: field 'turn_2_judge_usage.input_tokens' must be" in text
