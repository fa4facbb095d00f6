"""`wearsim simulate` and `wearsim bench --via stream` play the same glasses (`simulator.settings.
GlassesSettings`, one turn loop in `StreamConversation`), built by one builder from one flag group
(`benchmark/cli/glasses_args.py`): the same flags record the same settings, and every hello default is
`streaming.wire.SessionConfig`'s."""

from __future__ import annotations

import inspect
import json

import pytest

from benchmark.cli import build_parser, main
from benchmark.cli.glasses_args import glasses_settings
from core.candidate import DEFAULT_MAX_TOKENS, GenerationConfig
from perception.speech import SILENCE_MS, SpeechSegmenter
from simulator.settings import TURN_GAP_MS, GlassesSettings
from streaming.wire import SessionConfig

# every flag of the shared group set away from its default (and the pacing both commands take)
SAME_FLAGS = [
    "--describer",
    "authored",
    "--silence-ms",
    "900",
    "--end-of-turn",
    "silence",
    "--frame-size",
    "320",
    "--frame-quality",
    "80",
    "--synthetic-frames",
    "--jitter-ms",
    "5",
    "--speed",
    "8",
]


def test_the_defaults_are_stated_once():
    glasses = GlassesSettings(hello=SessionConfig())
    record = glasses.record()
    assert (record["silence_ms"], record["gap_ms"], record["max_tokens"]) == (
        SILENCE_MS,
        TURN_GAP_MS,
        DEFAULT_MAX_TOKENS,
    )
    assert GenerationConfig().max_tokens == DEFAULT_MAX_TOKENS == 300 and (SILENCE_MS, TURN_GAP_MS) == (1500, 200)
    segmenter_default = inspect.signature(SpeechSegmenter).parameters["silence_ms"].default
    assert segmenter_default == SessionConfig().silence_ms == SILENCE_MS  # the server's, for a hello naming none
    assert "token" not in record and "url" not in record


def test_the_two_commands_build_the_same_glasses_from_the_same_flags():
    parser = build_parser()
    simulated = parser.parse_args(["simulate", "sc-01", "--model", "openai:fake", *SAME_FLAGS])
    benched = parser.parse_args(["bench", "--via", "stream", "--model", "openai:fake", *SAME_FLAGS])
    a = glasses_settings(simulated, backend=simulated.model, output=simulated.output)
    b = glasses_settings(
        benched,
        backend=benched.model,
        max_tokens=benched.max_tokens,
        temperature=benched.temperature,
        output=benched.output,
    )
    assert a.record() == b.record()
    assert a.hello == b.hello and a.hello.describer == "authored" and a.hello.silence_ms == 900
    defaults = glasses_settings(parser.parse_args(["simulate", "sc-01"]), backend="local").hello
    assert defaults == SessionConfig(backend="local")  # no flag: every hello default is SessionConfig's


@pytest.mark.whisper
def test_simulate_and_bench_record_the_same_glasses(server_url, backend, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "")
    log = tmp_path / "x.json"
    simulate = ["simulate", "sc-01", "--server", server_url, "--model", "openai:fake", "--log", str(log)]
    assert main([*simulate, *SAME_FLAGS]) == 0
    out = capsys.readouterr().out
    assert "Turn 1\n  heard:" in out and "Verdict (lexical judge" in out  # still printed as the events come
    asked = len(backend.requests)
    run = tmp_path / "run"
    assert (
        main(
            [
                "bench",
                "--via",
                "stream",
                "--server",
                server_url,
                "--model",
                "openai:fake",
                "--judge-family",
                "lexical",
                "--conditions",
                "baseline",
                "--limit",
                "1",
                "--output-dir",
                str(run),
                *SAME_FLAGS,
            ]
        )
        == 0
    )
    simulated = json.loads(log.read_text())["glasses"]
    benched = json.loads((run / "manifest.json").read_text())["glasses"]
    assert simulated == benched  # the same flags: the same glasses, recorded alike
    assert (simulated["silence_ms"], simulated["describer"], simulated["speed"]) == (900, "authored", 8.0)
    assert (simulated["gap_ms"], simulated["max_tokens"]) == (TURN_GAP_MS, DEFAULT_MAX_TOKENS)
    # what the server asked of the backend, for both: the same reply cap
    caps = {request.get("max_tokens") for request in backend.requests}
    assert len(backend.requests) > asked and caps == {DEFAULT_MAX_TOKENS}, caps
    direct = tmp_path / "direct"
    assert (
        main(
            [
                "bench",
                "--via",
                "direct",
                "--model",
                "openai:fake",
                "--base-url",
                backend.base_url,
                "--judge-family",
                "lexical",
                "--conditions",
                "baseline",
                "--limit",
                "1",
                "--output-dir",
                str(direct),
            ]
        )
        == 0
    )
    assert json.loads((direct / "manifest.json").read_text())["glasses"] is None
