"""streaming/web/wire.js, the browser page's codec, kept in step with streaming/wire.py, the Python one.

Nothing else ties the two files together, so these tests read wire.py's own tables (the media kinds and
header, the client message types in `streaming.client_messages`, the server events in
`streaming.server_events`, the close codes) and check wire.js against them. The first test reads
wire.js as text and needs no browser; the others run wire.js in headless Chromium: bytes and messages
the page writes are read by the Python codec, and every server event Python writes is read by the page.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from core.records import TurnInput, TurnMetrics
from streaming import client_messages, wire
from streaming.server_events import EVENT_TYPES
from tests.paths import ROOT

WEB = ROOT / "streaming" / "web"
JS = (WEB / "wire.js").read_text(encoding="utf-8")
# fields encode_event adds to an event's own (the message strings built from the turn's input)
WIRE_ONLY = {"turn.input": {"user_message", "context_message"}}
# client messages the page never sends (the simulated glasses end a proactive watch with it)
NOT_FROM_THE_PAGE = {"watch.end"}
CLOSE_CODES = {value for name, value in vars(wire).items() if name.startswith("CLOSE_")}
SAMPLES = {
    "int": 7,
    "str": "x",
    "float": 0.5,
    "bool": True,
    "dict": {},
    "TurnInput": TurnInput(turn=1, camera_block=None, speech="hi", camera_source=None, speech_source="perceived"),
    "TurnMetrics": TurnMetrics(),
}


def js_number(name: str) -> int:
    match = re.search(rf"^export const {name} = (0x[0-9a-fA-F]+|\d+);$", JS, re.M)
    assert match, f"wire.js has no `export const {name}`"
    return int(match.group(1), 0)


def js_table(name: str) -> str:
    match = re.search(rf"^export const {name} = \{{\n(.*?)^\}};$", JS, re.M | re.S)
    assert match, f"wire.js has no `export const {name} = {{...}};`"
    return match.group(1)


def own_fields(kind: str) -> tuple[set[str], set[str]]:
    """An event type's (required, allowed) field names on the wire, from its dataclass."""
    fields = dataclasses.fields(EVENT_TYPES[kind])
    required = {f.name for f in fields if f.default is f.default_factory is dataclasses.MISSING}
    return required, {f.name for f in fields} | WIRE_ONLY.get(kind, set())


def test_wire_js_names_the_python_codecs_types_fields_and_codes():
    assert js_number("PROTOCOL_VERSION") == wire.PROTOCOL_VERSION
    assert (js_number("KIND_AUDIO"), js_number("KIND_FRAME")) == (wire.KIND_AUDIO, wire.KIND_FRAME)
    events = {
        kind: set(re.findall(r'"([^"]+)"', names))
        for kind, names in re.findall(r'^\s*"([^"]+)": \[([^\]]*)\],$', js_table("SERVER_EVENTS"), re.M)
    }
    assert set(events) == set(EVENT_TYPES)
    for kind, names in events.items():
        required, allowed = own_fields(kind)
        assert required <= names <= allowed, (kind, sorted(names), sorted(required), sorted(allowed))
    reasons = {int(code) for code in re.findall(r"^\s*(\d+):", js_table("CLOSE_REASONS"), re.M)}
    assert CLOSE_CODES <= reasons, sorted(CLOSE_CODES - reasons)
    sent = set(re.findall(r'type: "([^"]+)"', JS))
    assert sent == set(wire.CLIENT_TYPES) - NOT_FROM_THE_PAGE
    # the page's hello config names only fields a SessionConfig has
    app = (WEB / "app.js").read_text(encoding="utf-8")
    literal = re.search(r"const config = \{(.*?)\};", app, re.S)
    assert literal, "app.js builds no `const config = {...}` for its hello"
    keys = set(re.findall(r"^\s*(\w+):", literal.group(1), re.M)) | set(re.findall(r"\bconfig\.(\w+) =", app))
    assert keys and keys <= {f.name for f in dataclasses.fields(wire.SessionConfig)}, sorted(keys)


@pytest.fixture(scope="module")
def page():
    """A blank page on a made-up origin, with wire.js imported as `window.wire`."""
    from playwright.sync_api import sync_playwright

    from tests.benchmark.report.test_viewer import CHROMIUM, CHROMIUM_ARGS

    files = {"/": ("text/html", "<!doctype html><title>wire</title>"), "/wire.js": ("text/javascript", JS)}

    def serve(route):
        content_type, body = files[route.request.url.removeprefix("http://wire.test")]
        route.fulfill(status=200, content_type=content_type, body=body)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.route("http://wire.test/**", serve)
            page.goto("http://wire.test/")
            page.evaluate("async () => { window.wire = await import('/wire.js'); }")
            yield page
        finally:
            browser.close()


def js_media(page, kind: str, t_ms: float, payload: bytes) -> bytes:
    script = "([kind, t, bytes]) => Array.from(new Uint8Array(wire.encodeMedia(wire[kind], t, new Uint8Array(bytes))))"
    return bytes(page.evaluate(script, [kind, t_ms, list(payload)]))


@pytest.mark.browser
def test_media_the_page_writes_is_read_by_the_python_codec(page):
    import cv2
    import numpy as np

    jpeg = cv2.imencode(".jpg", np.zeros((8, 8, 3), np.uint8))[1].tobytes()
    pcm = bytes(range(200))
    for kind, payload in (("KIND_AUDIO", pcm), ("KIND_FRAME", jpeg)):
        data = js_media(page, kind, 1234567.4, payload)
        assert data == wire.encode_media(getattr(wire, kind), 1234567, payload)
        assert data[: wire.HEADER.size] == wire.HEADER.pack(getattr(wire, kind), 1234567)
        media = wire.decode_media(data)
        assert (media.kind, media.t_ms, media.payload) == (getattr(wire, kind), 1234567, payload)
    assert js_media(page, "KIND_AUDIO", 2**40, b"")[: wire.HEADER.size] == wire.HEADER.pack(wire.KIND_AUDIO, 2**40)


@pytest.mark.browser
def test_messages_the_page_writes_are_read_by_the_python_codec(page):
    written = page.evaluate("""() => [
        wire.hello("secret", {backend: "local", partials: true, barge_in: true}),
        wire.turnEnd(1500.4), wire.replyCut(2, 812.6), wire.sessionEnd()]""")
    read = [client_messages.decode_client_message(text) for text in written]
    config = wire.SessionConfig(backend="local", partials=True, barge_in=True)
    assert read == [
        client_messages.Hello(token="secret", config=config),
        client_messages.TurnEnd(t_ms=1500),
        client_messages.ReplyCut(turn=2, played_ms=813),
        client_messages.SessionEnd(),
    ]
    for text, message in zip(written, read):  # the same field names, no more and no fewer
        names = {f.name for f in dataclasses.fields(message)} | ({"protocol"} if message.type == "hello" else set())
        assert set(json.loads(text)) - {"type"} == names, text


def smallest_event(cls):
    """An event with only its required fields set, each to a sample of its annotated type."""
    values = {}
    for f in dataclasses.fields(cls):
        if f.default is f.default_factory is dataclasses.MISSING:
            values[f.name] = SAMPLES[str(f.type).split("|")[0].strip()]
    return cls(**values)


@pytest.mark.browser
def test_every_server_event_the_python_codec_writes_is_read_by_the_page(page):
    written = {kind: wire.encode_event(smallest_event(cls)) for kind, cls in EVENT_TYPES.items()}
    read = page.evaluate(
        """(texts) => Object.fromEntries(Object.entries(texts).map(([kind, text]) => {
            try { return [kind, wire.decodeEvent(text).type]; } catch (err) { return [kind, String(err)]; }
        }))""",
        written,
    )
    assert read == {kind: kind for kind in EVENT_TYPES}
    refused = page.evaluate("""() => { try { wire.decodeEvent('{"type": "no.such"}'); return null; }
                                        catch (err) { return String(err); } }""")
    assert refused and "unknown server event type" in refused
