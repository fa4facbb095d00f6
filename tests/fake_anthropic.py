"""A tiny Anthropic Messages server for tests: `POST /v1/messages` with
`stream: true`, answered with the documented server-sent events
(message_start, content_block_start, content_block_delta with text_delta,
content_block_stop, message_delta with the output usage, message_stop). It
can answer 429 with Retry-After first, and records every request with its
headers (the key comes as `x-api-key` or, from newer SDKs, as a bearer
token: both are accepted). `cache_read` tokens are reported as read from the
prompt cache (`cache_read_input_tokens`, which the API keeps out of
`input_tokens`)."""

from __future__ import annotations

import json

from tests.http_fake import HTTPFake, QuietHandler


class FakeAnthropic(HTTPFake):
    url_path = ""  # the SDK appends /v1/messages

    def __init__(self, *, reply="The cordless drill in your hand now.", fail_first=0, retry_after="0", cache_read=0):
        self.reply, self.fail_first, self.retry_after = reply, fail_first, retry_after
        self.cache_read = cache_read
        self.requests: list[dict] = []  # {"path", "headers", "body"}
        self.problems: list[str] = []
        owner = self

        class Handler(QuietHandler):
            def _event(self, name: str, data: dict) -> None:
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                if self.path != "/v1/messages":
                    owner.problems.append(f"POST to {self.path}")
                if not self.headers.get("anthropic-version"):
                    owner.problems.append("no anthropic-version header")
                if not (self.headers.get("x-api-key") or self.headers.get("Authorization", "").startswith("Bearer ")):
                    owner.problems.append("no key: neither x-api-key nor Authorization: Bearer")  # SDKs differ
                if len(owner.requests) <= owner.fail_first:
                    self.send_json(
                        429,
                        {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
                        {"Retry-After": owner.retry_after},
                    )
                    return
                if not body.get("stream"):
                    owner.problems.append("a request without stream: true")
                words = owner.reply.split(" ")
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self._event(
                    "message_start",
                    {
                        "type": "message_start",
                        "message": {
                            "id": "msg_test",
                            "type": "message",
                            "role": "assistant",
                            "content": [],
                            "model": body.get("model"),
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": {
                                "input_tokens": 21,
                                "output_tokens": 1,
                                "cache_creation_input_tokens": 0,
                                "cache_read_input_tokens": owner.cache_read,
                            },
                        },
                    },
                )
                self._event(
                    "content_block_start",
                    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                )
                for i, word in enumerate(words):
                    self._event(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": 0,
                            "delta": {"type": "text_delta", "text": word if i == 0 else " " + word},
                        },
                    )
                self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
                self._event(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                        "usage": {"output_tokens": len(words)},
                    },
                )
                self._event("message_stop", {"type": "message_stop"})
                self.wfile.flush()

        super().__init__(Handler)
