"""Which judge grades a run: family resolution and `open_judge`.

`--judge-family auto` picks a family other than the candidate's, because a
model grading itself can score itself too high or too low:
claude -> gemini, gemini -> openai, openai -> gemini. A local or
open-weights candidate has no natural "other family", so `auto` asks for an
explicit one, unless no judge credentials exist at all, in which case the
lexical judge is used. Whenever the resolved family has no credentials, the
resolution falls back to `lexical` and its text says so; the runner writes
that text into the manifest and the findings flag the run as not graded by
the publication judge.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Mapping

from benchmark.judges.base import Judge

JUDGE_FAMILIES = ("openai", "gemini", "claude", "lexical")
AUTO_JUDGE_FAMILY = {"claude": "gemini", "gemini": "openai", "openai": "gemini"}
DEFAULT_JUDGE_MODELS = {
    "gemini": "gemini-2.5-flash",
    "openai": "gpt-4o-mini",
    "claude": "claude-sonnet-4-5",
}
# provider prefix of `open_candidate` model ids, per judge family
PROVIDER_PREFIX = {"gemini": "gemini", "openai": "openai", "claude": "anthropic"}
# any one of these set (non-empty) counts as credentials for the family
CREDENTIAL_VARIABLES = {
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "claude": ("ANTHROPIC_API_KEY",),
}
_SYNONYMS = {"anthropic": "claude"}


class JudgeFamilyError(ValueError):
    """The requested judge family cannot be resolved; the message says what to pass."""


def _normalise(family: str) -> str:
    family = (family or "").strip().lower()
    return _SYNONYMS.get(family, family)


def has_credentials(family: str, env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return any(env.get(name, "").strip() for name in CREDENTIAL_VARIABLES.get(family, ()))


def _credential_names(family: str) -> str:
    return " or ".join(CREDENTIAL_VARIABLES[family])


def resolve_judge_family(requested: str, candidate_family: str, *, env: Mapping[str, str] | None = None,
                         base_url: str | None = None) -> tuple[str, str]:
    """(judge family, one-line resolution text for the manifest).

    `base_url` (an OpenAI-compatible judge endpoint) counts as credentials
    for the openai family. `env` defaults to the process environment. The
    text names variables, never their values.
    """
    requested_n = _normalise(requested)
    candidate = _normalise(candidate_family)

    def available(family: str) -> bool:
        return has_credentials(family, env) or (family == "openai" and bool(base_url))

    if requested_n == "lexical":
        return "lexical", "lexical judge requested explicitly (not the publication judge)"
    if requested_n == "auto":
        if candidate not in AUTO_JUDGE_FAMILY:
            if not any(available(f) for f in DEFAULT_JUDGE_MODELS):
                return "lexical", (
                    f"auto: no judge credentials found for any family; using the lexical judge "
                    f"(not the publication judge) for a {candidate or 'unknown'} candidate"
                )
            raise JudgeFamilyError(
                f"--judge-family auto cannot pick a judge for a {candidate or 'unknown'!s} candidate "
                "(auto maps claude->gemini, gemini->openai, openai->gemini); pass an explicit "
                "--judge-family openai|gemini|claude|lexical"
            )
        family = AUTO_JUDGE_FAMILY[candidate]
        how = f"auto: {candidate} candidate -> {family} judge"
    elif requested_n in DEFAULT_JUDGE_MODELS:
        family = requested_n
        how = f"{family} judge requested explicitly"
        if family == candidate:
            how += " (same family as the candidate)"
    else:
        raise JudgeFamilyError(
            f"unknown judge family {requested!r}; choose one of auto, {', '.join(JUDGE_FAMILIES)}"
        )
    if not available(family):
        return "lexical", (
            f"{how}, but no credentials ({_credential_names(family)} unset); "
            "fell back to the lexical judge (not the publication judge)"
        )
    return family, how


def judge_model_id(family: str, model: str | None = None) -> str:
    """The `open_candidate` model id of a judge: `--judge-model` or the family default."""
    family = _normalise(family)
    if family not in DEFAULT_JUDGE_MODELS:
        raise JudgeFamilyError(f"no judge model for family {family!r}")
    model = model or DEFAULT_JUDGE_MODELS[family]
    if ":" in model:
        return model
    return f"{PROVIDER_PREFIX[family]}:{model}"


@contextlib.asynccontextmanager
async def open_judge(family: str, model: str | None = None, *, base_url: str | None = None) -> AsyncIterator[Judge]:
    """A ready `Judge` of the resolved family; model servers are closed on exit."""
    family = _normalise(family)
    if family == "lexical":
        from benchmark.judges.lexical import LexicalJudge

        yield LexicalJudge()
        return
    model_id = judge_model_id(family, model)
    from benchmark.candidates import open_candidate  # the RUNNER helper's adapters
    from benchmark.judges.llm import LLMJudge

    async with open_candidate(model_id, base_url=base_url) as candidate:
        yield LLMJudge(candidate, family=family, name=model_id)
