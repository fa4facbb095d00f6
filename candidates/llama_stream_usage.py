"""Runs inside the embedded llama.cpp server's process (`local.py`'s boot), never in ours.

llama-cpp-python's server streams a chat reply without its token counts: it
ignores `stream_options.include_usage`, and no chunk carries `usage` or
timings. A non-streamed reply does report them, so every stream turn of the
`local` model was recorded with no tokens. `install` makes a streamed chat
completion end as OpenAI's does when usage is asked for: after the chunk
with `finish_reason`, one chunk with empty `choices` and `usage`, counted as
the server counts a non-streamed reply (the prompt's tokens as templated;
the tokens generated, an end-of-generation token left out).

It wraps two methods of `llama_cpp.Llama`: `generate` (one call per
completion; it counts the prompt and the tokens it yields) and
`create_chat_completion` (which the server's streaming route looks up per
request). The server runs one completion at a time per model (its lock is
held until the stream is read out), so the counts live on the instance.
A chat format that completes more than once per reply (function calling)
reports its last completion. This file imports nothing of ours: the boot
loads it by its path.
"""

from __future__ import annotations

import functools


def install(llama_class) -> bool:
    """Wrap `llama_class`'s methods; False (nothing changed) when they are not there."""
    generate = getattr(llama_class, "generate", None)
    chat = getattr(llama_class, "create_chat_completion", None)
    if generate is None or chat is None or getattr(chat, "wearsim_usage", False):
        return False

    @functools.wraps(generate)
    def counting_generate(self, tokens, *args, **kwargs):
        counts = self._wearsim_counts = {"prompt": len(tokens), "generated": 0, "last_ends": False}
        for token in generate(self, tokens, *args, **kwargs):
            counts["generated"] += 1
            counts["last_ends"] = _ends_generation(self, token)
            yield token

    @functools.wraps(chat)
    def chat_with_usage(self, *args, **kwargs):
        self._wearsim_counts = None
        result = chat(self, *args, **kwargs)
        if not kwargs.get("stream") or isinstance(result, dict):
            return result
        return _with_usage_chunk(self, result)

    chat_with_usage.__dict__["wearsim_usage"] = True  # a mark the installer checks before wrapping again
    llama_class.generate = counting_generate
    llama_class.create_chat_completion = chat_with_usage
    return True


def _ends_generation(llama, token: int) -> bool:
    """The end-of-generation token the completion stops at without counting it."""
    try:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(llama._model.vocab, token))
    except (AttributeError, ImportError):
        return token == llama.token_eos()


def _with_usage_chunk(llama, chunks):
    last = None
    for chunk in chunks:
        last = chunk
        yield chunk
    counts = getattr(llama, "_wearsim_counts", None)
    if counts is None or last is None:
        return  # nothing was generated (an error): the usage stays unreported
    completion = counts["generated"] - (1 if counts["last_ends"] else 0)
    yield {
        "id": last.get("id"),
        "object": "chat.completion.chunk",
        "created": last.get("created"),
        "model": last.get("model"),
        "choices": [],
        "usage": {
            "prompt_tokens": counts["prompt"],
            "completion_tokens": completion,
            "total_tokens": counts["prompt"] + completion,
        },
    }
