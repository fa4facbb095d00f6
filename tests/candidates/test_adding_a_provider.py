"""Adding a realtime provider is one entry in the provider table and one adapter module, as
docs/architecture.md says: both are defined here, and no other file of the project is touched. The
new provider then opens through `open_candidate`, is listed by `wearsim models`, and plays a
stream cell of `wearsim bench --via stream` through the server's live backend."""

from __future__ import annotations

import asyncio
import json
import textwrap

import pytest

from benchmark import cli
from candidates import open_candidate
from candidates.providers import PROVIDERS, Provider
from core.candidate import GenerationConfig, Message

REPLY = "It is the one you are holding now."
ADAPTER = textwrap.dedent(
    f'''
    """A live API that answers every turn with the same words, and keeps what it was sent."""
    from core.candidate import Reply


    class EchoLiveSession:
        input_rate = 16000
        replays_history = True
        opened = []

        def __init__(self, model_id, system):
            self.model_id, self.system, self.sent = model_id, system, []

        @classmethod
        async def open(cls, model, model_id, system, *, base_url, output, streaming_input, config, trace=None):
            session = cls(model_id, system)
            cls.opened.append(session)
            return session

        async def send_audio(self, pcm16):
            self.sent.append(("audio", len(pcm16)))

        async def speech_started(self):
            self.sent.append(("speech", 0))

        async def send_user(self, text, images=()):
            self.sent.append(("user", text, len(images)))

        async def send_assistant(self, text):
            self.sent.append(("assistant", text))

        async def respond(self, *, audio_turn, on_delta=None, on_audio=None):
            if on_delta is not None:
                on_delta({REPLY!r})
            return Reply(text={REPLY!r}, model=self.model_id)

        async def interrupt(self):
            pass

        async def truncate(self, item, played_ms):
            pass

        async def aclose(self):
            pass
    '''
)


@pytest.fixture
def echo_live(tmp_path, monkeypatch):
    """The provider `echo-live`: its table entry, and its adapter module written beside the test."""
    folder = tmp_path / "adapters"
    folder.mkdir()
    (folder / "echo_live_adapter.py").write_text(ADAPTER)
    monkeypatch.syspath_prepend(str(folder))
    entry = Provider(
        name="echo-live",
        family="echo",
        kind="realtime",
        opener="candidates.factory:open_realtime",
        session="echo_live_adapter:EchoLiveSession",
        forms=(("echo-live:MODEL", "a live API that answers every turn alike"),),
        current_models=(("echo-1", "the only echo model", "this test"),),
    )
    monkeypatch.setitem(PROVIDERS, entry.name, entry)
    import echo_live_adapter

    echo_live_adapter.EchoLiveSession.opened.clear()
    return echo_live_adapter.EchoLiveSession


def test_a_new_realtime_provider_opens_through_open_candidate(echo_live):
    async def ask() -> str:
        async with open_candidate("echo-live:echo-1") as candidate:
            reply = await candidate.respond(
                [Message(role="user", text="What am I holding?")], "Be brief.", GenerationConfig()
            )
            return reply.text

    assert asyncio.run(ask()) == REPLY
    assert [s.model_id for s in echo_live.opened] == ["echo-live:echo-1"]
    assert ("user", "What am I holding?", 0) in [part[:3] for part in echo_live.opened[0].sent]


def test_wearsim_models_lists_the_new_provider(echo_live, capsys):
    assert cli.main(["models", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {"form": "echo-live:MODEL", "what": "a live API that answers every turn alike"} in listed["model_id_forms"]
    assert "echo-live:echo-1" in [m["model_id"] for m in listed["realtime_models"]["current"]]


@pytest.mark.whisper
def test_a_stream_cell_plays_through_the_new_providers_live_session(echo_live, tmp_path):
    out = tmp_path / "run"
    code = cli.main(
        [
            "bench",
            "--model",
            "echo-live:echo-1",
            "--via",
            "stream",
            "--limit",
            "1",
            "--synthetic-frames",
            "--judge-family",
            "lexical",
            "--output-dir",
            str(out),
        ]
    )
    assert code == 0
    records = [json.loads(line) for line in (out / "transcripts.jsonl").read_text().splitlines()]
    assert records and {r["via"] for r in records} == {"stream"}
    assert all(turn["reply"]["text"] == REPLY for record in records for turn in record["turns"])
    assert echo_live.opened, "the server's live backend never opened the provider's session"
    heard = [part for session in echo_live.opened for part in session.sent if part[0] == "audio"]
    assert heard, "the glasses' audio never reached the live session"
