"""`wearsim cache`: what the response cache holds, and emptying it."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim cache stats                       # entries, size, replies served, per model
  wearsim cache clear                       # delete every stored reply
  wearsim cache clear --model openai:gpt-4o-mini
  wearsim cache stats --cache-dir /tmp/wearsim-cache
The cache lives in WEARSIM_CACHE_DIR (default ~/.cache/wearsim); `wearsim bench --cache` and
`wearsim rescore --cache` fill it.
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "cache",
        help="show or clear the response cache",
        description="The response cache of `wearsim bench --cache` and `wearsim rescore "
        "--cache`: candidate and judge replies stored by request.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", choices=("stats", "clear"), help="stats: what it holds; clear: delete entries")
    p.add_argument(
        "--cache-dir", metavar="DIR", help="the cache directory (default WEARSIM_CACHE_DIR, else ~/.cache/wearsim)"
    )
    p.add_argument("--model", metavar="ID", help="clear: only this model id's replies")
    p.add_argument("--json", action="store_true", help="stats: print JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    import json
    import sys
    from pathlib import Path

    from candidates.cache import ResponseCache

    cache = ResponseCache(Path(args.cache_dir).expanduser() if args.cache_dir else None)
    if args.action == "clear":
        if args.json:
            print("error: --json goes with stats", file=sys.stderr)
            return 2
        removed = cache.clear(args.model)
        what = f" of {args.model}" if args.model else ""
        print(f"removed {removed} cached repl{'y' if removed == 1 else 'ies'}{what} from {cache.directory}")
        return 0
    if args.model:
        print("error: --model goes with clear", file=sys.stderr)
        return 2
    stats = cache.stats()
    if args.json:
        print(
            json.dumps(
                {
                    "directory": str(stats.directory),
                    "entries": stats.entries,
                    "bytes": stats.bytes,
                    "served": stats.hits,
                    "by_model": stats.by_model,
                    "by_role": stats.by_role,
                },
                indent=2,
            )
        )
        return 0
    print(f"cache: {stats.directory}")
    print(f"entries: {stats.entries} ({stats.bytes / 1e6:.1f} MB); replies served from it: {stats.hits}")
    for role, count in stats.by_role.items():
        print(f"  {role}: {count}")
    for model, count in stats.by_model.items():
        print(f"  {model}: {count}")
    return 0
