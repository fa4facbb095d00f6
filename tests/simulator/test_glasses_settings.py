"""`wearsim simulate` and `wearsim bench --via stream` play the same glasses (`simulator.settings.
GlassesSettings`, one turn loop in `StreamConversation`): both records carry the settings in one shape
(`GlassesSettings.record`), and their defaults are the one set of constants."""

from __future__ import annotations

import json

import pytest

from benchmark.cli import main
from core.candidate import DEFAULT_MAX_TOKENS, GenerationConfig
from simulator.settings import SILENCE_MS, TURN_GAP_MS, GlassesSettings


def test_the_defaults_are_stated_once():
    glasses = GlassesSettings(backend="local")
    assert (glasses.silence_ms, glasses.gap_ms, glasses.max_tokens) == (SILENCE_MS, TURN_GAP_MS, DEFAULT_MAX_TOKENS)
    assert GenerationConfig().max_tokens == DEFAULT_MAX_TOKENS == 300 and (SILENCE_MS, TURN_GAP_MS) == (1500, 200)
    hello = glasses.hello_options()
    assert hello["silence_ms"] == SILENCE_MS and hello["max_tokens"] == DEFAULT_MAX_TOKENS
    assert "token" not in glasses.record() and "url" not in glasses.record()


@pytest.mark.whisper
def test_simulate_and_bench_record_the_same_glasses(server_url, backend, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "")
    log = tmp_path / "x.json"
    assert (
        main(["simulate", "sc-01", "--fast", "--server", server_url, "--model", "openai:fake", "--log", str(log)]) == 0
    )
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
            ]
        )
        == 0
    )
    simulated = json.loads(log.read_text())["glasses"]
    benched = json.loads((run / "manifest.json").read_text())["glasses"]
    assert set(simulated) == set(benched)
    for key, constant in (("silence_ms", SILENCE_MS), ("gap_ms", TURN_GAP_MS), ("max_tokens", DEFAULT_MAX_TOKENS)):
        assert simulated[key] == benched[key] == constant, key
    assert simulated["temperature"] == benched["temperature"] and simulated["end_of_turn"] == benched["end_of_turn"]
    assert simulated["speed"] is None and benched["speed"] is None  # --fast, and the bench's unpaced default
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
