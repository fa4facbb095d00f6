"""The provider table (candidates/providers.py) and the describer registry (perception/describer_spec.py):
every reader of a provider or a describer goes through them, an unknown provider is refused with the known
ones named, and a chat provider added to the table (here only inside a test) works end to end."""

from __future__ import annotations

import asyncio

import pytest

from benchmark import cli
from candidates import open_candidate, providers
from candidates.model_ids import (
    candidate_family,
    default_model_id,
    is_local,
    is_realtime,
    missing_credentials,
    parse_model_id,
    price_key,
    transcription_model,
)
from candidates.providers import PROVIDERS, Provider
from core.candidate import GenerationConfig, Message, Reply, Usage
from perception import describer_spec

KNOWN = ("openai", "gemini", "anthropic", "openai-realtime", "gemini-live", "local", "replay")


class EchoCandidate:
    """The adapter of the test's `echo` provider: replies with the user's last message."""

    family = "echo"

    def __init__(self, model: str, *, model_id: str | None = None, base_url: str | None = None):
        self.model, self.model_id, self.base_url = model, model_id or f"echo:{model}", base_url
        self.closed = False

    async def respond(self, messages, system, config, on_delta=None) -> Reply:
        text = f"echo: {messages[-1].text}"
        if on_delta is not None:
            on_delta(text)
        return Reply(text=text, model=self.model, usage=Usage(input_tokens=1, output_tokens=1))

    async def aclose(self) -> None:
        self.closed = True


ECHO = Provider(
    name="echo",
    family="echo",
    opener=EchoCandidate,
    forms=(("echo:MODEL", "replies with the user's message (a test's provider)"),),
    key_variables=("ECHO_API_KEY",),
    bare_prefixes=("echo-",),
)


@pytest.fixture
def echo(monkeypatch):
    monkeypatch.setitem(PROVIDERS, "echo", ECHO)  # removed again after the test
    return ECHO


def test_the_table_holds_every_provider_and_the_model_id_functions_read_it():
    assert tuple(PROVIDERS) == KNOWN
    assert parse_model_id("local") == ("local", "") and parse_model_id("gpt-4o") == ("openai", "gpt-4o")
    assert parse_model_id("claude-sonnet-4-5") == ("anthropic", "claude-sonnet-4-5")
    assert candidate_family("anthropic:x") == "claude" and candidate_family("gemini-live:x") == "gemini"
    assert is_realtime("openai-realtime:x") and not is_realtime("openai:x") and is_local("local:/m.gguf")
    assert transcription_model("openai-realtime:x") == "openai:gpt-4o-mini-transcribe"
    assert price_key("local:/m/q.gguf") == "local" and price_key("gpt-4o") == "openai:gpt-4o"
    assert default_model_id({"GOOGLE_API_KEY": "k"}) == "gemini:gemini-2.5-flash" and default_model_id({}) == "local"
    assert missing_credentials("openai:x", env={}, base_url="http://127.0.0.1:1") is None
    assert "GEMINI_API_KEY or GOOGLE_API_KEY" in missing_credentials("gemini-live:x", env={})
    for provider in PROVIDERS.values():  # every opener can be found (each imports its module only now)
        assert callable(provider.load_opener())


def test_an_unknown_provider_is_a_value_error_naming_the_known_ones():
    with pytest.raises(ValueError) as raised:
        parse_model_id("nosuch:x")
    assert "'nosuch' is not a known provider" in str(raised.value)
    assert all(name in str(raised.value) for name in KNOWN)
    with pytest.raises(ValueError, match="known providers: openai, "):
        providers.get("nosuch")

    async def go():
        async with open_candidate("nosuch:x"):
            pass

    with pytest.raises(ValueError, match="not a known provider"):  # never a silent replay
        asyncio.run(go())


def test_bench_with_an_unknown_provider_exits_2_naming_the_known_providers(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["bench", "--model", "nosuch:x", "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert "nosuch:x" in err and all(name in err for name in KNOWN), err
    assert "Traceback" not in err and not out.exists()


def test_a_chat_provider_is_one_table_entry_and_one_adapter(echo, monkeypatch):
    assert parse_model_id("echo:x") == ("echo", "x") and parse_model_id("echo-small") == ("echo", "echo-small")
    assert candidate_family("echo:x") == "echo" and not is_realtime("echo:x")
    monkeypatch.delenv("ECHO_API_KEY", raising=False)
    assert missing_credentials("echo:x") == "echo:x needs an API key: set ECHO_API_KEY in the environment"
    monkeypatch.setenv("ECHO_API_KEY", "not-a-real-key")
    assert missing_credentials("echo:x") is None

    async def go():
        pieces = []
        async with open_candidate("echo:x", base_url="http://echo.invalid") as candidate:
            reply = await candidate.respond(
                [Message(role="user", text="where are my keys?")], "", GenerationConfig(), pieces.append
            )
        return candidate, reply, pieces

    candidate, reply, pieces = asyncio.run(go())
    assert isinstance(candidate, EchoCandidate) and candidate.closed
    assert (candidate.model, candidate.model_id, candidate.base_url) == ("x", "echo:x", "http://echo.invalid")
    assert reply.text == pieces[0] == "echo: where are my keys?"
    assert ("echo:MODEL", "replies with the user's message (a test's provider)") in providers.forms()


def test_the_test_provider_is_gone_after_its_test():
    assert "echo" not in PROVIDERS
    with pytest.raises(ValueError, match="not a known provider"):
        parse_model_id("echo:x")


def test_wearsim_models_lists_the_tables_forms_and_variables(echo, capsys):
    assert cli.main(["models"]) == 0
    out = capsys.readouterr().out
    for form, what in providers.forms():
        assert form in out and what in out
    assert "ECHO_API_KEY" in out and "echo-*" in out and "the claude judge" in out


def test_a_provider_entry_is_checked():
    with pytest.raises(ValueError, match="kind must be one of"):
        Provider(name="x", family="x", kind="video", opener="m:f", forms=(("x:MODEL", "x"),))
    with pytest.raises(ValueError, match="already in the table"):
        providers.register(PROVIDERS["openai"])


def test_the_describer_registry_answers_every_reader():
    assert describer_spec.local_names() == ("opencv", "authored", "ocr")
    assert describer_spec.model_describers() == ("openai", "gemini")
    assert describer_spec.choices() == "opencv, authored, ocr, openai:MODEL or gemini:MODEL"
    assert describer_spec.offered("default") == ("opencv", "authored") and describer_spec.offered("opt-in") == ("ocr",)
    assert describer_spec.blind_names() == ("opencv", "ocr")
    assert describer_spec.readers("synthetic") == ("authored", "ocr") and describer_spec.readers("pictograph") == ()
    assert describer_spec.cannot_read("opencv", "synthetic") and not describer_spec.cannot_read("ocr", "synthetic")
    assert not describer_spec.cannot_read("openai:gpt-4o-mini", "pictograph")
    assert describer_spec.describer_problem("openai:m") is None and describer_spec.describer_problem("openai")
    assert "unknown describer 'x'" in describer_spec.describer_problem("x")
    from streaming.server_settings import LOCAL_DESCRIBERS, OPT_IN_DESCRIBERS

    assert LOCAL_DESCRIBERS == ("opencv", "authored") and OPT_IN_DESCRIBERS == ("ocr",)


def test_every_offline_describer_of_the_registry_is_made():
    from perception.describers import make_describer

    for name in describer_spec.local_names():
        assert make_describer(name).name == name
