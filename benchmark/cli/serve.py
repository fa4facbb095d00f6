"""`wearsim serve`: the streaming server the simulated glasses talk to."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim serve                                  # 127.0.0.1:8765, no token needed on loopback
  wearsim serve --host 0.0.0.0 --token "$WEARSIM_TOKEN"
then: wearsim simulate sc-01 --server ws://127.0.0.1:8765
"""


def register(subparsers) -> None:
    p = subparsers.add_parser("serve", help="run the WebSocket streaming server", epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--token", help="required from clients (or WEARSIM_TOKEN); mandatory off loopback")
    p.add_argument("--asr-model", help="CTranslate2 Whisper dir or model name (default: bundled tiny.en)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint for openai:* backends")
    p.add_argument("--describer-base-url", help="OpenAI-compatible endpoint for openai:* describers")
    p.set_defaults(run=run)


def run(args) -> int:
    import ipaddress
    import os
    import sys

    import uvicorn

    from streaming.app import ServerSettings, create_app

    token = args.token or os.environ.get("WEARSIM_TOKEN")
    try:
        loopback = ipaddress.ip_address(args.host).is_loopback
    except ValueError:
        loopback = args.host == "localhost"
    if not loopback and not token:
        print("error: binding to a non-loopback address needs --token (or WEARSIM_TOKEN)", file=sys.stderr)
        return 2
    settings = ServerSettings(token=token, asr_model=args.asr_model, backend_base_url=args.base_url,
                              describer_base_url=args.describer_base_url)
    print(f"wearsim streaming server on ws://{args.host}:{args.port}/v1/session "
          f"(token {'required' if token else 'not required'})", file=sys.stderr)
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="warning", ws_max_size=2_000_000)
    return 0
