"""Issue 57 row 3: `wearsim probe` against a hostile realtime server that hides the key as a property
name, as 4-character pieces taking turns between two delta kinds, as 7-character pieces across the
fields of one event, and upper-cased: no 8-character run of the key, in any case, is left in stdout,
stderr or the trace (nor in the strings of the trace joined in order, however they are grouped)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from benchmark.probe.trace import Redactor, without_media
from tests.fake_realtime import TEST_KEY, FakeOpenAIRealtime

KEY = TEST_KEY


def runs_of_the_key(text: str) -> list[str]:
    """Every 8-character piece of the key that `text` holds, in any case."""
    folded, key = text.lower(), KEY.lower()
    return [key[i : i + 8] for i in range(len(key) - 7) if key[i : i + 8] in folded]


def hostile_events() -> list[dict]:
    four = [KEY[i : i + 4] for i in range(0, len(KEY), 4)]
    seven = [KEY[i : i + 7] for i in range(0, len(KEY), 7)]
    kinds = ("response.output_audio_transcript.delta", "response.output_text.delta")
    return [
        {"type": "response.output_text.annotation", "annotations": {KEY: "see the name", "other": 1}},
        *({"type": kinds[i % 2], "delta": piece} for i, piece in enumerate(four)),
        {"type": "response.metadata", **{f"part_{i}": piece for i, piece in enumerate(seven)}},
        {"type": "response.metadata", "note": f"the key is {KEY.upper()} in capitals"},
    ]


def strings(value, names: bool = True):
    if isinstance(value, dict):
        for k, v in value.items():
            if names:
                yield str(k)
            yield from strings(v, names)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v, names)
    elif isinstance(value, str):
        yield value


def leaks(text: str) -> list[str]:
    """The key's runs in the trace's text, and in its strings joined in order: all of them, the values
    alone, and each field name's values (a delta's pieces, whatever kind of delta)."""
    lines = [json.loads(line)["message"] for line in text.splitlines() if line.strip()]
    joined = ["".join(strings(lines)), "".join(strings(lines, names=False))]
    by_name: dict[str, list[str]] = {}
    for message in lines:
        for k, v in message.items():
            if isinstance(v, str) and not v.startswith("<"):
                by_name.setdefault(k, []).append(v)
    return runs_of_the_key(text + "\n" + "\n".join(joined + ["".join(v) for v in by_name.values()]))


def test_the_redactor_leaves_no_run_of_the_key_in_names_pieces_or_capitals():
    redactor = Redactor([KEY])
    audio = {"type": "response.output_audio.delta", "delta": "AAAA" * 20}
    messages = []
    for event in hostile_events():
        messages += [without_media(audio), without_media(event)]
    shown = redactor.messages(messages)
    text = "".join(json.dumps({"message": m}) + "\n" for m in shown)
    assert leaks(text) == []
    assert "[redacted]" in shown[1]["annotations"] and shown[1]["annotations"]["other"] == 1
    assert runs_of_the_key(redactor.text(f"reply: {KEY.upper()}!")) == []
    assert redactor.text("It is the screwdriver in your hand.") == "It is the screwdriver in your hand."


class HostileRealtime(FakeOpenAIRealtime):
    """Before each answer: the key as a property name, in alternating 4-character deltas, in 7-character
    pieces over one event's fields and upper-cased; the reply names the key upper-cased too."""

    async def _answer(self, ws, record):
        for event in hostile_events():
            await self._send(ws, **event)
        await super()._answer(ws, record)


@pytest.mark.slow
def test_probe_against_a_hostile_server_leaves_no_run_of_the_key_anywhere(tmp_path):
    trace = tmp_path / "hostile.jsonl"
    with HostileRealtime(reply=f"Your key is {KEY.upper()} and it is the screwdriver.") as server:
        done = subprocess.run(
            [sys.executable, "-m", "benchmark", "probe", "openai-realtime:gpt-realtime-2"]
            + ["--base-url", server.base_url, "--trace", str(trace)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "OPENAI_API_KEY": KEY},
        )
    assert trace.exists(), done.stderr
    assert runs_of_the_key(done.stdout) == [] and runs_of_the_key(done.stderr) == []
    assert leaks(trace.read_text(encoding="utf-8")) == []
    assert "[redacted]" in trace.read_text(encoding="utf-8")
