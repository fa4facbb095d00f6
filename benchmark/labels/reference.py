"""Reference labels for checking a judge (`wearsim judge-check`): a file of labels read into items, each a
Turn 2 reply as the judge sees it (`JudgeCase`) with the label it should get.

Four shapes, told apart by what the path is and what the file begins with (`read_references`):

- `careful`: a JSON Lines file of one label a reply (the shape of `careful_labels.jsonl`): `file`,
  `scenario_id`, `condition`, `trials` and `label` (null: the readers disagreed). The reply is the line of
  the replies file `file`, beside the labels, with the same scenario, condition and `trial` `trials[0]`;
  the scenarios are the v1 bank `v1bank/` beside them.
- `run`: a run dir's own labels, `RUN_DIR/labels/*.jsonl` (`wearsim annotate`); the path is the run dir or
  its `labels/` folder.
- `label-studio` (a JSON export) and `csv` (`trial_key,label,annotator[,note]`), read with
  `benchmark.labels.exchange`'s readers against the run they label (`run`: its replies and keys).

In the last three the reference of an item is the annotators' majority (`agreement.majority`; each
Label Studio annotation is one vote). Only Turn 2 grounding labels count: an item labelled only "cannot
tell", one whose annotators tie, one whose label is null, or a Turn 3 or remark item is skipped and
counted by why. Everything else wrong is a `LabelError` of one line naming the file and the line (or the
task): a path that is not a regular file or is over `MAX_LABELS_BYTES` (checked before it is read), a line
that is not a JSON object, a field missing or of the wrong type, a label outside the four (and null and
"cannot tell"), a scenario not in the bank, a replies file missing or without the reply named.
"""

from __future__ import annotations

import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from benchmark.labels.agreement import majority
from benchmark.labels.exchange import MAX_IMPORT_BYTES
from benchmark.labels.items import CANNOT_TELL, LabelError, cell_key
from benchmark.labels.store import json_object
from core.judge import LABELS, JudgeCase
from core.records import RecordError, TrialRecord, build_user_turn
from core.safe_files import megabytes

NO_CAMERA_SUFFIX = "_no-camera.jsonl"  # a replies file of trials run with no camera block sent


def camera_was_sent(replies_file: str) -> bool:
    """Whether the trials of a careful-labels replies file were sent Turn 2's camera block: not in a
    file whose name ends in `_no-camera.jsonl` (its records still hold the scene's text)."""
    return not replies_file.endswith(NO_CAMERA_SUFFIX)


MAX_LABELS_BYTES = MAX_IMPORT_BYTES  # a labels file, a replies file: 64 MB
MAX_LINE_BYTES = 2**20
BANK_DIR = "v1bank"
SHAPES = {
    "careful": "careful labels (JSON Lines, one label a reply; the replies files and v1bank/ beside it)",
    "run": "a run's own labels (RUN_DIR/labels/*.jsonl; the reference is the annotators' majority)",
    "label-studio": "a Label Studio JSON export (the reference is the annotations' majority)",
    "csv": "a CSV trial_key,label,annotator[,note] (the reference is the annotators' majority)",
}
NEEDS_RUN = ("label-studio", "csv")
# why an item is skipped
DISAGREED = "the readers disagreed (label null)"
ONLY_CANNOT_TELL = "labelled only 'cannot tell'"
TIE = "no majority (the annotators tie)"
NOT_TURN_2 = "not a Turn 2 reply (a Turn 3 reply or a remark)"


@dataclass(frozen=True, kw_only=True)
class ReferenceItem:
    key: str  # names the reply: `FILE|scenario|condition|trial`, or the run's trial key
    scenario_id: str
    case: JudgeCase
    reference: str  # one of core.judge.LABELS


@dataclass(frozen=True, kw_only=True)
class References:
    source: Path
    shape: str  # a key of SHAPES
    read: int  # lines (careful) or labels (the others) read
    items: tuple[ReferenceItem, ...]
    skipped: dict[str, int] = field(default_factory=dict)  # why -> how many items
    run_dir: Path | None = None

    @property
    def described(self) -> str:
        return SHAPES[self.shape] + (f", replies from {self.run_dir}" if self.run_dir is not None else "")


def check_file(path: Path, what: str = "labels file") -> Path:
    """`path` when it is a regular file (a link to one is followed) of at most `MAX_LABELS_BYTES`, else a
    `LabelError` saying why; nothing is read."""
    try:
        facts = path.stat()
    except FileNotFoundError:
        raise LabelError(f"{path}: no such file") from None
    except OSError as exc:
        raise LabelError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(facts.st_mode):
        raise LabelError(f"{path}: not a regular file")
    if facts.st_size > MAX_LABELS_BYTES:
        raise LabelError(
            f"{path}: {megabytes(facts.st_size)}, over the {megabytes(MAX_LABELS_BYTES)} a {what} may hold"
        )
    return path


def json_lines(path: Path, what: str = "labels file"):
    """(line number, JSON object) of each non-blank line of a checked file; one `LabelError` at the first
    line that is over `MAX_LINE_BYTES` or not a JSON object, or when the file grows past the cap."""
    from benchmark.scoring.trials import bounded_lines

    check_file(path, what)
    for number, offset, raw, size in bounded_lines(path, MAX_LINE_BYTES):
        where = f"{path}: line {number}"
        if offset + size > MAX_LABELS_BYTES:
            raise LabelError(f"{where}: the file grew past the {megabytes(MAX_LABELS_BYTES)} a {what} may hold")
        if raw is None:
            raise LabelError(f"{where}: {size:,} bytes, over the {MAX_LINE_BYTES:,} a line may hold")
        if not raw.strip():
            continue
        yield number, json_object(raw, where)


_KINDS = {str: "text (not empty)", int: "a whole number", list: "a list"}


def _field(data: dict, name: str, where: str, kind: type = str):
    """`data[name]` when it is there and of `kind` (text: not blank), else one `LabelError` line."""
    if name not in data:
        raise LabelError(f"{where}: missing field {name!r}")
    value = data[name]
    if not isinstance(value, kind) or isinstance(value, bool) or (isinstance(value, str) and not value.strip()):
        raise LabelError(f"{where}: field {name!r} must be {_KINDS[kind]}")
    return value


class _Replies:
    """The replies files beside a careful-labels file, each read once when first named."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.files: dict[str, dict[tuple[str, str, int], tuple[str, dict]]] = {}

    def reply(self, name: str, scenario_id: str, condition: str, trial: int, where: str) -> tuple[str, dict]:
        """(where the reply's line is, the reply's line) of `name`'s trial."""
        if "\0" in name or name != Path(name).name or name in (".", ".."):
            raise LabelError(f"{where}: field 'file' must name a file beside the labels, not {name[:80]!r}")
        if name not in self.files:
            path = self.folder / name
            if not path.exists():
                raise LabelError(f"{where}: replies file {name!r} not found in {self.folder}")
            table: dict[tuple[str, str, int], tuple[str, dict]] = {}
            for number, data in json_lines(path, "replies file"):
                here = f"{path}: line {number}"
                cell = (
                    _field(data, "scenario_id", here),
                    _field(data, "condition", here),
                    _field(data, "trial", here, int),
                )
                table.setdefault(cell, (here, data))
            self.files[name] = table
        found = self.files[name].get((scenario_id, condition, trial))
        if found is None:
            raise LabelError(f"{where}: {name} holds no reply of {scenario_id} {condition} trial {trial}")
        return found


def _careful(path: Path) -> References:
    from core.scenario import BankError, load_bank

    bank_dir = path.parent / BANK_DIR
    if not bank_dir.is_dir():
        raise LabelError(f"{path}: no {BANK_DIR}/ beside it (the bank the replies were made on)")
    try:
        bank = {s.scenario_id: s for s in load_bank(bank_dir).scenarios}
    except BankError as exc:
        raise LabelError(exc.problems[0] if exc.problems else str(exc)) from None
    replies = _Replies(path.parent)
    items, skipped, read = [], Counter[str](), 0
    for number, data in json_lines(path):
        where = f"{path}: line {number}"
        read += 1
        name = _field(data, "file", where)
        scenario_id = _field(data, "scenario_id", where)
        condition = _field(data, "condition", where)
        trials = _field(data, "trials", where, list)
        if not trials or not all(isinstance(t, int) and not isinstance(t, bool) for t in trials):
            raise LabelError(f"{where}: field 'trials' must be a list of trial numbers")
        if "label" not in data:
            raise LabelError(f"{where}: missing field 'label'")
        label = data["label"]
        if label is not None and label != CANNOT_TELL and label not in LABELS:
            raise LabelError(f"{where}: label {str(label)[:40]!r} is not one of {', '.join(LABELS)} (or null)")
        if scenario_id not in bank:
            raise LabelError(f"{where}: scenario {scenario_id[:80]!r} is not in the bank {bank_dir}")
        here, reply = replies.reply(name, scenario_id, condition, trials[0], where)
        try:
            response = TrialRecord.from_json(reply, here).turn_2_response
        except RecordError as exc:
            raise LabelError(str(exc).splitlines()[0]) from None
        if not isinstance(response, str):
            raise LabelError(f"{here}: no Turn 2 reply (its turn_2_response must be text)")
        user = _field(reply, "turn_2_user", here)
        camera = reply.get("turn_2_image")
        if camera is not None and not isinstance(camera, str):
            raise LabelError(f"{here}: field 'turn_2_image' must be text or null")
        if not camera_was_sent(name):
            camera = None  # the record keeps the scene's text, but the candidate never saw it
        if label is None or label == CANNOT_TELL:
            skipped[DISAGREED if label is None else ONLY_CANNOT_TELL] += 1
            continue
        case = JudgeCase(
            scenario=bank[scenario_id], turn=2, user_message=build_user_turn(camera, user), response=response
        )
        key = f"{name}|{scenario_id}|{condition}|{trials[0]}"
        items.append(ReferenceItem(key=key, scenario_id=scenario_id, case=case, reference=label))
    return References(source=path, shape="careful", read=read, items=tuple(items), skipped=dict(skipped))


def _by_majority(run, votes: dict[str, list[str]], source: Path, shape: str, read: int) -> References:
    """Each voted item of the run with its majority, the others counted by why they are skipped."""
    turn_2 = {item.key for item in run.items("turn2")}
    records = {cell_key(record): record for record in run.records}
    items, skipped = [], Counter[str]()
    for key in [k for k in records if k in votes] + [k for k in votes if k not in records]:
        valid = [label for label in votes[key] if label in LABELS]
        if key not in turn_2:
            skipped[NOT_TURN_2] += 1
        elif not valid:
            skipped[ONLY_CANNOT_TELL] += 1
        elif (winner := majority(valid)) is None:
            skipped[TIE] += 1
        else:
            record = records[key]
            case = record.judge_case(run.bank[record.scenario_id], 2)
            items.append(ReferenceItem(key=key, scenario_id=record.scenario_id, case=case, reference=winner))
    return References(
        source=source, shape=shape, read=read, items=tuple(items), skipped=dict(skipped), run_dir=run.run_dir
    )


def _run_dir_of(path: Path) -> Path | None:
    if (path / "transcripts.jsonl").is_file():
        return path
    if path.name == "labels" and (path.parent / "transcripts.jsonl").is_file():
        return path.parent
    return None


def _run_labels(path: Path, run_dir: Path, run) -> References:
    from benchmark.labels.store import LABELS_DIR, read_all_labels

    people = read_all_labels(run_dir, run.known)
    if not people:
        raise LabelError(f"{run_dir / LABELS_DIR}: no label files (wearsim annotate {run_dir} --annotator NAME)")
    votes: dict[str, list[str]] = {}
    for given in people.values():
        for key, label in given.items():
            votes.setdefault(key, []).append(label.label)
    return _by_majority(run, votes, path, "run", sum(len(given) for given in people.values()))


def _imported(path: Path, shape: str, run) -> References:
    from benchmark.labels.exchange import read_csv, read_label_studio

    if shape == "csv":
        latest = {(label.key, label.annotator): label.label for label in read_csv(path, run.known)}
        votes: dict[str, list[str]] = {}
        for (key, _), label in latest.items():
            votes.setdefault(key, []).append(label)
        return _by_majority(run, votes, path, shape, len(latest))
    labels = read_label_studio(path, run.known, "label-studio")  # every annotation is one vote
    votes = {}
    for given in labels:
        votes.setdefault(given.key, []).append(given.label)
    return _by_majority(run, votes, path, shape, len(labels))


def shape_of(path: Path) -> str:
    """Which shape a checked labels file is: by its suffix (.csv, .json), else by how it begins."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix == ".json":
        return "label-studio"
    with path.open("rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"["):
        return "label-studio"
    if head.startswith(b"trial_key"):
        return "csv"
    if head.startswith(b"{"):
        first = head.split(b"\n", 1)[0]
        if b'"trial_key"' in first:
            raise LabelError(
                f"{path}: line 1: one annotator's label file; give its run dir (wearsim judge-check RUN_DIR)"
            )
        return "careful"
    if not head:
        raise LabelError(f"{path}: empty")
    raise LabelError(
        f"{path}: line 1: not a labels file judge-check reads (careful-labels JSON Lines, a Label Studio JSON "
        "export, a CSV trial_key,label,annotator, or a run dir)"
    )


def read_references(path: str | Path, run: str | Path | None = None, scenarios: str | Path | None = None) -> References:
    """The items of a labels file of any of the four shapes. `run` (a run dir) is where the replies of a
    Label Studio export or a CSV are, and is refused with the other two; `scenarios` is the run's bank
    (default: its manifest's, else the shipped one)."""
    from benchmark.labels.run import open_label_run

    path = Path(path)
    if path.is_dir():
        run_dir = _run_dir_of(path)
        if run_dir is None:
            raise LabelError(f"{path}: a folder that is neither a run dir nor its labels/ (no transcripts.jsonl)")
        if run is not None and Path(run).resolve() != run_dir.resolve():
            raise LabelError(f"{path}: the labels of the run {run_dir}; --run names another run ({run})")
        return _run_labels(path, run_dir, open_label_run(run_dir, scenarios))
    shape = shape_of(check_file(path))
    if shape in NEEDS_RUN:
        if run is None:
            raise LabelError(f"{path}: {SHAPES[shape]} needs --run RUN_DIR, the run whose replies it labels")
        return _imported(path, shape, open_label_run(run, scenarios))
    if run is not None or scenarios is not None:
        raise LabelError(
            f"{path}: careful labels name their replies and bank themselves; leave out --run and --scenarios"
        )
    return _careful(path)
