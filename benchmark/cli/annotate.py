"""`wearsim annotate`: label a sample of a run's replies in the browser."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim annotate runs/first --annotator ana                 # then open http://127.0.0.1:8770/
  wearsim annotate runs/first --annotator ben --sample 60 --seed 47
  wearsim annotate runs/first --annotator ana --what turn3 --port 8771
  wearsim annotate runs/first --annotator ana --sample disagreements      # judge errors first
then: wearsim agreement runs/first

Every annotator with the same --sample and --seed gets the same items, in the
same order. --sample disagreements puts first the replies the run's judge and
the offline judge (lexical) label differently, or the offline judge is unsure
of, then the rest: for finding judge errors fast. Its labels are recorded as
that sample's and never pooled with a random sample's. Each label is saved in RUN_DIR/labels/NAME.jsonl as it is given;
close the tab at any time and the next visit resumes. When the page stops
(Ctrl-C) after labels were given, the run's agreement and the human-check line
of findings.md and the viewer are measured again. The page shows what the
judge's rubric lets it see, never a judge's label nor another annotator's.
It listens on this machine only, with the live page's Host and Origin checks;
a colleague elsewhere can reach it through `ssh -L 8770:127.0.0.1:8770 HOST`.
"""

DEFAULT_PORT = 8770
DEFAULT_SAMPLE = 100


def register(subparsers) -> None:
    from benchmark.labels import DEFAULT_SEED, WHATS

    parser = subparsers.add_parser(
        "annotate",
        help="label a sample of a run's replies in the browser",
        description="Serve a labelling page for a run dir: one reply at a time with the user's turns, the camera "
        "blocks, the reply and the scenario's answer keys; keys 1-4 (or 1-3 for remarks) and u for "
        "'cannot tell'. Labels go to RUN_DIR/labels/NAME.jsonl as they are given.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="run dir holding transcripts.jsonl")
    parser.add_argument(
        "--annotator", metavar="NAME", help="who labels (letters, digits, '.', '_', '-'; default: your login name)"
    )
    parser.add_argument(
        "--sample",
        default=str(DEFAULT_SAMPLE),
        metavar="N|disagreements[:N]",
        help=f"N items to label, stratified by judge label and scenario (default {DEFAULT_SAMPLE}; 0: every "
        "item); or disagreements: the replies the run's judge and the offline judge disagree on, or the "
        f"offline judge is unsure of, first, then the rest ({DEFAULT_SAMPLE} in all unless :N)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        metavar="S",
        help=f"the sample's seed: the same for everyone who labels this run (default {DEFAULT_SEED})",
    )
    parser.add_argument(
        "--what",
        choices=WHATS,
        default="turn2",
        help="Turn 2 replies, Turn 3 replies after the repair, or proactive remarks (default turn2)",
    )
    parser.add_argument(
        "--scenarios", metavar="BANK", help="the run's bank (default: the manifest's, else the shipped bank)"
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"(default {DEFAULT_PORT}; 0: any free port)")
    parser.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="a page origin besides the server's own that may save labels (repeatable)",
    )
    parser.set_defaults(run=run)


def default_annotator() -> str | None:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None


def open_desk(args):
    """The annotator's desk for the arguments (a `LabelError` names what is wrong)."""
    from benchmark.labels.items import LabelError
    from benchmark.labels.run import AnnotatorDesk, open_label_run
    from benchmark.labels.sample import parse_sample
    from benchmark.labels.store import check_annotator

    name = args.annotator if args.annotator is not None else default_annotator()
    if name is None:
        raise LabelError("--annotator NAME is needed (no login name to use)")
    check_annotator(name)
    choice = parse_sample(args.sample)
    run = open_label_run(args.run_dir, args.scenarios)
    sample = run.sample_of(args.what, choice, args.seed)
    if not sample:
        raise LabelError(
            f"{args.run_dir}: no {args.what} items to label (errored trials have none; --what turn3 "
            "needs repairs, --what remarks a proactive run)"
        )
    desk = AnnotatorDesk(run=run, annotator=name, what=args.what, sample=sample, sample_kind=choice.kind)
    desk.own_labels()  # a hostile label file is refused before anything is served
    return desk


def run(args) -> int:
    import sys

    import uvicorn

    from benchmark.cli.serve import bind_port
    from benchmark.labels.items import LabelError
    from streaming.annotate_app import create_annotate_app
    from streaming.local_server import page_config

    try:
        desk = open_desk(args)
        app = create_annotate_app(desk, allowed_origins=tuple(args.allow_origin or ()))
    except (LabelError, ValueError) as exc:
        print(f"wearsim annotate: {exc}", file=sys.stderr)
        return 2
    try:
        listening = bind_port("127.0.0.1", args.port)
    except OSError as exc:
        print(
            f"wearsim annotate: --port {args.port}: cannot listen on 127.0.0.1 ({exc.strerror or exc}); "
            "choose another --port",
            file=sys.stderr,
        )
        return 2
    port = listening.getsockname()[1]
    done = len(desk.own_labels())
    print(
        f"labelling page for {desk.annotator}: http://127.0.0.1:{port}/ ({len(desk.sample)} {args.what} items"
        f"{', disagreements first' if desk.sample_kind == 'disagreements' else ''}, "
        f"{done} labelled so far; saved in {desk.path}). Ctrl-C stops it; the labels are already on disk.",
        file=sys.stderr,
    )
    try:
        uvicorn.Server(page_config(app, "127.0.0.1", port)).run(sockets=[listening])
    except KeyboardInterrupt:  # uvicorn stops on Ctrl-C, then raises it again: the labels are on disk
        pass
    return after_labelling(desk, args.run_dir)


def after_labelling(desk, run_dir: str) -> int:
    """When the page stops: if labels were given, the run's agreement and the human-check line of
    findings.md and the viewer measured again, and the line printed."""
    import sys

    from benchmark.labels.refresh import refresh_human_check

    if not desk.saves:
        return 0
    try:
        measured = refresh_human_check(desk.run, {desk.what}, desk.sample_kind)
    except ValueError as exc:
        print(
            f"wearsim annotate: the labels are saved; the human check was not measured again ({exc}); "
            f"run wearsim agreement {run_dir}",
            file=sys.stderr,
        )
        return 0
    if measured is not None:
        print(measured.line or measured.result["verdict"]["text"])
    return 0
