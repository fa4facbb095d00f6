"""Judge family resolution, default judge models and `open_judge`."""

import contextlib

import pytest

import candidates
from benchmark.judges import DEFAULT_JUDGE_MODELS, JudgeFamilyError, judge_model_id, open_judge, resolve_judge_family
from benchmark.judges.lexical import LexicalJudge
from benchmark.judges.llm import LLMJudge

ALL_KEYS = {"OPENAI_API_KEY": "sk-test-not-real", "GEMINI_API_KEY": "g-test", "ANTHROPIC_API_KEY": "a-test"}


@pytest.mark.parametrize(
    "candidate, judge",
    [
        ("claude", "gemini"),
        ("anthropic", "gemini"),
        ("gemini", "openai"),
        ("openai", "gemini"),
    ],
)
def test_auto_picks_another_family(candidate, judge):
    family, text = resolve_judge_family("auto", candidate, env=ALL_KEYS)
    assert family == judge
    assert "auto" in text and judge in text


def test_explicit_family_is_kept_and_same_family_is_noted():
    assert resolve_judge_family("claude", "openai", env=ALL_KEYS)[0] == "claude"
    family, text = resolve_judge_family("openai", "openai", env=ALL_KEYS)
    assert family == "openai" and "same family" in text


def test_missing_credentials_fall_back_to_lexical_and_say_so():
    family, text = resolve_judge_family("auto", "openai", env={"OPENAI_API_KEY": "sk-x"})
    assert family == "lexical"
    assert "GEMINI_API_KEY" in text and "lexical" in text and "not the publication judge" in text
    assert "sk-x" not in text  # names variables, never values


def test_explicit_family_without_credentials_is_an_error_naming_the_variable():
    # an explicit family never falls back silently to the lexical judge (issue 12)
    with pytest.raises(JudgeFamilyError, match="ANTHROPIC_API_KEY"):
        resolve_judge_family("claude", "gemini", env={})


def test_local_candidate_with_auto_needs_an_explicit_family_when_keys_exist():
    with pytest.raises(JudgeFamilyError, match="explicit --judge-family"):
        resolve_judge_family("auto", "local", env={"OPENAI_API_KEY": "k"})


def test_local_candidate_with_auto_and_no_keys_uses_lexical():
    family, text = resolve_judge_family("auto", "local", env={})
    assert family == "lexical" and "no judge credentials" in text


def test_base_url_counts_for_an_openai_compatible_judge():
    assert resolve_judge_family("openai", "local", env={}, base_url="http://127.0.0.1:9/v1")[0] == "openai"


def test_lexical_requested_and_unknown_family():
    assert resolve_judge_family("lexical", "openai", env=ALL_KEYS)[0] == "lexical"
    with pytest.raises(JudgeFamilyError, match="unknown judge family 'mistral'"):
        resolve_judge_family("mistral", "openai", env=ALL_KEYS)


def test_default_models_and_override():
    assert DEFAULT_JUDGE_MODELS == {
        "gemini": "gemini-2.5-flash",
        "openai": "gpt-4o-mini",
        "claude": "claude-sonnet-4-5",
    }
    assert judge_model_id("gemini") == "gemini:gemini-2.5-flash"
    assert judge_model_id("claude") == "anthropic:claude-sonnet-4-5"
    assert judge_model_id("openai", "gpt-4.1") == "openai:gpt-4.1"
    assert judge_model_id("openai", "openai:my-model") == "openai:my-model"


async def test_open_judge_lexical_needs_no_model():
    async with open_judge("lexical") as judge:
        assert isinstance(judge, LexicalJudge) and judge.name == "lexical"


async def test_open_judge_llm_goes_through_open_candidate(monkeypatch):
    opened = []

    class FakeCandidate:
        family = "openai"

        def __init__(self, model_id):
            self.model_id = model_id

    @contextlib.asynccontextmanager
    async def fake_open_candidate(model_id, *, base_url=None, log_dir=None):
        opened.append((model_id, base_url))
        yield FakeCandidate(model_id)
        opened.append("closed")

    monkeypatch.setattr(candidates, "open_candidate", fake_open_candidate, raising=False)
    async with open_judge("openai", "gpt-4.1", base_url="http://127.0.0.1:1/v1") as judge:
        assert isinstance(judge, LLMJudge)
        assert judge.name == "openai:gpt-4.1" and judge.family == "openai"
    assert opened == [("openai:gpt-4.1", "http://127.0.0.1:1/v1"), "closed"]
