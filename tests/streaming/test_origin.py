"""Another origin driving the server: a page on another origin (another port on
localhost, any site the operator visits) or a DNS-rebound name must not open
sessions, spend the operator's keys or save into the studio."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import websockets

from streaming import wire
from streaming.local_server import running_server
from streaming.server_settings import ServerSettings


@pytest.fixture(scope="module")
def server(backend, tmp_path_factory):
    settings = ServerSettings(
        backend_base_url=backend.base_url,
        record_dir=tmp_path_factory.mktemp("studio"),
        allowed_origins=("http://glasses.example:9000",),
    )
    with running_server(settings) as url:
        yield url, settings.record_dir


def _hello(url: str, headers: dict) -> str:
    """What a WebSocket handshake with these headers gets: the first event's type, or `refused STATUS`."""

    async def go():
        try:
            ws = await websockets.connect(url + "/v1/session", additional_headers=headers)
        except websockets.InvalidStatus as exc:
            return f"refused {exc.response.status_code}"
        async with ws:
            await ws.send(wire.hello(None, wire.SessionConfig(backend="openai:fake")))
            return json.loads(await ws.recv())["type"]

    return asyncio.run(go())


def test_a_page_on_another_origin_cannot_open_a_session(server):
    url, _ = server
    own = url.replace("ws://", "http://")
    other_port = own.rsplit(":", 1)[0] + ":9"
    assert _hello(url, {"Origin": other_port}) == "refused 403"  # another port on localhost
    assert _hello(url, {"Origin": "https://evil.example"}) == "refused 403"
    assert _hello(url, {"Origin": "null"}) == "refused 403"  # a sandboxed frame or a file:// page
    assert _hello(url, {"Origin": own}) == "ready"  # the server's own page
    assert _hello(url, {"Origin": "http://glasses.example:9000"}) == "ready"  # listed by the operator
    assert _hello(url, {}) == "ready"  # no Origin: a command-line client on loopback


def test_a_rebound_host_name_is_refused(server):
    url, _ = server
    port = url.rsplit(":", 1)[1]
    assert _hello(url, {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}) == "refused 400"
    http = url.replace("ws://", "http://")
    for path in ("/", "/v1/info", "/healthz"):
        refused = httpx.get(http + path, headers={"Host": f"evil.example:{port}"})
        assert refused.status_code == 400 and "not a name of this server" in refused.json()["error"]
    assert httpx.get(http + "/v1/info", headers={"Host": f"localhost:{port}"}).status_code == 200
    assert httpx.get(http + "/v1/info").status_code == 200


def test_a_cross_origin_no_cors_post_saves_nothing_in_the_studio(server):
    url, record_dir = server
    http = url.replace("ws://", "http://")
    response = httpx.post(
        http + "/v1/record?scenario=sc-01&step=turn_1",
        content=b"not a recording",
        headers={"Origin": "https://evil.example", "Content-Type": "text/plain"},
    )
    assert response.status_code == 403 and "evil.example" in response.json()["error"]
    assert not (record_dir / ".incoming").exists() and not (record_dir / "sc-01").exists()
    same = httpx.post(http + "/v1/record?scenario=sc-01&step=turn_1", content=b"", headers={"Origin": http})
    assert same.status_code == 400 and same.json()["error"] == "the recording is empty"  # past the check


def test_the_api_docs_are_off(server):
    http = server[0].replace("ws://", "http://")
    for path in ("/docs", "/redoc", "/openapi.json"):
        assert httpx.get(http + path).status_code == 404


def test_off_loopback_a_request_without_an_origin_needs_the_token():
    from streaming.origin import OriginCheck

    def scope(client, origin=None):
        headers = [(b"host", b"192.0.2.7:8765")] + ([(b"origin", origin.encode())] if origin else [])
        return {
            "type": "websocket",
            "scheme": "ws",
            "path": "/v1/session",
            "headers": headers,
            "client": (client, 5000),
        }

    open_server, token_server = OriginCheck(None), OriginCheck(None, token_required=True)
    assert open_server.refusal(scope("127.0.0.1")) is None
    assert open_server.refusal(scope("192.0.2.9"))[0] == 403
    assert token_server.refusal(scope("192.0.2.9")) is None  # the token is checked in the hello
    assert token_server.refusal(scope("192.0.2.9", "http://192.0.2.7:8765")) is None
    assert token_server.refusal(scope("192.0.2.9", "http://192.0.2.99:8765"))[0] == 403


def test_serve_takes_allowed_origins_and_refuses_malformed_ones(serve_without_listening, capsys):
    serve, seen = serve_without_listening
    assert serve(["--allow-origin", "HTTP://Studio.example:8000/"]) == 0
    assert seen[0].app.state.settings.allowed_origins == ("http://studio.example:8000",)
    assert serve(["--allow-origin", "studio.example"]) == 2
    assert "--allow-origin" in capsys.readouterr().err
