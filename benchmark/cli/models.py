"""`wearsim models`: the model id forms and which API keys are set."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim models
  wearsim models --json
  wearsim bench --model openai:gpt-4o-mini            # needs OPENAI_API_KEY
  wearsim bench --model local:/models/qwen2.5-0.5b.gguf
  wearsim probe openai-realtime:gpt-realtime-2         # one short live session against a real key
Key values are never printed: only whether each variable is set.
"""


def variables() -> tuple[tuple[str, str], ...]:
    """Every variable a model or judge reads (from the provider table), with what reads it."""
    from candidates.providers import PROVIDERS

    ids: dict[str, list[str]] = {}
    judges: dict[str, list[str]] = {}
    endpoints: dict[str, list[str]] = {}
    for provider in PROVIDERS.values():
        for name in provider.key_variables:
            ids.setdefault(name, []).append(f"{provider.name}:*")
            if provider.judge_model:
                judges.setdefault(name, []).append(f"the {provider.family} judge")
        if provider.base_url_variable:
            endpoints.setdefault(provider.base_url_variable, []).append(f"{provider.name}:*")
    users = {name: [*used, *judges.get(name, ())] for name, used in ids.items()}
    for name, used in endpoints.items():
        users.setdefault(name, []).append(f"an OpenAI-compatible endpoint for {', '.join(used)} (instead of a key)")
    return tuple((name, ", ".join(used)) for name, used in users.items())


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "models",
        help="list the model id forms and which API keys are set",
        description="The model ids --model takes, the default, the embedded model file, "
        "and which API key variables are set (never their values).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="print the same as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    import json
    import os

    from candidates.model_ids import default_model_id
    from candidates.providers import CHECKED, PROVIDERS, forms, realtime_models, retired_models

    model_id_forms, named = forms(), variables()
    current, retired = realtime_models(), retired_models()
    bare = ", ".join(f"{prefix}*" for p in PROVIDERS.values() for prefix in p.bare_prefixes)

    try:
        from candidates.local import bundled_gguf

        embedded = str(bundled_gguf())
    except RuntimeError as exc:
        embedded = f"missing: {exc}"
    keys = {name: bool(os.environ.get(name, "").strip()) for name, _ in named}
    if args.json:
        print(
            json.dumps(
                {
                    "model_id_forms": [{"form": f, "what": w} for f, w in model_id_forms],
                    "realtime_models": {
                        "checked": CHECKED,
                        "current": [{"model_id": m, "what": w, "source": src} for m, w, src in current],
                        "retired": [{"model_id": m, "shut_down": d, "source": src} for m, d, src in retired],
                    },
                    "default_model": default_model_id(),
                    "embedded_model_file": embedded,
                    "variables_set": keys,
                },
                indent=2,
            )
        )
        return 0
    print("model ids (--model, --judge-model):")
    width = max(len(form) for form, _ in model_id_forms)
    for form, what in model_id_forms:
        print(f"  {form:<{width}}  {what}")
    print(f"  (bare ids work too: {bare})")
    print(f"\nrealtime models the providers list as current (checked {CHECKED}; they change often):")
    width = max(len(m) for m, _, _ in current)
    for model, what, source in current:
        print(f"  {model:<{width}}  {what}\n  {'':<{width}}  {source}")
    print("shut down (a run naming one stops at once): " + ", ".join(f"{m} ({d})" for m, d, _ in retired))
    print(f"\ndefault model with the keys set now: {default_model_id()}")
    print(f"embedded model file (local): {embedded}")
    print("\nAPI key variables (values are never shown):")
    width = max(len(name) for name, _ in named)
    for name, used_by in named:
        print(f"  {name:<{width}}  {'set    ' if keys[name] else 'not set'}  {used_by}")
    return 0
