"""A tiny OpenAI-compatible chat server for tests: it speaks the documented
chat-completions wire format, can answer 429 first, and can be slow."""

from __future__ import annotations

import json
import time

from tests.http_fake import HTTPFake, QuietHandler


class FakeOpenAI(HTTPFake):
    def __init__(self, *, reply="The cross-tip screwdriver you hold now fits.", delay=0.0, fail_first=0,
                 retry_after="0"):
        self.reply, self.delay, self.fail_first, self.retry_after = reply, delay, fail_first, retry_after
        self.requests: list[dict] = []
        self.statuses: list[int] = []
        owner = self

        class Handler(QuietHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append(body)
                if len(owner.requests) <= owner.fail_first:
                    owner.statuses.append(429)
                    self.send_json(429, {"error": {"message": "slow down", "type": "rate_limit"}},
                                   {"Retry-After": owner.retry_after})
                    return
                time.sleep(owner.delay)
                owner.statuses.append(200)
                if not body.get("stream"):
                    self.send_json(200, {
                        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": owner.reply}}],
                        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
                    })
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                words = owner.reply.split(" ")
                for i, word in enumerate(words):
                    piece = word if i == 0 else " " + word
                    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                             "model": body["model"],
                             "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                usage = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                         "model": body["model"], "choices": [],
                         "usage": {"prompt_tokens": 11, "completion_tokens": len(words), "total_tokens": 11 + len(words)}}
                self.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()

        super().__init__(Handler)
