"""Which judge grades a run: family resolution and `open_judge`.

`--judge-family auto` picks a family other than the candidate's, because a
model grading itself can score itself too high or too low:
claude -> gemini, gemini -> openai, openai -> gemini. A local or
open-weights candidate (`local`, `replay`, or an `openai:` model on a custom
base URL, which may be any model) has no natural "other family", so `auto`
asks for an explicit one, unless no judge credentials exist at all, in which
case the offline fallback judge is used (`benchmark.judges.kinds`). When the
family `auto` picked has no credentials, the resolution falls back to that
judge and its text says so; the runner writes that text into the manifest and
the findings flag the run as not graded by the publication judge. An offline
kind needs no credentials. An explicit family without credentials is an error
naming the variable to set (never a silent fall back).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Mapping

from benchmark.judges.kinds import JUDGE_KINDS, offline_fallback, offline_kind
from candidates.providers import PROVIDERS
from core.judge import Judge


def _judging_providers():
    """The providers that judge for their family (`judge_model` set), in table order."""
    return [p for p in PROVIDERS.values() if p.judge_model]


# all read from the provider table (candidates/providers.py)
DEFAULT_JUDGE_MODELS = {p.family: p.judge_model for p in _judging_providers()}
AUTO_JUDGE_FAMILY = {p.family: p.auto_judge for p in _judging_providers() if p.auto_judge}
# provider prefix of `open_candidate` model ids, per judge family
PROVIDER_PREFIX = {p.family: p.name for p in _judging_providers()}
# any one of these set (non-empty) counts as credentials for the family
CREDENTIAL_VARIABLES = {
    p.family: (*p.key_variables, *((p.base_url_variable,) if p.base_url_variable else ())) for p in _judging_providers()
}
# the families whose judge may be any OpenAI-compatible server (`--judge-base-url`)
_ENDPOINT_FAMILIES = tuple(p.family for p in _judging_providers() if p.base_url_variable)
# a provider named where a family is meant (`--judge-family anthropic`)
_SYNONYMS = {p.name: p.family for p in _judging_providers() if p.name != p.family}


def judge_families() -> tuple[str, ...]:
    """Every family `--judge-family` takes: the model families, then the offline kinds."""
    return (*DEFAULT_JUDGE_MODELS, *JUDGE_KINDS)


class JudgeFamilyError(ValueError):
    """The requested judge family cannot be resolved; the message says what to pass."""


def _normalise(family: str) -> str:
    family = (family or "").strip().lower()
    return _SYNONYMS.get(family, family)


def _auto_map() -> str:
    return ", ".join(f"{c}->{j}" for c, j in sorted(AUTO_JUDGE_FAMILY.items()))


def has_credentials(family: str, env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return any(env.get(name, "").strip() for name in CREDENTIAL_VARIABLES.get(family, ()))


def _credential_names(family: str) -> str:
    return " or ".join(CREDENTIAL_VARIABLES[family])


DEFAULT_OPENAI_HOSTS = ("api.openai.com",)


def is_custom_endpoint(base_url: str | None) -> bool:
    """A base URL other than the provider's own cloud endpoint (None: the default)."""
    if not base_url or not base_url.strip():
        return False
    from urllib.parse import urlsplit

    host = (urlsplit(base_url.strip()).hostname or "").lower()
    return host not in DEFAULT_OPENAI_HOSTS


def endpoint_host(base_url: str | None) -> str | None:
    """The host (and port) of a base URL, for the manifest: never a path, a
    query or credentials; None for the default endpoint."""
    if not base_url or not base_url.strip():
        return None
    from urllib.parse import urlsplit

    parts = urlsplit(base_url.strip())
    host = parts.hostname or parts.path.split("/")[0] or "?"
    if ":" in host:  # IPv6
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port else host


def missing_key_message(family: str, flag: str = "--judge-family", base_url_flag: str = "--judge-base-url") -> str:
    """The error for an explicit judge family without credentials: which variable to set."""
    text = f"{flag} {family} needs credentials: set {_credential_names(family)} in the environment (or .env)"
    if family in _ENDPOINT_FAMILIES:
        text += f", or pass {base_url_flag} URL for an OpenAI-compatible judge server"
    return text + f"; {flag} {offline_fallback()} needs no key"


def resolve_judge_family(
    requested: str,
    candidate_family: str,
    *,
    env: Mapping[str, str] | None = None,
    base_url: str | None = None,
    candidate_base_url: str | None = None,
    flag: str = "--judge-family",
    base_url_flag: str = "--judge-base-url",
) -> tuple[str, str]:
    """(judge family, one-line resolution text for the manifest).

    `base_url` (an OpenAI-compatible judge endpoint) counts as credentials
    for the openai family. `candidate_base_url` is the candidate's endpoint:
    an `openai` candidate on a custom one is open-weights for `auto`.
    `env` defaults to the process environment. An explicit family without
    credentials raises `JudgeFamilyError` naming the variable (`flag` and
    `base_url_flag` name the command's options). The text names variables,
    never their values.
    """
    requested_n = _normalise(requested)
    candidate = _normalise(candidate_family)
    if candidate in _ENDPOINT_FAMILIES and is_custom_endpoint(candidate_base_url):
        candidate = f"open-weights (openai-compatible at {endpoint_host(candidate_base_url)})"

    def available(family: str) -> bool:
        return has_credentials(family, env) or (family in _ENDPOINT_FAMILIES and bool(base_url))

    if (kind := offline_kind(requested_n)) is not None:
        return kind.name, f"{kind.name} judge requested explicitly{kind.caveat}"
    fallback = JUDGE_KINDS[offline_fallback()]
    if requested_n == "auto":
        if candidate not in AUTO_JUDGE_FAMILY:
            if not any(available(f) for f in DEFAULT_JUDGE_MODELS):
                return fallback.name, (
                    f"auto: no judge credentials found for any family; using the {fallback.name} judge"
                    f"{fallback.caveat} for a {candidate or 'unknown'} candidate"
                )
            raise JudgeFamilyError(
                f"{flag} auto cannot pick a judge for a {candidate or 'unknown'!s} candidate "
                f"(auto maps {_auto_map()}; a local or open-weights model has no "
                f"other family); pass an explicit {flag} {'|'.join(judge_families())}"
            )
        family = AUTO_JUDGE_FAMILY[candidate]
        how = f"auto: {candidate} candidate -> {family} judge"
    elif requested_n in DEFAULT_JUDGE_MODELS:
        family = requested_n
        if not available(family):
            raise JudgeFamilyError(missing_key_message(family, flag, base_url_flag))
        how = f"{family} judge requested explicitly"
        if family == candidate:
            how += " (same family as the candidate)"
    else:
        raise JudgeFamilyError(f"unknown judge family {requested!r}; choose one of auto, {', '.join(judge_families())}")
    if not available(family):
        return fallback.name, (
            f"{how}, but no credentials ({_credential_names(family)} unset); "
            f"fell back to the {fallback.name} judge{fallback.caveat}"
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


_DEFAULT_CACHE = None


def set_default_cache(cache) -> None:
    """The response cache `open_judge` uses when it is given none (`wearsim rescore --cache` sets it)."""
    global _DEFAULT_CACHE
    _DEFAULT_CACHE = cache


@contextlib.asynccontextmanager
async def open_judge(
    family: str, model: str | None = None, *, base_url: str | None = None, cache=None, role: str = "judge"
) -> AsyncIterator[Judge]:
    """A ready `Judge` of the resolved family; model servers are closed on exit.

    `base_url` is the judge model's endpoint (None: the provider's default or
    OPENAI_BASE_URL). With `cache` (a `candidates.cache.ResponseCache`)
    the judge model's replies are stored and reused; `role` names the judge in
    the run's cache log ("judge" or "ranking judge")."""
    family = _normalise(family)
    if (kind := offline_kind(family)) is not None:
        yield kind.open()
        return
    model_id = judge_model_id(family, model)
    from benchmark.judges.llm import LLMJudge
    from candidates import open_candidate  # the RUNNER helper's adapters

    cache = cache if cache is not None else _DEFAULT_CACHE
    async with open_candidate(model_id, base_url=base_url) as candidate:
        if cache is not None:
            from candidates.cache import CachedCandidate

            candidate = CachedCandidate(candidate, cache, role=role, keyed_by_trial=False)
        yield LLMJudge(candidate, family=family, name=model_id)
