"""A tiny OpenAI-compatible chat server for tests: it speaks the documented
chat-completions wire format, can answer 429 first, and can be slow. With
`detailed_usage` its usage grows with the request (about four characters a
prompt token) and carries the API's `prompt_tokens_details` (cached tokens:
the part of the prompt an earlier request began with, in blocks of 64) and
`completion_tokens_details`; every usage sent is kept in `usages`. `reply` may be a function of
the request body (scripted replies: a judge's verdict chosen by the reply it is asked about). A reply's
`model` field repeats the request's model, as some servers do, unless `model` is given: then it names
that model whatever was asked, as a server of one model (vLLM, LM Studio) does."""

from __future__ import annotations

import json
import time

from tests.http_fake import HTTPFake, QuietHandler


class FakeOpenAI(HTTPFake):
    def __init__(
        self,
        *,
        reply="The cross-tip screwdriver you hold now fits.",
        delay=0.0,
        fail_first=0,
        retry_after="0",
        detailed_usage=False,
        model: str | None = None,
    ):
        self.model = model
        self.reply, self.delay, self.fail_first, self.retry_after = reply, delay, fail_first, retry_after
        self.detailed_usage = detailed_usage
        self.requests: list[dict] = []
        self.statuses: list[int] = []
        self.usages: list[dict] = []
        self._prompts: list[str] = []  # what earlier requests sent: a later one that begins with it is cached
        owner = self

        def usage(body: dict, completion: int) -> dict:
            if not owner.detailed_usage:
                return {"prompt_tokens": 11, "completion_tokens": completion, "total_tokens": 11 + completion}
            prompt_text = json.dumps(body["messages"])[:-1]  # without the closing bracket: a prefix of the next
            prompt = 9 + len(prompt_text) // 4
            seen = max((len(p) for p in owner._prompts if prompt_text.startswith(p)), default=0)
            owner._prompts.append(prompt_text)
            cached = min(prompt, seen // 4 // 64 * 64)
            given = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": 0,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            }
            owner.usages.append(given)
            return given

        class Handler(QuietHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append(body)
                if len(owner.requests) <= owner.fail_first:
                    owner.statuses.append(429)
                    self.send_json(
                        429,
                        {"error": {"message": "slow down", "type": "rate_limit"}},
                        {"Retry-After": owner.retry_after},
                    )
                    return
                time.sleep(owner.delay)
                owner.statuses.append(200)
                text = owner.reply(body) if callable(owner.reply) else owner.reply
                if not body.get("stream"):
                    self.send_json(
                        200,
                        {
                            "id": "chatcmpl-1",
                            "object": "chat.completion",
                            "created": 0,
                            "model": owner.model or body["model"],
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text},
                                }
                            ],
                            "usage": usage(body, 7),
                        },
                    )
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                words = text.split(" ")
                for i, word in enumerate(words):
                    piece = word if i == 0 else " " + word
                    chunk = {
                        "id": "chatcmpl-1",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": owner.model or body["model"],
                        "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                    }
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                last = {
                    "id": "chatcmpl-1",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": owner.model or body["model"],
                    "choices": [],
                    "usage": usage(body, len(words)),
                }
                self.wfile.write(f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()

        super().__init__(Handler)
