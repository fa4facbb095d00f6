"""Issue 57 row 12: label imports (Label Studio JSON, CSV) are read as regular files under a cap, checked
before reading: a sparse giant, a FIFO or a link to /dev/zero, 5,000-deep JSON, a file of too many tasks
or rows are each refused with one line naming the file."""

from __future__ import annotations

import os
import resource

import pytest

from benchmark.labels.exchange import MAX_IMPORT_ITEMS, read_csv, read_label_studio
from benchmark.labels.items import LabelError

KNOWN = {"sc-01|baseline|0": "turn2"}


def test_a_sparse_giant_export_is_refused_by_its_size_before_reading(tmp_path):
    giant = tmp_path / "export.json"
    with giant.open("wb") as handle:
        handle.truncate(64 << 20)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(LabelError, match=r"export.json: 64.0 MB, larger than a label import can be \(16.0 MB\)"):
        read_label_studio(giant, KNOWN, annotator="ana")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 32 * 1024  # KB


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_fifo_or_a_device_is_refused_without_waiting(tmp_path, kind):
    path = tmp_path / "labels.csv"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        os.symlink("/dev/zero", path)
    with pytest.raises(LabelError, match="labels.csv: is a FIFO, a device or a socket"):
        read_csv(path, KNOWN)


def test_deep_json_and_too_many_tasks_or_rows_name_the_file(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(LabelError, match="deep.json: not a Label Studio JSON export"):
        read_label_studio(deep, KNOWN, annotator="ana")
    many = tmp_path / "many.json"
    many.write_text("[" + ",".join(["{}"] * (MAX_IMPORT_ITEMS + 1)) + "]")
    with pytest.raises(LabelError, match=f"many.json: {MAX_IMPORT_ITEMS + 1:,} tasks, over the"):
        read_label_studio(many, KNOWN, annotator="ana")
    rows = tmp_path / "rows.csv"
    rows.write_text("trial_key,label,annotator\n" + "sc-01|baseline|0,current,ana\n" * (MAX_IMPORT_ITEMS + 1))
    with pytest.raises(LabelError, match="rows.csv: line .*: over the 100,000 rows an import may hold"):
        read_csv(rows, KNOWN)
