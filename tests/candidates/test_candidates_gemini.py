"""The Gemini adapter against a local server speaking the documented
generateContent streaming wire format (server-sent events)."""

import asyncio
import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from candidates import GenerationConfig, Image, Message, open_candidate


@pytest.mark.slow
def test_gemini_adapter_request_shape_and_streamed_reply(monkeypatch):
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            seen.append(
                (self.path, dict(self.headers), json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            )
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for piece in ("It is the ", "pruner you hold now."):
                chunk = {"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
            usage = {
                "candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}],
                "usageMetadata": {
                    "promptTokenCount": 21,
                    "candidatesTokenCount": 6,
                    "promptTokensDetails": [
                        {"modality": "TEXT", "tokenCount": 13},
                        {"modality": "IMAGE", "tokenCount": 8},
                    ],
                    "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": 6}],
                },
            }
            self.wfile.write(f"data: {json.dumps(usage)}\r\n\r\n".encode())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-real")
    deltas = []

    async def go():
        async with open_candidate("gemini-2.5-flash", base_url=f"http://127.0.0.1:{server.server_port}") as model:
            assert model.family == "gemini"
            return await model.respond(
                [
                    Message(
                        role="user",
                        text="[Camera: a red disc]\nIs this ripe?",
                        images=(Image(data=b"\xff\xd8jpeg", mime_type="image/jpeg"),),
                    ),
                    Message(role="assistant", text="Looks ripe."),
                    Message(role="user", text="And this?"),
                ],
                "Be brief.",
                GenerationConfig(temperature=0.0, max_tokens=50),
                on_delta=deltas.append,
            )

    try:
        reply = asyncio.run(go())
    finally:
        server.shutdown()
    path, headers, body = seen[0]
    assert path.startswith("/v1beta/models/gemini-2.5-flash:streamGenerateContent")
    assert headers.get("x-goog-api-key") == "test-key-not-real"
    roles = [c["role"] for c in body["contents"]]
    assert roles == ["user", "model", "user"]
    parts = body["contents"][0]["parts"]
    inline = next(p.get("inlineData") or p.get("inline_data") for p in parts if "inlineData" in p or "inline_data" in p)
    assert base64.urlsafe_b64decode(inline["data"]) == b"\xff\xd8jpeg"
    system = body.get("systemInstruction") or body.get("system_instruction")
    assert system["parts"][0]["text"] == "Be brief."
    assert reply.text == "It is the pruner you hold now." and "".join(deltas) == reply.text
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (21, 6)
    # by modality, as the API split it (nothing cached: Gemini leaves the count out)
    assert (reply.usage.input_text_tokens, reply.usage.input_image_tokens, reply.usage.input_audio_tokens) == (13, 8, 0)
    assert (reply.usage.cached_input_tokens, reply.usage.output_text_tokens, reply.usage.output_audio_tokens) == (
        0,
        6,
        0,
    )
    assert reply.model == "gemini-2.5-flash"
