"""The local model server yields the cores to the wearsim process (issue 36): it
runs `SERVER_NICE` steps nicer than its parent, and the scheduling group its own
session makes on Linux is set to that niceness too."""

import os
from pathlib import Path
from urllib.parse import urlparse

from candidates.local import SERVER_NICE


def _server_pid(port: int) -> int:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--port" in args and args[args.index(b"--port") + 1] == str(port).encode():
            return int(entry.name)
    raise AssertionError(f"no process serves port {port}")


def test_the_model_server_runs_below_the_wearsim_process(local_llama_url):
    pid = _server_pid(urlparse(local_llama_url).port)
    stat = Path(f"/proc/{pid}/stat").read_text()
    assert int(stat[stat.rindex(")") + 2 :].split()[16]) == min(19, os.nice(0) + SERVER_NICE)  # its nice raised
    group = Path(f"/proc/{pid}/autogroup")
    if group.exists():  # kernels built with autogroup scheduling
        assert group.read_text().split()[-1] == str(SERVER_NICE)
