"""`wearsim media`: the per-scenario recordings under media/."""

from __future__ import annotations

import argparse

EPILOG = """examples:
  wearsim media synth                              # espeak-ng speech for every scenario turn
  wearsim media synth --voice en-gb --rate 140 --overwrite
  wearsim media synth --pictograph-frames --contact-sheet sheet.jpg --ids sc-01,sc-13  # draw the scene specs
  wearsim media import sc-01 turn_2 clip.mp4 --start 3.5 --end 7
  wearsim media verify
  wearsim media reindex --media-root media-new     # rebuild index.json from the files on disk
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "media",
        help="synthesize, import and verify scenario media",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    synth = actions.add_parser(
        "synth",
        help="TTS speech for every scenario turn",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    synth.add_argument("--voice", default="en-us")
    synth.add_argument("--rate", type=int, default=150, help="words per minute")
    synth.add_argument("--overwrite", action="store_true", help="remake existing synthesized files")
    synth.add_argument("--scenarios", help="bank path (default: the shipped bank)")
    synth.add_argument("--media-root", help="default: the repo's media/")
    synth.add_argument(
        "--pictograph-frames",
        action="store_true",
        help="also draw every scene spec (benchmark/v1/scenes/) as a still (<scene>.jpg, index source "
        "pictograph) where no recorded frame exists; bench and simulate then send it",
    )
    synth.add_argument(
        "--contact-sheet",
        metavar="FILE",
        help="with --pictograph-frames: a sheet of the drawn frames (one row per scenario)",
    )
    synth.add_argument(
        "--ids",
        metavar="ID,ID",
        help="only these scenarios, comma separated: their speech, their pictographs and their rows "
        "of the contact sheet (default: every scenario of the bank)",
    )
    synth.set_defaults(run=run_synth)
    imp = actions.add_parser(
        "import",
        help="copy a real recording into the layout",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    imp.add_argument("scenario")
    imp.add_argument("turn", help="context, turn_1, turn_2 or turn_3_repair")
    imp.add_argument("file")
    imp.add_argument("--start", type=float)
    imp.add_argument("--end", type=float)
    imp.add_argument("--media-root")
    imp.set_defaults(run=run_import)
    ver = actions.add_parser(
        "verify",
        help="check hashes and readability",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ver.add_argument("--media-root")
    ver.set_defaults(run=run_verify)
    rei = actions.add_parser(
        "reindex",
        help="rebuild index.json from the files on disk (an unreadable index is kept as index.json.broken)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rei.add_argument("--media-root")
    rei.set_defaults(run=run_reindex)


def _root(args):
    from pathlib import Path

    from media_effects.media import MEDIA_ROOT

    return Path(args.media_root) if args.media_root else MEDIA_ROOT


def run_synth(args) -> int:
    import sys

    from core.scenario import BankError, load_bank
    from media_effects.media_library import synth_bank

    try:
        bank = load_bank(args.scenarios)
    except BankError as exc:
        print(f"unreadable bank:\n{exc}", file=sys.stderr)
        return 2
    if args.contact_sheet and not args.pictograph_frames:
        print("--contact-sheet needs --pictograph-frames", file=sys.stderr)
        return 2
    specs = None
    if args.pictograph_frames:
        from core.scenes import SceneError, load_scene_specs
        from media_effects.pictures import PictureSetMissing, font_path

        try:
            font_path()
            specs = load_scene_specs(bank, required=True)
        except (PictureSetMissing, SceneError) as exc:
            print(f"--pictograph-frames: {exc}", file=sys.stderr)
            return 2
    ids = None
    if args.ids is not None:
        import dataclasses

        ids = list(dict.fromkeys(i.strip() for i in args.ids.split(",") if i.strip()))
        known = {s.scenario_id for s in bank.scenarios}
        if specs is not None:
            known &= set(specs)
        unknown = [i for i in ids if i not in known]
        if unknown or not ids:
            print(
                "--ids: "
                + (
                    f"no scenario {'with a scene spec ' if specs is not None else ''}called "
                    f"{', '.join(unknown)} in the bank"
                    if unknown
                    else "no scenario id given"
                ),
                file=sys.stderr,
            )
            return 2
        bank = dataclasses.replace(bank, scenarios=tuple(s for s in bank.scenarios if s.scenario_id in ids))
    speech = _Shown("speech")
    made = synth_bank(bank, _root(args), voice=args.voice, rate=args.rate, overwrite=args.overwrite, progress=speech)
    speech.pace.close()
    print(f"synthesized {made} files into {_root(args)}", file=sys.stderr)
    if specs is not None:
        from media_effects.media_library import synth_pictographs

        pictures = _Shown("pictographs")
        drawn = synth_pictographs(bank, specs, _root(args), progress=pictures)
        pictures.pace.close()
        print(f"drew {drawn} pictograph frames into {_root(args)}", file=sys.stderr)
        if args.contact_sheet:
            from media_effects.pictograph_sheet import write_contact_sheet

            print(f"contact sheet: {write_contact_sheet(args.contact_sheet, specs, ids=ids)}", file=sys.stderr)
    return 0


class _Shown:
    """The files made so far on stderr: redrawn on a terminal, a line every tenth (or 30 s) in a log."""

    def __init__(self, what: str):
        from benchmark.run.progress import Pace

        self.what, self.pace = what, Pace()

    def __call__(self, done: int, total: int, path) -> None:
        if self.pace.due(done, total, force=done == total):
            self.pace.write(f"{self.what} {done}/{total} {path.parent.name}/{path.name}")


def run_import(args) -> int:
    import sys

    from core.scenario import load_bank
    from media_effects.media_library import import_recording

    if args.scenario not in {s.scenario_id for s in load_bank().scenarios}:
        print(f"error: no scenario {args.scenario!r} in the shipped bank", file=sys.stderr)
        return 2
    try:
        written = import_recording(_root(args), args.scenario, args.turn, args.file, start=args.start, end=args.end)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


def _missing_root(args, action: str) -> bool:
    import sys

    if _root(args).is_dir():
        return False
    print(
        f"wearsim media {action}: {_root(args)}: no such folder (give --media-root an existing media folder)",
        file=sys.stderr,
    )
    return True


def run_reindex(args) -> int:
    from media_effects.media_library import reindex

    if _missing_root(args, "reindex"):
        return 2
    index = reindex(_root(args))
    print(f"{len(index['files'])} files indexed in {_root(args) / 'index.json'}")
    return 0


def run_verify(args) -> int:
    import sys

    from media_effects.media_library import MediaIndexError, load_index, two_sources, verify

    if _missing_root(args, "verify"):
        return 2
    try:
        problems = verify(_root(args))
    except MediaIndexError as exc:
        print(f"wearsim media verify: {exc}", file=sys.stderr)
        return 1
    for problem in problems:
        print(problem)
    for warning in two_sources(_root(args)):
        print(f"warning: {warning}")
    print(f"{len(load_index(_root(args))['files'])} files indexed, {len(problems)} problems")
    return 1 if problems else 0
