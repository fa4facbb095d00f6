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

# every variable a model or judge reads, in the order listed
VARIABLES = (
    ("OPENAI_API_KEY", "openai:*, openai-realtime:*, the openai judge"),
    ("OPENAI_BASE_URL", "an OpenAI-compatible endpoint for openai:* (instead of a key)"),
    ("GEMINI_API_KEY", "gemini:*, gemini-live:*, the gemini judge"),
    ("GOOGLE_API_KEY", "same as GEMINI_API_KEY"),
    ("ANTHROPIC_API_KEY", "anthropic:*, the claude judge"),
)


def register(subparsers) -> None:
    p = subparsers.add_parser("models", help="list the model id forms and which API keys are set",
                              description="The model ids --model takes, the default, the embedded model file, "
                                          "and which API key variables are set (never their values).",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="print the same as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    import json
    import os

    from candidates.model_ids import CHECKED, MODEL_ID_FORMS, REALTIME_MODELS, RETIRED, default_model_id

    try:
        from candidates.local import bundled_gguf

        embedded = str(bundled_gguf())
    except RuntimeError as exc:
        embedded = f"missing: {exc}"
    keys = {name: bool(os.environ.get(name, "").strip()) for name, _ in VARIABLES}
    if args.json:
        print(json.dumps({"model_id_forms": [{"form": f, "what": w} for f, w in MODEL_ID_FORMS],
                          "realtime_models": {"checked": CHECKED, "current": [
                              {"model_id": m, "what": w, "source": src} for m, w, src in REALTIME_MODELS],
                              "retired": [{"model_id": m, "shut_down": d, "source": src} for m, d, src in RETIRED]},
                          "default_model": default_model_id(), "embedded_model_file": embedded,
                          "variables_set": keys}, indent=2))
        return 0
    print("model ids (--model, --judge-model):")
    width = max(len(form) for form, _ in MODEL_ID_FORMS)
    for form, what in MODEL_ID_FORMS:
        print(f"  {form:<{width}}  {what}")
    print("  (bare ids work too: gpt-*, o1*/o3*/o4*, gemini-*, claude-*)")
    print(f"\nrealtime models the providers list as current (checked {CHECKED}; they change often):")
    width = max(len(m) for m, _, _ in REALTIME_MODELS)
    for model, what, source in REALTIME_MODELS:
        print(f"  {model:<{width}}  {what}\n  {'':<{width}}  {source}")
    print("shut down (a run naming one stops at once): " + ", ".join(f"{m} ({d})" for m, d, _ in RETIRED))
    print(f"\ndefault model with the keys set now: {default_model_id()}")
    print(f"embedded model file (local): {embedded}")
    print("\nAPI key variables (values are never shown):")
    width = max(len(name) for name, _ in VARIABLES)
    for name, used_by in VARIABLES:
        print(f"  {name:<{width}}  {'set    ' if keys[name] else 'not set'}  {used_by}")
    return 0
