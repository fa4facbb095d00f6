"""`wearsim validate`: check a scenario bank."""

from __future__ import annotations

import argparse

from benchmark.cli import wrapped

EPILOG = """examples:
  wearsim validate                      # the shipped bank, human-readable
  wearsim validate path/to/bank         # another bank: v1 dir, its scenarios.json, or a JSONL file
  wearsim validate --json               # machine-readable report
  wearsim validate --scenarios bank.jsonl --subset contrast
  wearsim validate --subset proactive   # only the proactive scenarios (proactive.json) and the lock
  wearsim validate path/to/bank --strict   # warnings (e.g. no lockfile) fail too
  wearsim validate --write-lock         # rewrite benchmark/v1/MANIFEST.lock.json after an intended change
  wearsim validate --semantic --model openai:gpt-4o-mini   # the two checks that ask a model
The shipped bank's exact distributions are enforced only on the shipped bank;
for any other bank the counts are reported.
exit codes: 0 ok (warnings allowed unless --strict), 1 a check failed, 2 unreadable input
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "validate",
        help="check a scenario bank: schema, leakage, names, duplicates, lock",
        description=wrapped(
            "Check a scenario bank: the schema, that no user speech gives the answer away, that the answer "
            "names match the scenes, no duplicate scenarios, the bank's distributions and its lockfile "
            "(MANIFEST.lock.json); --semantic adds two checks that ask a model."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("bank", nargs="?", help="bank path (same as --scenarios)")
    p.add_argument("--scenarios", help="bank path: v1 dir, its scenarios.json, or a JSONL file (default: shipped bank)")
    p.add_argument(
        "--subset",
        help="validate only scenarios of this subset (bank, contrast, or proactive: the "
        "proactive.json beside a v1 bank's scenarios.json)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--strict",
        action="store_true",
        help="treat warnings as failures (a missing lockfile, object nouns that are not answer tokens)",
    )
    p.add_argument("--write-lock", action="store_true", help="rewrite MANIFEST.lock.json from the current files")
    p.add_argument(
        "--semantic",
        action="store_true",
        help="also ask --model: can it name each camera block's object from the block alone "
        "(identification), and can it answer Turn 2 from the speech alone (leakage through speech)",
    )
    p.add_argument("--model", help="model id for the semantic checks")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint for the semantic model")
    p.set_defaults(run=run)


def run(args) -> int:
    import asyncio
    import json
    import sys
    from pathlib import Path

    from benchmark.bank.counts import counts
    from benchmark.bank.lockfile import write_lock
    from benchmark.bank.validate import has_proactive, is_shipped, validate_bank
    from core.proactive_scenario import SUBSET as PROACTIVE
    from core.scenario import SUBSETS, BankError, load_bank

    if args.bank and args.scenarios:
        print("give the bank path once: positionally or with --scenarios", file=sys.stderr)
        return 2
    try:
        bank = load_bank(args.bank or args.scenarios)
    except BankError as exc:
        if args.json:
            print(json.dumps({"ok": False, "error": "unreadable input", "problems": exc.problems}, indent=2))
        else:
            print("unreadable bank:\n" + "\n".join(f"  {p}" for p in exc.problems), file=sys.stderr)
        return 2
    if args.subset and args.subset not in (*SUBSETS, PROACTIVE):
        print(
            f"wearsim validate: --subset {args.subset!r}: known subsets are {', '.join((*SUBSETS, PROACTIVE))}",
            file=sys.stderr,
        )
        return 2
    if args.subset == PROACTIVE and bank.format != "v1":
        print("wearsim validate: --subset proactive needs a v1 bank directory (its proactive.json)", file=sys.stderr)
        return 2
    if args.subset:
        bank = bank.select(args.subset)
    if args.semantic:  # before anything is written (the lockfile) or checked
        from candidates.model_ids import missing_credentials

        if not args.model:
            print("wearsim validate: --semantic needs --model (see wearsim models)", file=sys.stderr)
            return 2
        try:
            problem = missing_credentials(args.model, base_url=args.base_url)
        except ValueError as exc:
            print(f"wearsim validate: --model: {exc}", file=sys.stderr)
            return 2
        if problem:
            print(f"wearsim validate: {problem} (--model {args.model}, for --semantic)", file=sys.stderr)
            return 2
    if args.write_lock:
        if bank.format != "v1":
            print("--write-lock needs a v1 bank directory", file=sys.stderr)
            return 2
        print(f"wrote {write_lock(Path(bank.source))}", file=sys.stderr)
    checks = validate_bank(bank)
    if args.semantic:
        checks += asyncio.run(_semantic(bank, args.model, args.base_url))
    ok = all(c.ok for c in checks) and not (args.strict and any(c.warnings for c in checks))
    shipped = is_shipped(bank)
    proactive = _proactive_counts(bank) if has_proactive(bank) else None
    c = proactive if args.subset == PROACTIVE else counts(bank)
    if args.json:
        report = {
            "ok": ok,
            "shipped": shipped,
            "strict": args.strict,
            "counts": c,
            "checks": [check.to_dict() for check in checks],
        }
        if proactive is not None and args.subset != PROACTIVE:
            report["proactive_counts"] = proactive
        print(json.dumps(report, indent=2))
        return 0 if ok else 1
    if c is None:  # --subset proactive on a v1 dir without a proactive.json: nothing was counted
        print(f"wearsim validate: --subset proactive: {bank.source} has no proactive set to count", file=sys.stderr)
        return 2
    rule = "shipped distributions enforced" if shipped else "not the shipped bank: counts reported, not enforced"
    if args.subset == PROACTIVE:
        domains = len(set(c.get("event_domains", {})) | set(c.get("quiet_domains", {})))
        print(f"{bank.source}: {c.get('scenarios', 0)} proactive scenarios, {domains} activity domains ({rule})")
    else:
        print(f"{bank.source}: {c['scenarios']} scenarios, {c['activity_domains']} activity domains ({rule})")
    for key, tally in c.items():
        if isinstance(tally, dict):
            print(f"  {key}: " + ", ".join(f"{value} {n}" for value, n in sorted(tally.items(), key=lambda kv: -kv[1])))
    if proactive and args.subset != PROACTIVE:
        print(
            f"  proactive: {proactive['kind']['event']} events ("
            + ", ".join(f"{t} {n}" for t, n in proactive["event_type"].items())
            + f"), {proactive['kind']['quiet']} quiet controls (--subset proactive for more)"
        )
    for check in checks:
        failed = not check.ok or (args.strict and check.warnings)
        notes = [_plural(len(check.problems), "problem")] if check.problems else []
        notes += [_plural(len(check.warnings), "warning")] if check.warnings else []
        print(f"  {'FAIL' if failed else 'ok  '} {check.name}" + (f" ({', '.join(notes)})" if notes else ""))
        for problem in check.problems:
            print(f"       {problem}")
        for warning in check.warnings:
            print(f"       warning: {warning}")
    return 0 if ok else 1


def _proactive_counts(bank) -> dict:
    """The proactive set's tallies, or {} when it does not load (the check `proactive` says why)."""
    from pathlib import Path

    from benchmark.bank.proactive import proactive_counts
    from core.proactive_scenario import PROACTIVE_FILE, load_proactive
    from core.scenario import BankError

    try:
        return proactive_counts(load_proactive(Path(bank.source) / PROACTIVE_FILE))
    except BankError:
        return {}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


async def _semantic(bank, model_id, base_url):
    from benchmark.bank.semantic import check_identification, check_speech_leakage
    from candidates import open_candidate

    async with open_candidate(model_id, base_url=base_url) as model:
        return [await check_speech_leakage(bank, model), await check_identification(bank, model)]
