"""The provider table: every `provider:` prefix a model id may have, in one place.

Each `Provider` says which judge family it belongs to, which environment
variables hold its key, which bare ids (`gpt-4o`, `claude-...`) are its own,
what kind of model it opens and how (`opener`), its price-table key and the
lines `wearsim models` prints. `model_ids`, `factory.open_candidate`, the judge
families, `wearsim models`, the server and the price table all read `PROVIDERS`;
adding a chat provider is one entry here and one adapter module.

Importing this module imports nothing but the standard library (and `core.named`): an opener is
a "module:name" string, imported only when a model of that provider opens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.named import named_object

KINDS = ("chat", "realtime", "local", "replay")
CHAT, REALTIME, LOCAL, REPLAY = KINDS


@dataclass(frozen=True, kw_only=True)
class Provider:
    name: str  # the model id's prefix: `name:MODEL`
    family: str  # the judge-resolution family (openai, gemini, claude, local, replay)
    kind: str = "chat"  # chat: a chat API; realtime: a live session API; local: runs here; replay: recorded
    # "module:name" (or the object itself). For kind `chat` it names the adapter class, built as
    # `Adapter(model, model_id=..., base_url=...)`; for any other kind an async context manager
    # function `(model, *, model_id, base_url, log_dir, output)` that yields the candidate
    opener: str | Callable[..., Any]
    forms: tuple[tuple[str, str], ...]  # (model id form, what it is) for `wearsim models` and errors
    key_variables: tuple[str, ...] = ()  # any one of these set (non-empty) gives it credentials
    base_url_variable: str | None = None  # an endpoint that serves without a key (OpenAI-compatible servers)
    bare_prefixes: tuple[str, ...] = ()  # bare ids starting with one of these are this provider's
    default_model: str | None = None  # the model id `default_model_id` picks when this provider's key is set
    judge_model: str | None = None  # this family's default judge model (one provider per family gives it)
    auto_judge: str | None = None  # the family `--judge-family auto` grades this family with
    transcription_model: str | None = None  # the price-table id of the model transcribing its audio input
    price_key: str | None = None  # the one price entry all its models share; None: `provider:model`
    model_optional: bool = False  # the bare name alone is a model id (`local`)
    names_file: bool = False  # its model part is a path on this machine (`local:PATH`, `replay:RUN_DIR`)
    # kind `realtime`: its `realtime_base.RealtimeSession` class as "module:name", opened by
    # `Session.open(model, model_id, system, *, base_url, output, streaming_input, config, trace)`
    session: str | Callable[..., Any] | None = None
    keyless_at_base_url: bool = False  # a --base-url of one's own may want no key (a realtime gateway)
    sees_images: bool = True  # its models can be shown a picture (False: the embedded SmolLM2, recorded replies)
    describer: str | None = None  # `--describer NAME:MODEL` opens a vision model of it; the help text's words
    # kind `realtime`: the model ids the provider lists as current (model, what it is, source), as of CHECKED,
    # and those it has shut down (model, the date, source)
    current_models: tuple[tuple[str, str, str], ...] = ()
    retired_models: tuple[tuple[str, str, str], ...] = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"provider {self.name!r}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not self.name or ":" in self.name or not self.forms:
            raise ValueError(f"provider {self.name!r}: needs a name without ':' and at least one form")
        if (self.kind == REALTIME) != (self.session is not None):
            raise ValueError(f"provider {self.name!r}: a realtime provider, and only one, names its session class")

    @property
    def has_endpoint(self) -> bool:
        """Its models answer over the network (a chat or live API), not here or from a file."""
        return self.kind in (CHAT, REALTIME)

    def load_opener(self) -> Callable[..., Any]:
        """The opener itself, importing its module now."""
        return _load(self.opener)

    def load_session(self) -> Callable[..., Any]:
        """The realtime session class, importing its module now."""
        if self.session is None:
            raise ValueError(f"provider {self.name!r} is not a realtime API")
        return _load(self.session)


def _load(target: str | Callable[..., Any]) -> Callable[..., Any]:
    return named_object(target) if isinstance(target, str) else target


_OPENAI_KEY = ("OPENAI_API_KEY",)
_GEMINI_KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
_REALTIME = "candidates.factory:open_realtime"
# when the realtime models below were checked against the providers' lists; they rename them often: check the
# source before relying on one, and update the entries (and prices.toml)
CHECKED = "2026-11-25"
_OPENAI_MODELS = "https://developers.openai.com/api/docs/models/"
_GEMINI_MODELS = "https://ai.google.dev/gemini-api/docs/models/"
_GEMINI_RETIRED = "https://ai.google.dev/gemini-api/docs/deprecations"

# In this order `wearsim models` lists the forms, errors name them and `default_model_id` looks for keys.
PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider(
            name="openai",
            family="openai",
            opener="candidates.openai_chat:OpenAIChatCandidate",
            forms=(
                (
                    "openai:MODEL",
                    ("any OpenAI-compatible chat endpoint (OpenAI, or --base-url for vLLM, Ollama, llama.cpp)"),
                ),
            ),
            key_variables=_OPENAI_KEY,
            base_url_variable="OPENAI_BASE_URL",
            bare_prefixes=("gpt-", "o1", "o3", "o4", "chatgpt-"),
            default_model="openai:gpt-4o-mini",
            judge_model="gpt-4o-mini",
            auto_judge="gemini",
            describer="a vision model through the OpenAI API",
        ),
        Provider(
            name="gemini",
            family="gemini",
            opener="candidates.gemini:GeminiCandidate",
            forms=(("gemini:MODEL", "Google Gemini through google-genai"),),
            key_variables=_GEMINI_KEYS,
            bare_prefixes=("gemini-",),
            default_model="gemini:gemini-2.5-flash",
            judge_model="gemini-2.5-flash",
            auto_judge="openai",
            describer="a vision model through Gemini",
        ),
        Provider(
            name="anthropic",
            family="claude",
            opener="candidates.anthropic_chat:AnthropicCandidate",
            forms=(("anthropic:MODEL", "Anthropic Claude (pip install 'wearsim[anthropic]')"),),
            key_variables=("ANTHROPIC_API_KEY",),
            bare_prefixes=("claude-",),
            default_model="anthropic:claude-sonnet-4-5",
            judge_model="claude-sonnet-4-5",
            auto_judge="gemini",
        ),
        Provider(
            name="openai-realtime",
            family="openai",
            kind="realtime",
            opener=_REALTIME,
            session="candidates.openai_realtime:OpenAIRealtimeSession",
            forms=(("openai-realtime:MODEL", "OpenAI Realtime API: one live session per conversation"),),
            key_variables=_OPENAI_KEY,
            base_url_variable="OPENAI_BASE_URL",
            # openai_realtime.TRANSCRIBE_MODEL as the price table names it (a test keeps the two in step)
            transcription_model="openai:gpt-4o-mini-transcribe",
            current_models=(
                (
                    "gpt-realtime-2",
                    "OpenAI's most capable realtime voice model (reasoning)",
                    _OPENAI_MODELS + "gpt-realtime-2",
                ),
                (
                    "gpt-realtime-2.1-mini",
                    "OpenAI's smaller, cheaper realtime reasoning model",
                    _OPENAI_MODELS + "gpt-realtime-2.1-mini",
                ),
                (
                    "gpt-realtime-1.5",
                    "OpenAI's earlier flagship realtime voice model",
                    _OPENAI_MODELS + "gpt-realtime-1.5",
                ),
            ),
        ),
        Provider(
            name="gemini-live",
            family="gemini",
            kind="realtime",
            opener=_REALTIME,
            session="candidates.gemini_live:GeminiLiveSession",
            forms=(("gemini-live:MODEL", "Gemini Live API: one live session per conversation"),),
            key_variables=_GEMINI_KEYS,
            keyless_at_base_url=True,
            current_models=(
                (
                    "gemini-3.8-live",
                    "Google's default stable Live model; replies in audio (read through its output transcription)",
                    _GEMINI_MODELS + "gemini-3.8-live",
                ),
                (
                    "gemini-3.1-flash-live-preview",
                    "Google's previous-generation Live preview",
                    _GEMINI_MODELS + "gemini-3.1-flash-live-preview",
                ),
            ),
            retired_models=(
                ("gemini-live-2.5-flash-preview", "2025-12-09", _GEMINI_RETIRED),
                ("gemini-2.0-flash-live-001", "2025-12-09", _GEMINI_RETIRED),
                ("gemini-2.0-flash-live-preview-04-09", "2025-12-09", _GEMINI_RETIRED),
            ),
        ),
        Provider(
            name="local",
            family="local",
            kind="local",
            opener="candidates.local:open_local",
            forms=(
                ("local", "the embedded llama.cpp server with the bundled SmolLM2-135M-Instruct GGUF (no key)"),
                ("local:PATH.gguf", "the embedded llama.cpp server with another GGUF file (no key)"),
            ),
            price_key="local",
            model_optional=True,
            names_file=True,
            sees_images=False,
        ),
        Provider(
            name="replay",
            family="replay",
            kind="replay",
            opener="candidates.replay:open_replay",
            forms=(("replay:RUN_DIR", "replies recorded in a run dir, looked up by prompt (no key)"),),
            names_file=True,
            sees_images=False,
        ),
    )
}


def register(provider: Provider, *, replace: bool = False) -> Provider:
    """Add `provider` to the table (a name already there is refused unless `replace`)."""
    if provider.name in PROVIDERS and not replace:
        raise ValueError(f"provider {provider.name!r} is already in the table")
    PROVIDERS[provider.name] = provider
    return provider


def known() -> str:
    """The providers' names, for error messages."""
    return ", ".join(PROVIDERS)


def get(name: str) -> Provider:
    """The provider called `name`; ValueError naming the known ones otherwise."""
    provider = PROVIDERS.get(name)
    if provider is None:
        raise ValueError(f"unknown provider {name!r}; known providers: {known()}")
    return provider


def forms() -> tuple[tuple[str, str], ...]:
    """Every model id form and what it is, in table order."""
    return tuple(form for p in PROVIDERS.values() for form in p.forms)


def form_list(forms_: tuple[str, ...] | None = None) -> str:
    """ "openai:MODEL, gemini:MODEL, ... or replay:RUN_DIR"."""
    names = list(forms_ if forms_ is not None else (f for f, _ in forms()))
    return names[0] if len(names) < 2 else f"{', '.join(names[:-1])} or {names[-1]}"


def key_variables() -> tuple[str, ...]:
    """Every environment variable that holds a provider's key, once each, in table order."""
    return tuple(dict.fromkeys(name for p in PROVIDERS.values() for name in p.key_variables))


def of_kind(kind: str) -> tuple[Provider, ...]:
    return tuple(p for p in PROVIDERS.values() if p.kind == kind)


def realtime_models() -> tuple[tuple[str, str, str], ...]:
    """(model id, what it is, source) for every realtime model the providers list as current, in table order."""
    return tuple((f"{p.name}:{m}", what, source) for p in of_kind(REALTIME) for m, what, source in p.current_models)


def retired_models() -> tuple[tuple[str, str, str], ...]:
    """(model id, the date, source) for every realtime model a provider has shut down."""
    return tuple((f"{p.name}:{m}", when, source) for p in of_kind(REALTIME) for m, when, source in p.retired_models)


def bundled_model_id() -> str:
    """The model id of the embedded stand-in model, which runs with no key."""
    return of_kind(LOCAL)[0].name


def describers() -> tuple[Provider, ...]:
    """The providers whose vision models may describe frames (`--describer NAME:MODEL`)."""
    return tuple(p for p in PROVIDERS.values() if p.describer)


def default_judge_model_id() -> str:
    """The first judging provider's judge model as a model id (`wearsim eval --judge-model`'s default)."""
    return next(f"{p.name}:{p.judge_model}" for p in PROVIDERS.values() if p.judge_model)


def realtime_forms() -> tuple[str, ...]:
    """The realtime providers' model id forms (`openai-realtime:MODEL`, ...), in table order."""
    return tuple(form for p in of_kind(REALTIME) for form, _ in p.forms)
