"""`wearsim card`: the dataset card's statistics, generated from the bank."""

from __future__ import annotations

import argparse

from benchmark.cli import wrapped


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "card",
        help="print or rewrite the dataset card's statistics block",
        description=wrapped(
            "Count the bank (per subset: targets, shift types, difficulty tiers and more) as the statistics "
            "block of its dataset_card.md: print the block, or with --write rewrite it in the card."
        ),
        epilog="example: wearsim card --write   # refresh benchmark/v1/dataset_card.md",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--scenarios", help="v1 bank directory (default: the shipped bank)")
    p.add_argument("--write", action="store_true", help="rewrite the block inside dataset_card.md")
    p.set_defaults(run=run)


def run(args) -> int:
    import sys

    from benchmark.bank.card import card_path, render_card, statistics_block
    from core.scenario import BankError, load_bank

    try:
        bank = load_bank(args.scenarios)
    except BankError as exc:
        print(f"unreadable bank:\n{exc}", file=sys.stderr)
        return 2
    if not args.write:
        print(statistics_block(bank))
        return 0
    path = card_path(bank)
    path.write_text(render_card(path.read_text(encoding="utf-8"), bank), encoding="utf-8")
    print(f"updated {path}", file=sys.stderr)
    return 0
