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

    provider = parse_model_id(model_id)[0]
    if provider in ("local", "replay"):
        return None
    if base_url:
        return base_url
    if provider in ("openai", "openai-realtime"):
        return os.environ.get("OPENAI_BASE_URL", "").strip() or None
    return None


def judge_base_url(flag_value: str | None, family: str | None, model: str | None) -> str | None:
    """A judge's endpoint: its flag, else WEARSIM_JUDGE_BASE_URL when the judge is an OpenAI-compatible one."""
    if flag_value:
        return flag_value
    env = os.environ.get("WEARSIM_JUDGE_BASE_URL", "").strip()
    if not env:
        return None
    family = (family or "").strip().lower()
    if model and ":" in model:
        return env if model.partition(":")[0] == "openai" else None
    return env if family in ("openai", "auto") else None
