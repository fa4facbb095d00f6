"""The endpoint a model id reaches, as `bench`, `rescore` and `eval` resolve it from their flags and the
environment (`OPENAI_BASE_URL`, `WEARSIM_JUDGE_BASE_URL`)."""

from __future__ import annotations

import os


def effective_base_url(model_id: str | None, base_url: str | None) -> str | None:
    """The endpoint a model id will reach: the URL given, else for OpenAI-compatible ids OPENAI_BASE_URL;
    None for the provider's default endpoint and for models without one (local, replay)."""
    if not model_id:
        return None
    from candidates.model_ids import parse_model_id
    from candidates.providers import PROVIDERS

    provider = PROVIDERS[parse_model_id(model_id)[0]]
    if not provider.has_endpoint:
        return None
    if base_url:
        return base_url
    if provider.base_url_variable:  # an OpenAI-compatible id (candidates/providers.py)
        return os.environ.get(provider.base_url_variable, "").strip() or None
    return None


def judge_base_url(flag_value: str | None, family: str | None, model: str | None) -> str | None:
    """A judge's endpoint: its flag, else WEARSIM_JUDGE_BASE_URL when the judge is an OpenAI-compatible one."""
    if flag_value:
        return flag_value
    env = os.environ.get("WEARSIM_JUDGE_BASE_URL", "").strip()
    if not env:
        return None
    family = (family or "").strip().lower()
    from candidates.providers import PROVIDERS

    if model and ":" in model:
        provider = PROVIDERS.get(model.partition(":")[0])
        return env if provider is not None and provider.kind == "chat" and provider.base_url_variable else None
    compatible = {p.family for p in PROVIDERS.values() if p.judge_model and p.base_url_variable}
    return env if family in compatible or family == "auto" else None


NAME = r"[A-Za-z0-9._:/@+-]{1,200}"  # a model name an endpoint gives that a run may record and cite


def named_by_endpoint(model_id: str, base_url: str, model_flag: str, url_flag: str) -> str:
    """The model id to record for `model_id`, a name the user did not give (the family's default), reached
    at a custom OpenAI-compatible endpoint: the provider's prefix and the model the endpoint names in the
    `model` field of its reply to a one-token request, so that what a run records, prices and cites is
    what ran. `ValueError` of one line (the endpoint by host only) when the request fails, or the reply
    names no model, or only repeats the name it was sent (then nobody can tell what ran)."""
    import asyncio
    import re

    from benchmark.judges.family import endpoint_host
    from candidates.model_ids import parse_model_id
    from candidates.openai_chat import OpenAIChatCandidate
    from candidates.retry import RetryableError

    provider, sent = parse_model_id(model_id)
    where = f"{url_flag} {endpoint_host(base_url)}"

    async def ask() -> str | None:
        candidate = OpenAIChatCandidate(sent, model_id=model_id, base_url=base_url, attempts=1)
        try:
            return await candidate.served_model()
        finally:
            await candidate.aclose()

    try:
        named = asyncio.run(ask())
    except (RetryableError, RuntimeError) as exc:
        raise ValueError(
            f"{where}: asking the endpoint which model it serves failed ({exc}); pass {model_flag} NAME"
        ) from None
    if named is None or named == sent or not re.fullmatch(NAME, named):
        said = (
            "names no model"
            if named is None
            else f"only repeats the {sent!r} it was sent"
            if named == sent
            else "names its model in characters a run does not record"
        )
        raise ValueError(
            f"{where}: the endpoint's reply {said}, so nobody could tell which model ran; pass {model_flag} "
            "NAME (the model it serves) so the run records and cites it"
        )
    return f"{provider}:{named}"


def named_judge(given: str | None, model_id: str, base_url: str | None) -> str | None:
    """`--judge-model` as given; without it, a judge at a custom OpenAI-compatible endpoint (`base_url`, the
    one it reaches) as that endpoint names it (`endpoints.named_by_endpoint`: never the family's default);
    else None (the family's default, at the provider's own endpoint)."""
    from benchmark.judges.family import is_custom_endpoint
    from candidates.model_ids import parse_model_id
    from candidates.providers import PROVIDERS

    provider = PROVIDERS[parse_model_id(model_id)[0]]
    if given or not base_url or not is_custom_endpoint(base_url) or provider.kind != "chat":
        return given
    return named_by_endpoint(model_id, base_url, "--judge-model", "--judge-base-url")
