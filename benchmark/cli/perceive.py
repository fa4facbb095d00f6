"""`wearsim perceive`: run perception on one audio file or one frame."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim perceive audio media/sc-01/turn_1.wav --json
  wearsim perceive frame photo.jpg                       # opencv describer, offline
  wearsim perceive frame screen.jpg --describer ocr       # the text in it too (OCR), offline
  wearsim perceive frame photo.jpg --describer openai:gpt-4o-mini --json
  wearsim perceive frame photo.jpg --describer openai:llava --base-url http://127.0.0.1:8000/v1
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "perceive",
        help="transcribe audio or describe a frame",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    audio = kinds.add_parser(
        "audio", help="speech to text (Whisper)", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    audio.add_argument("file", help="wav, mp3, m4a, webm or mp4")
    audio.add_argument("--asr-model", help="CTranslate2 Whisper dir or model name (default: bundled tiny.en)")
    audio.add_argument("--json", action="store_true")
    audio.set_defaults(run=run_audio)
    frame = kinds.add_parser(
        "frame",
        help="describe one frame as a camera block",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    frame.add_argument("image")
    from perception.describer_spec import DEFAULT_DESCRIBER, choices

    frame.add_argument("--describer", default=DEFAULT_DESCRIBER, help=choices())
    frame.add_argument("--base-url")
    frame.add_argument("--describe-style", choices=("rules", "natural"), default="rules")
    frame.add_argument("--previous", help="the previous frame, for motion words")
    frame.add_argument("--json", action="store_true")
    frame.set_defaults(run=run_frame)


def run_audio(args) -> int:
    import json
    import sys

    from media_effects.audio import decode_audio
    from perception.asr import Transcriber

    try:
        audio = decode_audio(args.file)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    transcript = Transcriber(args.asr_model).transcribe_sync(audio)
    print(json.dumps(transcript.to_dict(), indent=2) if args.json else transcript.text)
    return 0


def run_frame(args) -> int:
    import asyncio
    import json
    import sys
    from pathlib import Path

    from candidates import open_candidate
    from perception.describers import make_describer, needs_model

    async def describe(jpeg: bytes, previous: bytes | None):
        if not needs_model(args.describer):
            return await make_describer(args.describer, style=args.describe_style).describe(jpeg, previous)
        async with open_candidate(args.describer, base_url=args.base_url) as model:
            return await make_describer(args.describer, model=model, style=args.describe_style).describe(jpeg, previous)

    try:
        jpeg = Path(args.image).read_bytes()
        previous = Path(args.previous).read_bytes() if args.previous else None
        description = asyncio.run(describe(jpeg, previous))
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({k: description.to_dict()[k] for k in ("text", "describer", "model", "cached", "seconds")}))
    else:
        print(description.text)
    return 0
