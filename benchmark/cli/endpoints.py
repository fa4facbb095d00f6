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
    if provider.kind in ("local", "replay"):
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
