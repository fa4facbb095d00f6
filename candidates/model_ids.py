"""Model ids: the forms `open_candidate` takes, which provider each names,
which keys it needs, and what it can reply with, all read from the provider
table (`candidates.providers`). Imports nothing else of ours, so every adapter
and the wire codec can use it without reaching the factory."""

from __future__ import annotations

import os

from candidates.providers import LOCAL, PROVIDERS, REALTIME, bundled_model_id, form_list, known, realtime_forms


def _provider(model_id: str):
    return PROVIDERS[parse_model_id(model_id)[0]]


def missing_credentials(
    model_id: str, *, base_url: str | None = None, env=None, base_url_flag: str = "--base-url"
) -> str | None:
    """None when `model_id` can be opened with the keys at hand; otherwise one
    line naming the environment variable to set (never a value) and, for
    OpenAI-compatible ids, the command's endpoint flag (`base_url_flag`)."""
    env = os.environ if env is None else env
    provider = _provider(model_id)
    names = provider.key_variables
    if not names or any(env.get(name, "").strip() for name in names):
        return None
    if base_url and provider.keyless_at_base_url:
        return None  # a server of one's own (a conformance server, a local gateway) decides whether it wants one
    if provider.base_url_variable:
        if base_url or env.get(provider.base_url_variable, "").strip():
            return None  # a local OpenAI-compatible endpoint needs no key
        return (
            f"{model_id} needs an API key: set {' or '.join(names)} in the environment, "
            f"or pass {base_url_flag} for a local OpenAI-compatible endpoint"
        )
    return f"{model_id} needs an API key: set {' or '.join(names)} in the environment"


def parse_model_id(model_id: str) -> tuple[str, str]:
    """(provider, model) from `provider:model` or a bare id inferred by prefix
    (the table in `candidates.providers`)."""
    model_id = model_id.strip()
    whole = PROVIDERS.get(model_id)
    if whole is not None and whole.model_optional:
        return model_id, ""
    provider, sep, model = model_id.partition(":")
    if sep and provider in PROVIDERS:
        if not model:
            raise ValueError(f"model id {model_id!r} names no model after '{provider}:'")
        return provider, model
    for entry in PROVIDERS.values():
        if entry.bare_prefixes and model_id.startswith(entry.bare_prefixes):
            return entry.name, model_id
    unknown = f"{provider!r} is not a known provider (known providers: {known()}); " if sep else ""
    raise ValueError(f"cannot tell the provider of model id {model_id!r}: {unknown}write {form_list()}")


def candidate_family(model_id: str) -> str:
    """The judge-resolution family of a model id (openai, gemini, claude, local, replay)."""
    return _provider(model_id).family


def retired_problem(model_id: str) -> str | None:
    """One line when the provider has shut `model_id` down (its requests could only fail), else None."""
    try:
        provider, model = parse_model_id(model_id)
    except ValueError:
        return None
    entry = PROVIDERS[provider]
    for retired, when, source in entry.retired_models:
        if model == retired:
            current = ", ".join(f"{provider}:{m}" for m, _, _ in entry.current_models)
            return (
                f"{model_id} was shut down by the provider on {when} ({source}); current ids: {current} "
                f"(wearsim models)"
            )
    return None


OUTPUTS = ("text", "audio")  # what a candidate replies with; audio only from a realtime API


def transcription_model(model_id: str | None) -> str | None:
    """The model that transcribes `model_id`'s audio input and bills apart, or None (no such model)."""
    try:
        return _provider(model_id).transcription_model if model_id else None
    except ValueError:
        return None


def is_local(model_id: str) -> bool:
    """The embedded llama.cpp model (`local`, `local:PATH.gguf`): it runs here and costs nothing."""
    try:
        return _provider(model_id).kind == LOCAL
    except ValueError:
        return False


def is_realtime(model_id: str) -> bool:
    """A streaming multimodal API (OpenAI Realtime, Gemini Live)."""
    return _provider(model_id).kind == REALTIME


def output_problem(model_id: str, output: str) -> str | None:
    """Why `model_id` cannot reply with `output`, said after the output's name; None when it can."""
    if output == "text" or is_realtime(model_id):
        return None
    forms = form_list(realtime_forms())
    return f"needs a realtime model ({forms}); {model_id} replies in text"


def default_model_id(env=None) -> str:
    """The first provider's default model whose key is set (table order); `local` when no key is."""
    env = os.environ if env is None else env
    for provider in PROVIDERS.values():
        if provider.default_model and any(env.get(name) for name in provider.key_variables):
            return provider.default_model
    return bundled_model_id()


def price_key(model_id: str) -> str:
    """The price table entry a model id is priced by, after its own id: its provider's shared entry
    (`local`) or `provider:model`."""
    provider, model = parse_model_id(model_id)
    shared = _provider(model_id).price_key
    return shared or f"{provider}:{model}"
