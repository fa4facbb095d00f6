"""The SDK floors in pyproject.toml hold every call the realtime adapters make.

The minimums were found by bisecting the releases for these calls and then
running the realtime, provider, probe and long live-page tests against
exactly openai 1.103.0 and google-genai 1.14.0 (google-genai 1.12.1 and 1.13
refuse `input_audio_transcription` for the Developer API; openai 1.102 has no
GA realtime client). Lowering a floor below them, or an installed SDK that
lacks one of the calls, fails here rather than with an AttributeError when a
session opens."""

from __future__ import annotations

import inspect
import re
import tomllib
from importlib.metadata import version

from packaging.version import Version

from tests.paths import ROOT

MINIMUM = {"openai": Version("1.103.0"), "google-genai": Version("1.14.0")}


def _floors() -> dict[str, Version]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    floors = {}
    for requirement in project["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?>=([0-9][0-9.]*)", requirement.replace(" ", ""))
        if match and match.group(1) in MINIMUM:
            floors[match.group(1)] = Version(match.group(2))
    return floors


def test_the_declared_floors_are_not_below_the_calls_the_adapters_make():
    floors = _floors()
    assert set(floors) == set(MINIMUM), floors
    for package, minimum in MINIMUM.items():
        assert floors[package] >= minimum, f"{package}>={floors[package]} is below {minimum}"
        assert Version(version(package)) >= floors[package]


def _params(function) -> set[str]:
    return set(inspect.signature(function).parameters)


def test_the_installed_openai_sdk_has_every_realtime_call_the_adapter_makes():
    from openai import AsyncOpenAI
    from openai.resources.realtime.realtime import AsyncRealtime, AsyncRealtimeConnection

    assert {"api_key", "base_url", "websocket_base_url", "max_retries"} <= _params(AsyncOpenAI.__init__)
    assert "model" in _params(AsyncRealtime.connect)
    assert {"send", "recv_bytes", "close"} <= set(dir(AsyncRealtimeConnection))


def test_the_installed_genai_sdk_has_every_live_call_the_adapter_makes():
    from google.genai import live, types

    assert {"audio", "video", "text", "activity_start", "activity_end"} <= _params(
        live.AsyncSession.send_realtime_input
    )
    assert {"turns", "turn_complete"} <= _params(live.AsyncSession.send_client_content)
    assert "receive" in dir(live.AsyncSession)
    fields = {
        types.LiveConnectConfig: {
            "response_modalities",
            "system_instruction",
            "max_output_tokens",
            "temperature",
            "input_audio_transcription",
            "output_audio_transcription",
            "realtime_input_config",
            "context_window_compression",
            "session_resumption",
        },
        types.ContextWindowCompressionConfig: {"sliding_window"},
        types.SessionResumptionConfig: {"handle"},
        types.RealtimeInputConfig: {"automatic_activity_detection"},
        types.AutomaticActivityDetection: {"disabled"},
        types.LiveServerMessage: {"server_content", "usage_metadata", "go_away", "session_resumption_update"},
        types.LiveServerContent: {
            "model_turn",
            "turn_complete",
            "interrupted",
            "input_transcription",
            "output_transcription",
        },
        types.LiveServerSessionResumptionUpdate: {"new_handle", "resumable", "last_consumed_client_message_index"},
        types.LiveServerGoAway: {"time_left"},
        types.HttpOptions: {"base_url", "api_version"},
    }
    for model, needed in fields.items():
        assert needed <= set(model.model_fields), (model.__name__, needed - set(model.model_fields))
    assert {"ActivityStart", "ActivityEnd", "Blob", "AudioTranscriptionConfig", "SlidingWindow"} <= set(dir(types))
