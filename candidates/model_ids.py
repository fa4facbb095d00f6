"""Model ids: the forms `open_candidate` takes, which provider each names,
which keys it needs, and what it can reply with. Imports nothing of ours, so
every adapter and the wire codec can use it without reaching the factory."""

from __future__ import annotations

import os

LOCAL_FAMILY = "local"
# provider -> the environment variables any one of which gives it credentials
PROVIDER_KEYS = {
    "openai": ("OPENAI_API_KEY",),
    "openai-realtime": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "gemini-live": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "anthropic": ("ANTHROPIC_API_KEY",),
}
# the model id forms `open_candidate` takes, for `wearsim models` and error messages
MODEL_ID_FORMS = (
    ("openai:MODEL", "any OpenAI-compatible chat endpoint (OpenAI, or --base-url for vLLM, Ollama, llama.cpp)"),
    ("gemini:MODEL", "Google Gemini through google-genai"),
    ("anthropic:MODEL", "Anthropic Claude (pip install 'wearsim[anthropic]')"),
    ("openai-realtime:MODEL", "OpenAI Realtime API: one live session per conversation"),
    ("gemini-live:MODEL", "Gemini Live API: one live session per conversation"),
    ("local", "the embedded llama.cpp server with the bundled SmolLM2-135M-Instruct GGUF (no key)"),
    ("local:PATH.gguf", "the embedded llama.cpp server with another GGUF file (no key)"),
    ("replay:RUN_DIR", "replies recorded in a run dir, looked up by prompt (no key)"),
)


def missing_credentials(model_id: str, *, base_url: str | None = None, env=None,
                        base_url_flag: str = "--base-url") -> str | None:
    """None when `model_id` can be opened with the keys at hand; otherwise one
    line naming the environment variable to set (never a value) and, for
    OpenAI-compatible ids, the command's endpoint flag (`base_url_flag`)."""
    env = os.environ if env is None else env
    provider, _ = parse_model_id(model_id)
    names = PROVIDER_KEYS.get(provider)
    if not names or any(env.get(name, "").strip() for name in names):
        return None
    if provider in ("openai", "openai-realtime"):
        if base_url or env.get("OPENAI_BASE_URL", "").strip():
            return None  # a local OpenAI-compatible endpoint needs no key
        return (f"{model_id} needs an API key: set OPENAI_API_KEY in the environment, "
                f"or pass {base_url_flag} for a local OpenAI-compatible endpoint")
    return f"{model_id} needs an API key: set {' or '.join(names)} in the environment"


def parse_model_id(model_id: str) -> tuple[str, str]:
    """(provider, model) from `provider:model` or a bare id inferred by prefix."""
    model_id = model_id.strip()
    if model_id == "local":
        return "local", ""
    provider, sep, model = model_id.partition(":")
    if sep and provider in {"openai", "gemini", "anthropic", "local", "replay", "openai-realtime", "gemini-live"}:
        if not model:
            raise ValueError(f"model id {model_id!r} names no model after '{provider}:'")
        return provider, model
    if model_id.startswith(("gpt-", "o1", "o3", "o4", "chatgpt-")):
        return "openai", model_id
    if model_id.startswith("gemini-"):
        return "gemini", model_id
    if model_id.startswith("claude-"):
        return "anthropic", model_id
    raise ValueError(
        f"cannot tell the provider of model id {model_id!r}: write openai:MODEL, gemini:MODEL, "
        "anthropic:MODEL, openai-realtime:MODEL, gemini-live:MODEL, local, local:PATH.gguf or replay:RUN_DIR")


def candidate_family(model_id: str) -> str:
    """The judge-resolution family of a model id (openai, gemini, claude, local, replay)."""
    provider, _ = parse_model_id(model_id)
    return {"anthropic": "claude", "openai-realtime": "openai", "gemini-live": "gemini"}.get(provider, provider)


REALTIME_PROVIDERS = ("openai-realtime", "gemini-live")

# Realtime model ids the providers list as current, with where and when that was checked. The providers
# rename these often: check the source before relying on one, and update this table (and prices.toml).
CHECKED = "2026-11-25"
REALTIME_MODELS = (
    ("openai-realtime:gpt-realtime-2", "OpenAI's most capable realtime voice model (reasoning)",
     "https://developers.openai.com/api/docs/models/gpt-realtime-2"),
    ("openai-realtime:gpt-realtime-2.1-mini", "OpenAI's smaller, cheaper realtime reasoning model",
     "https://developers.openai.com/api/docs/models/gpt-realtime-2.1-mini"),
    ("openai-realtime:gpt-realtime-1.5", "OpenAI's earlier flagship realtime voice model",
     "https://developers.openai.com/api/docs/models/gpt-realtime-1.5"),
    ("gemini-live:gemini-3.8-live", "Google's default stable Live model; replies in audio (read through its "
     "output transcription)", "https://ai.google.dev/gemini-api/docs/models/gemini-3.8-live"),
    ("gemini-live:gemini-3.1-flash-live-preview", "Google's previous-generation Live preview",
     "https://ai.google.dev/gemini-api/docs/models/gemini-3.1-flash-live-preview"),
)
# model ids the provider has shut down: (model id, the date, where it says so)
RETIRED = (
    ("gemini-live:gemini-live-2.5-flash-preview", "2025-12-09", "https://ai.google.dev/gemini-api/docs/deprecations"),
    ("gemini-live:gemini-2.0-flash-live-001", "2025-12-09", "https://ai.google.dev/gemini-api/docs/deprecations"),
    ("gemini-live:gemini-2.0-flash-live-preview-04-09", "2025-12-09",
     "https://ai.google.dev/gemini-api/docs/deprecations"),
)


def retired_problem(model_id: str) -> str | None:
    """One line when the provider has shut `model_id` down (its requests could only fail), else None."""
    try:
        provider, model = parse_model_id(model_id)
    except ValueError:
        return None
    for retired, when, source in RETIRED:
        if f"{provider}:{model}" == retired:
            current = ", ".join(m for m, _, _ in REALTIME_MODELS if m.startswith(provider + ":"))
            return (f"{model_id} was shut down by the provider on {when} ({source}); current ids: {current} "
                    f"(wearsim models)")
    return None
OUTPUTS = ("text", "audio")  # what a candidate replies with; audio only from a realtime API


# a realtime API that transcribes the user's speech with a model of its own, billed apart from the reply:
# provider -> that model's id as the price table names it (openai_realtime.TRANSCRIBE_MODEL; a test keeps
# the two in step)
TRANSCRIPTION_MODELS = {"openai-realtime": "openai:gpt-4o-mini-transcribe"}


def transcription_model(model_id: str | None) -> str | None:
    """The model that transcribes `model_id`'s audio input and bills apart, or None (no such model)."""
    try:
        return TRANSCRIPTION_MODELS.get(parse_model_id(model_id)[0]) if model_id else None
    except ValueError:
        return None


def is_local(model_id: str) -> bool:
    """The embedded llama.cpp model (`local`, `local:PATH.gguf`): it runs here and costs nothing."""
    try:
        return parse_model_id(model_id)[0] == "local"
    except ValueError:
        return False


def is_realtime(model_id: str) -> bool:
    """A streaming multimodal API (OpenAI Realtime, Gemini Live)."""
    return parse_model_id(model_id)[0] in REALTIME_PROVIDERS


def output_problem(model_id: str, output: str) -> str | None:
    """Why `model_id` cannot reply with `output`, said after the output's name; None when it can."""
    if output == "text" or is_realtime(model_id):
        return None
    return f"needs a realtime model (openai-realtime:MODEL or gemini-live:MODEL); {model_id} replies in text"


def default_model_id(env=None) -> str:
    """`local` when no provider key is configured."""
    env = os.environ if env is None else env
    if env.get("OPENAI_API_KEY"):
        return "openai:gpt-4o-mini"
    if env.get("GEMINI_API_KEY") or env.get("GOOGLE_API_KEY"):
        return "gemini:gemini-2.5-flash"
    if env.get("ANTHROPIC_API_KEY"):
        return "anthropic:claude-sonnet-4-5"
    return "local"
