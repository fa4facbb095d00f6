"""Each provider's usage fields read into one `Usage`, split by modality.

What each provider says, and how it is read (docs/schema.md, "Usage"):

- OpenAI chat completions: `usage.prompt_tokens` and `completion_tokens`,
  `prompt_tokens_details` {`cached_tokens`, `audio_tokens`} and
  `completion_tokens_details` {`audio_tokens`, `reasoning_tokens`, ...}.
  Image tokens are not split out, so with images sent the text/image split
  is unknown; with none sent there are none. Our chat adapters send no audio
  and ask for text only, so audio counts the API leaves out are 0.
- OpenAI Realtime: `response.done` -> `response.usage`: `input_tokens`,
  `output_tokens`, `input_token_details` {`text_tokens`, `audio_tokens`,
  `image_tokens`, `cached_tokens`, `cached_tokens_details` {`text_tokens`,
  `audio_tokens`, `image_tokens`}} and `output_token_details`
  {`text_tokens`, `audio_tokens`}.
- OpenAI Realtime's input transcription (`conversation.item.input_audio_transcription.completed`
  -> `usage`), billed apart from the response: `{type: "tokens", input_tokens, output_tokens,
  total_tokens, input_token_details: {audio_tokens, text_tokens}}` for the gpt-4o transcribe
  models, `{type: "duration", seconds}` for whisper-1 (`TranscriptionUsage`).
- Gemini and Gemini Live: `usage_metadata` (`usageMetadata` on the wire):
  `prompt_token_count` (+ `tool_use_prompt_token_count`),
  `cached_content_token_count`, `candidates_token_count` (Live:
  `response_token_count`) + `thoughts_token_count` (thinking: counted as
  output text, priced at the text output rate, because Google's Gemini
  Developer API pricing page gives each model's output price as "including
  thinking tokens"; checked 2026-11-27, benchmark/cost/prices.toml), and
  per-modality lists of {`modality`, `token_count`}:
  `prompt_tokens_details`, `cache_tokens_details`,
  `candidates_tokens_details` (Live: `response_tokens_details`). A count the
  API leaves out is 0 (its JSON omits zeros); a list it leaves out is an
  unknown split. VIDEO tokens (frames) count as image tokens.
- Anthropic: `input_tokens` (the uncached input), `cache_read_input_tokens`,
  `cache_creation_input_tokens`, `output_tokens`. The input total is the
  three together; cache reads are the cached input. Images are not split
  out; replies are text.

A part a provider does not give is None (unknown), never 0, except where
the request itself settles it (no images sent: no image tokens).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from core.candidate import TranscriptionUsage, Usage

MODALITY_KINDS = {"TEXT": "text", "AUDIO": "audio", "IMAGE": "image", "VIDEO": "image"}


def _count(value: Any) -> int | None:
    """A token count, or None for anything that is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != int(value):
        return None
    return int(value)


def _details(data: Any) -> dict:
    return data if isinstance(data, dict) else {}


def openai_chat_usage(data: Any, *, images_sent: bool) -> Usage:
    """A chat completion's (or its last streamed chunk's) `usage` object."""
    if not isinstance(data, dict):
        return Usage()
    prompt, details = _count(data.get("prompt_tokens")) or 0, _details(data.get("prompt_tokens_details"))
    completion, out = _count(data.get("completion_tokens")) or 0, _details(data.get("completion_tokens_details"))
    audio_in = _count(details.get("audio_tokens"))
    return Usage(
        input_tokens=prompt,
        output_tokens=completion,
        input_text_tokens=None,  # the rest, once audio and image are known
        input_audio_tokens=0 if audio_in is None else audio_in,  # no audio is sent on this path
        input_image_tokens=None if images_sent else 0,
        cached_input_tokens=_count(details.get("cached_tokens")),
        output_audio_tokens=_count(out.get("audio_tokens")) or 0,  # text was asked for
    ).completed()


def openai_realtime_usage(data: Any) -> Usage:
    """`response.usage` of a Realtime `response.done` event."""
    if not isinstance(data, dict):
        return Usage()
    given = _details(data.get("input_token_details"))
    cached = _details(given.get("cached_tokens_details"))
    out = _details(data.get("output_token_details"))
    return Usage(
        input_tokens=_count(data.get("input_tokens")) or 0,
        output_tokens=_count(data.get("output_tokens")) or 0,
        input_text_tokens=_count(given.get("text_tokens")),
        input_audio_tokens=_count(given.get("audio_tokens")),
        input_image_tokens=_count(given.get("image_tokens")),
        cached_input_tokens=_count(given.get("cached_tokens")),
        cached_text_tokens=_count(cached.get("text_tokens")),
        cached_audio_tokens=_count(cached.get("audio_tokens")),
        cached_image_tokens=_count(cached.get("image_tokens")),
        output_text_tokens=_count(out.get("text_tokens")),
        output_audio_tokens=_count(out.get("audio_tokens")),
    ).completed()


def openai_transcription_usage(data: Any, model: str) -> TranscriptionUsage:
    """An input transcription event's `usage`, in either documented shape; anything else (no
    usage, a shape not documented) is a transcription whose usage was not reported."""
    if not isinstance(data, dict):
        return TranscriptionUsage(model=model, reported=False)
    if data.get("type") == "duration" or ("seconds" in data and "input_tokens" not in data):
        seconds = data.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < 10**9:
            return TranscriptionUsage(model=model, reported=False)
        return TranscriptionUsage(model=model, seconds=float(seconds))
    given, out = _count(data.get("input_tokens")), _count(data.get("output_tokens"))
    if given is None or out is None:
        return TranscriptionUsage(model=model, reported=False)
    details = _details(data.get("input_token_details"))
    audio, text = _count(details.get("audio_tokens")), _count(details.get("text_tokens"))
    if audio is not None and text is None and audio <= given:
        text = given - audio
    elif text is not None and audio is None and text <= given:
        audio = given - text
    return TranscriptionUsage(
        model=model, input_tokens=given, output_tokens=out, input_audio_tokens=audio, input_text_tokens=text
    )


def _snake(data: Any) -> Any:
    """A payload's keys in snake_case (the wire's camelCase and the SDK's snake_case read alike)."""
    if isinstance(data, dict):
        return {re.sub(r"(?<!^)(?=[A-Z])", "_", str(k)).lower(): _snake(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_snake(v) for v in data]
    return data


def _by_modality(entries: Any) -> dict[str, int] | None:
    """{text, audio, image} token counts from a list of {modality, token_count}; None when
    the list is missing or holds a modality or a count that cannot be read."""
    if not isinstance(entries, list):
        return None
    out = {"text": 0, "audio": 0, "image": 0}
    for entry in entries:
        if not isinstance(entry, dict):
            return None
        modality = entry.get("modality")
        kind = MODALITY_KINDS.get(str(getattr(modality, "value", modality) or "").upper())
        count = _count(entry.get("token_count") or 0)
        if kind is None or count is None:
            return None
        out[kind] += count
    return out


def _plus(*parts: dict[str, int] | None) -> dict[str, int | None]:
    present = [p for p in parts if p is not None]
    if len(present) < len(parts):
        return {"text": None, "audio": None, "image": None}
    return {k: sum(p[k] for p in present) for k in ("text", "audio", "image")}


def gemini_usage(metadata: Any, *, text_only_input: bool = False, text_only_output: bool = False) -> Usage:
    """`usage_metadata` of a Gemini reply (generateContent) or a Live server message, as the SDK's
    object or the wire's JSON. `text_only_input` / `text_only_output`: the request settles that
    a direction is all text (no media sent; text asked for) where the API gives no list."""
    if metadata is None:
        return Usage()
    if hasattr(metadata, "model_dump"):
        metadata = metadata.model_dump(mode="json", exclude_none=True)
    data = _snake(metadata) if isinstance(metadata, dict) else {}
    prompt = (_count(data.get("prompt_token_count")) or 0) + (_count(data.get("tool_use_prompt_token_count")) or 0)
    thoughts = _count(data.get("thoughts_token_count")) or 0
    reply = _count(data.get("candidates_token_count", data.get("response_token_count"))) or 0
    prompt_kinds = _by_modality(data.get("prompt_tokens_details"))
    given: Mapping[str, int | None] | None = prompt_kinds
    if data.get("tool_use_prompt_token_count"):
        given = _plus(prompt_kinds, _by_modality(data.get("tool_use_prompt_tokens_details")))
    if given is None and text_only_input:
        given = {"text": prompt, "audio": 0, "image": 0}
    given = given or {"text": None, "audio": None, "image": None}
    cached_total = _count(data.get("cached_content_token_count")) or 0
    cached: Mapping[str, int | None] = _by_modality(data.get("cache_tokens_details")) or {
        "text": None,
        "audio": None,
        "image": None,
    }
    said = data.get("candidates_tokens_details", data.get("response_tokens_details"))
    out = _by_modality(said)
    if out is None and text_only_output:
        out = {"text": reply, "audio": 0, "image": 0}
    text_out = None if out is None or out["image"] else out["text"] + thoughts  # image output has no price key
    return Usage(
        input_tokens=prompt,
        output_tokens=reply + thoughts,
        input_text_tokens=given["text"],
        input_audio_tokens=given["audio"],
        input_image_tokens=given["image"],
        cached_input_tokens=cached_total,
        cached_text_tokens=cached["text"],
        cached_audio_tokens=cached["audio"],
        cached_image_tokens=cached["image"],
        output_text_tokens=text_out,
        output_audio_tokens=None if out is None or out["image"] else out["audio"],
    ).completed()


def anthropic_usage(usage: Any, *, images_sent: bool) -> Usage:
    """A Messages reply's `usage` (the SDK's object or the JSON)."""
    if usage is None:
        return Usage()
    if hasattr(usage, "model_dump"):
        usage = usage.model_dump(mode="json")
    if not isinstance(usage, dict):
        return Usage()
    fresh = _count(usage.get("input_tokens")) or 0
    read = _count(usage.get("cache_read_input_tokens")) or 0
    written = _count(usage.get("cache_creation_input_tokens")) or 0
    total = fresh + read + written
    output = _count(usage.get("output_tokens")) or 0
    return Usage(
        input_tokens=total,
        output_tokens=output,
        input_audio_tokens=0,
        input_image_tokens=None if images_sent else 0,
        cached_input_tokens=read,
        cached_audio_tokens=0,
        output_text_tokens=output,
        output_audio_tokens=0,
    ).completed()
