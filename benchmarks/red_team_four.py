"""The fourth red-team pass's attacks (issue 57) that this round fixed, run again against the code, on
loopback and bounded (small sizes, sparse files, no model, no network beyond 127.0.0.1).

    .venv/bin/python benchmarks/red_team_four.py

1. four processes saving 40 labels each for one annotator and an import of 40 more, at once: how many
   of the 200 labels answered saved are missing from the file;
3. the probe's redaction of a hostile server's messages (the key as a property name, 4-character
   pieces taking turns between two delta kinds, 7-character pieces across one event's fields, the key
   upper-cased): 8-character runs of the key left, in any case;
5. `--allow-origin http://glasses.example:9000`: the status for Host glasses.example and Host http:9102;
7. `bench --output-dir` at a folder of someone's findings.md and summary.json: refused, files changed;
8/15. `--config` with trials = 1000000000, limit = -1, temperature = nan, speed = 0, and a 50,000-deep
   array: seconds to the refusal, and its line;
9/10. `--config` at a link to /dev/zero, a FIFO and a sparse 1 GB file; a run's sparse 512 MB
   manifest.json: seconds and the refusal;
11. transcripts.jsonl as a FIFO and as a link to /dev/zero: merge's refusal of the shard;
12. a sparse 64 MB Label Studio export and a CSV of 100,001 rows: seconds and the refusal;
13. `agreement` with 40 annotators on 12 items: seconds, and whether the pairwise table is left out; an
   import naming 25,005 annotators: seconds, the refusal and the label files written;
16. hostile label bodies (a list as key, 5,000-deep JSON, a 10,000-digit number): statuses;
18. temp files left by killed saves: how many are left after the page opens.

Writes benchmarks/results/red_team_four.json.
"""

from __future__ import annotations

import contextlib
import io
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmark import cli  # noqa: E402
from benchmark.labels.run import AnnotatorDesk, open_label_run  # noqa: E402
from benchmark.labels.store import import_labels, label_path, make_label, read_label_file, write_labels  # noqa: E402
from tests.label_runs import build_run  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "red_team_four.json"
EACH = 40


def _pages(run_dir: str, keys: list[str], known: dict, start) -> None:
    start.wait()
    for key in keys:
        write_labels(Path(run_dir), "ana", [make_label(key, "current", "ana", known, "page")], known)


def _import(run_dir: str, keys: list[str], known: dict, start) -> None:
    start.wait()
    import_labels(Path(run_dir), [make_label(k, "prior", "ana", known, "import") for k in keys], known)


def labels_at_once(work: Path) -> dict:
    run = open_label_run(build_run(work / "labels_run", ["current"] * 5 * EACH))
    keys = sorted(run.known)
    ctx = multiprocessing.get_context("fork")
    start = ctx.Event()
    shares = [keys[i * EACH : (i + 1) * EACH] for i in range(5)]
    procs = [ctx.Process(target=_pages, args=(str(run.run_dir), s, run.known, start)) for s in shares[:4]]
    procs.append(ctx.Process(target=_import, args=(str(run.run_dir), shares[4], run.known, start)))
    began = time.monotonic()
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
    saved = read_label_file(label_path(run.run_dir, "ana"), run.run_dir, run.known)
    return {
        "answered_saved": len(keys),
        "missing": len(set(keys) - set(saved)),
        "s": round(time.monotonic() - began, 2),
    }


def probe_redaction() -> dict:
    from benchmark.probe.trace import Redactor, without_media
    from tests.benchmark.test_probe_redaction import KEY, hostile_events, leaks, runs_of_the_key

    redactor = Redactor([KEY])
    audio = without_media({"type": "response.output_audio.delta", "delta": "AAAA" * 20})
    messages = [m for event in hostile_events() for m in (audio, without_media(event))]
    text = "".join(json.dumps({"message": m}) + "\n" for m in redactor.messages(messages))
    printed = redactor.text(f"reply: {KEY.upper()}")
    return {
        "trace_runs_of_8_left": len(leaks(text)),
        "stdout_runs_of_8_left": len(runs_of_the_key(printed)),
    }


def origin() -> dict:
    from streaming.origin import OriginCheck

    check = OriginCheck(None, allowed_origins=("http://glasses.example:9000",))

    def status(host: str) -> int:
        refused = check.refusal({"type": "http", "method": "GET", "headers": [(b"host", host.encode())]})
        return 200 if refused is None else refused[0]

    return {"Host glasses.example:9000": status("glasses.example:9000"), "Host http:9102": status("http:9102")}


def someones_folder(work: Path) -> dict:
    from benchmark.run.errors import RunDirError
    from benchmark.run.run_dir import open_run_dir

    folder = work / "mine"
    folder.mkdir()
    (folder / "findings.md").write_text("mine\n")
    (folder / "summary.json").write_text("{}\n")
    before = sorted(p.name for p in folder.iterdir())
    try:
        open_run_dir(folder, {"benchmark_version": "v1", "timestamp_utc": "now"}).close()
        said = "accepted"
    except RunDirError as exc:
        said = str(exc)
    return {"said": said, "files_changed": sorted(p.name for p in folder.iterdir()) != before}


def bench_refusal(*argv: str) -> dict:
    err = io.StringIO()
    began = time.monotonic()
    with contextlib.redirect_stderr(err), contextlib.suppress(SystemExit):
        cli.main(["bench", *argv])
    line = err.getvalue().strip().splitlines()
    return {"s": round(time.monotonic() - began, 3), "said": line[-1][:160] if line else ""}


def configs(work: Path) -> dict:
    out = {}
    for name, text in {
        "trials": "trials = 1000000000",
        "limit": "limit = -1",
        "temperature": "temperature = nan",
        "speed": 'via = "stream"\nspeed = 0',
        "deep": "ids = " + "[" * 50_000 + "]" * 50_000,
    }.items():
        path = work / f"{name}.toml"
        path.write_text(text + "\n")
        out[name] = bench_refusal("--config", str(path))
    zero, fifo, giant = work / "zero.toml", work / "fifo.toml", work / "giant.toml"
    os.symlink("/dev/zero", zero)
    os.mkfifo(fifo)
    with giant.open("wb") as handle:
        handle.truncate(1 << 30)
    for name, path in (("dev_zero", zero), ("fifo", fifo), ("sparse_1gb", giant)):
        out[name] = bench_refusal("--config", str(path))
    run = work / "giant_manifest"
    run.mkdir()
    with (run / "manifest.json").open("wb") as handle:
        handle.truncate(512 << 20)
    from benchmark.run.errors import RunDirError
    from benchmark.run.run_dir import open_run_dir

    began = time.monotonic()
    try:
        open_run_dir(run, {"benchmark_version": "v1", "timestamp_utc": "now"}).close()
        said = "accepted"
    except RunDirError as exc:
        said = str(exc)[:160]
    out["manifest_512mb"] = {"s": round(time.monotonic() - began, 3), "said": said}
    return out


def transcripts_and_imports(work: Path) -> dict:
    from benchmark.labels.exchange import MAX_IMPORT_ITEMS, read_csv, read_label_studio
    from benchmark.labels.items import LabelError
    from benchmark.merge.runs import MergeError, read_shard

    out = {}
    fixture = ROOT / "tests" / "fixtures" / "transcripts" / "schema1_direct" / "manifest.json"
    for name in ("fifo", "dev_zero"):
        shard = work / f"shard_{name}"
        shard.mkdir()
        (shard / "manifest.json").write_bytes(fixture.read_bytes())
        if name == "fifo":
            os.mkfifo(shard / "transcripts.jsonl")
        else:
            os.symlink("/dev/zero", shard / "transcripts.jsonl")
        try:
            read_shard(shard)
            out[f"11_merge_{name}"] = "counted"
        except MergeError as exc:
            out[f"11_merge_{name}"] = str(exc)[len(str(work)) :][:120]
    giant, rows = work / "export.json", work / "rows.csv"
    with giant.open("wb") as handle:
        handle.truncate(64 << 20)
    rows.write_text("trial_key,label,annotator\n" + "k,current,ana\n" * (MAX_IMPORT_ITEMS + 1))
    known = {"k": "turn2"}
    for name, read in (
        ("12_label_studio_64mb", lambda: read_label_studio(giant, known, "ana")),
        ("12_csv_rows", lambda: read_csv(rows, known)),
    ):
        began = time.monotonic()
        try:
            read()
            said = "accepted"
        except LabelError as exc:
            said = str(exc)[len(str(work)) :][:120]
        out[name] = {"s": round(time.monotonic() - began, 3), "said": said}
    return out


def crowd(work: Path) -> dict:
    from benchmark.labels.items import LabelError
    from benchmark.labels.measure import measure_agreement

    run = open_label_run(build_run(work / "crowd_run", ["current"] * 12))
    keys = sorted(run.known)
    choices = ["current", "prior", "clarify", "abstain"]
    for n in range(40):
        given = [make_label(k, choices[(i + n // 10) % 4], f"p{n}", run.known, "crowd") for i, k in enumerate(keys)]
        write_labels(run.run_dir, f"p{n}", given, run.known)
    began = time.monotonic()
    result = measure_agreement(run, "turn2")
    out = {"annotators": 40, "s": round(time.monotonic() - began, 2), "pairs_left_out": result["pairs_left_out"]}
    many = [make_label(keys[0], "prior", f"c{n}", run.known, "crowd") for n in range(25_005)]
    began = time.monotonic()
    try:
        import_labels(run.run_dir, many, run.known)
        said = "accepted"
    except LabelError as exc:
        said = str(exc)[:160]
    out["import_25005_annotators"] = {
        "s": round(time.monotonic() - began, 2),
        "said": said.replace(str(work), "WORK"),
        "label_files": len(list((run.run_dir / "labels").glob("*.jsonl"))),
    }
    return out


def label_bodies(work: Path) -> dict:
    from fastapi.testclient import TestClient

    from streaming.annotate_app import create_annotate_app

    run = open_label_run(build_run(work / "bodies_run", ["current"] * 4))
    desk = AnnotatorDesk(run=run, annotator="ana", what="turn2", sample=run.sample("turn2", None, 47))
    headers = {"content-type": "application/json", "host": "127.0.0.1", "origin": "http://127.0.0.1"}
    bodies = {
        "list_as_key": '{"key": ["x"], "label": "current"}',
        "5000_deep": "[" * 5000 + "]" * 5000,
        "10000_digits": '{"key": ' + "1" * 10_000 + "}",
    }
    with TestClient(create_annotate_app(desk), raise_server_exceptions=False) as client:
        return {
            name: client.post("/v1/annotate/label", content=body, headers=headers).status_code
            for name, body in bodies.items()
        }


def temp_files(work: Path) -> dict:
    run = open_label_run(build_run(work / "temp_run", ["current"] * 4))
    folder = run.run_dir / "labels"
    folder.mkdir()
    for i in range(20):
        (folder / f".ana.jsonl.{5000 + i}.{i:012x}.tmp").write_text("{")
    AnnotatorDesk(run=run, annotator="ana", what="turn2", sample=run.sample("turn2", None, 47))
    return {"left_by_20_kills": 20, "after_start": len([p for p in folder.iterdir() if p.name.endswith(".tmp")])}


def main() -> int:
    os.environ["OPENAI_API_KEY"] = ""
    results: dict = {"command": "benchmarks/red_team_four.py"}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results["1_labels_two_pages_and_an_import"] = labels_at_once(work)
        results["3_probe_redaction"] = probe_redaction()
        results["5_allow_origin"] = origin()
        results["7_output_dir_not_a_run"] = someones_folder(work)
        results["8_9_10_15_numbers_and_files"] = configs(work)
        results["11_12_transcripts_and_imports"] = transcripts_and_imports(work)
        results["13_agreement_40_annotators"] = crowd(work)
        results["16_hostile_label_bodies"] = label_bodies(work)
        results["18_temp_files"] = temp_files(work)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
