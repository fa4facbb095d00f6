"""The browser page and what it needs from the server.

- `GET /`: the live assistant page (`streaming/web/`, plain HTML/CSS/JS,
  served from the same origin as the WebSocket);
- `GET /v1/info`: what the page may choose: backends, describers, prompt
  conditions, whether a token is needed, and (when recording is on) the
  scenarios' lines and camera texts for the recording studio;
- `POST /v1/record?scenario=ID&step=NAME`: one recorded step (a WebM of
  camera and microphone) written into the media layout of `--record DIR`
  through the same code as `wearsim media import`. Off unless the server
  was started with a record dir; the body is capped in size and in time
  (`RECORD_BODY_TIMEOUT_S`, pauses of at most `RECORD_GAP_TIMEOUT_S`: 408);
  and at least `MIN_RECORD_RATE` bytes a second on average once
  `RECORD_GRACE_S` have passed (408: a body trickled a byte at a time lets
  go of its place within seconds, not two minutes; `streaming.body_deadline`);
  the recording is probed before it is decoded and refused over a step's
  limits (`media_effects.media_library.probe_recording`: 413); nothing
  half-written stays behind. An upload takes its place in the studio's own
  small pool (`streaming.import_pool`) when it starts, with the bytes it
  declares, before a byte is stored; a body in chunks takes more as it
  comes; the uploads being stored hold at most `MAX_INCOMING_BYTES` in all,
  and those of one address at most `IMPORT_PER_CLIENT` places and
  `MAX_INCOMING_PER_CLIENT` bytes (the rest kept for other addresses), so
  one address's uploads cannot refuse another's.
  Imports run on that pool (`IMPORT_WORKERS` threads at the lowest CPU
  priority, at most `IMPORT_WAITING` more places), never on the default
  executor that Whisper and the sessions' frame steps share; past the
  places or the bytes, 503 "busy, try again" with Retry-After.
"""

from __future__ import annotations

import os
import secrets
import shutil
import uuid
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse
from starlette.requests import ClientDisconnect

from media_effects.audio import MediaLimit
from streaming.body_deadline import TOO_SLOW_HEADERS, BodyDeadline, BodyTooSlow
from streaming.import_pool import ImportBusy, ImportPool
from streaming.web_files import WEB_ROOT, add_web_files

MAX_RECORDING_BYTES = 64 * 1024 * 1024
RECORD_BODY_TIMEOUT_S = 120.0  # the whole body of POST /v1/record (64 MB: about 0.5 MB/s at the least)
RECORD_GAP_TIMEOUT_S = 10.0  # and no pause between its pieces longer than this
STEPS = ("context", "turn_1", "turn_2", "turn_3_repair")
IMPORT_WORKERS = 1  # studio imports decoding at once (each on a thread of its own, at nice 19)
IMPORT_WAITING = 24  # more places (uploads being stored, imports queued); past that 503 "busy, try again"
MAX_INCOMING_BYTES = 256 * 1024 * 1024  # what the uploads being stored in .incoming may hold at once
# what one address may hold, the rest kept for others: 20 of the 25 places (a studio saving 20 steps at
# once still can), and all the bytes but one largest recording's
IMPORT_PER_CLIENT = 20
MAX_INCOMING_PER_CLIENT = MAX_INCOMING_BYTES - MAX_RECORDING_BYTES
MIN_RECORD_RATE = 32 * 1024  # bytes a second an upload must average, once RECORD_GRACE_S have passed
RECORD_GRACE_S = 10.0


def _steps(scenario) -> list[dict]:
    steps = [{"name": "context", "say": None, "camera": scenario.context_image}] if scenario.context_image else []
    return steps + [
        {"name": "turn_1", "say": scenario.turn_1_user, "camera": scenario.turn_1_image},
        {"name": "turn_2", "say": scenario.turn_2_user, "camera": scenario.turn_2_image},
        {"name": "turn_3_repair", "say": scenario.turn_3_repair_anchor, "camera": None},
    ]


def _token_ok(given: str | None, expected: str | None) -> bool:
    if not expected:
        return True
    return given is not None and secrets.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def add_web_routes(
    app: FastAPI, *, token: str | None, backends: tuple[str, ...], describers: tuple[str, ...], record_dir: Path | None
) -> None:
    from core.scenario import load_bank

    bank = load_bank()
    imports = ImportPool(IMPORT_WORKERS, IMPORT_WAITING, MAX_INCOMING_BYTES, IMPORT_PER_CLIENT, MAX_INCOMING_PER_CLIENT)
    body_deadline = BodyDeadline(
        total_s=RECORD_BODY_TIMEOUT_S, min_rate=MIN_RECORD_RATE, grace_s=RECORD_GRACE_S, gap_s=RECORD_GAP_TIMEOUT_S
    )
    add_web_files(app)

    @app.get("/", include_in_schema=False)
    async def page():
        return FileResponse(WEB_ROOT / "index.html")

    @app.get("/v1/info")
    async def info():
        data = {
            "protocol": 1,
            "backends": list(backends),
            "describers": list(describers),
            "conditions": [
                {"name": c.name, "description": c.description, "system_prompt": c.system_prompt}
                for c in bank.conditions
            ],
            "token_required": bool(token),
            "recording": record_dir is not None,
        }
        if record_dir is not None:
            data["scenarios"] = [
                {"scenario_id": s.scenario_id, "activity_domain": s.activity_domain, "steps": _steps(s)}
                for s in bank.scenarios
            ]
        return data

    @app.post("/v1/record")
    async def record(request: Request, scenario: str = "", step: str = ""):
        def refuse(status: int, message: str):
            return JSONResponse({"error": message}, status_code=status)

        def busy(why: ImportBusy):
            return JSONResponse({"error": f"busy, try again: {why}"}, status_code=503, headers={"Retry-After": "30"})

        if record_dir is None:
            return refuse(403, "recording is off: start the server with wearsim serve --record DIR")
        if not _token_ok(request.headers.get("x-wearsim-token"), token):
            return refuse(401, "missing or wrong token (X-Wearsim-Token)")
        if scenario not in {s.scenario_id for s in bank.scenarios}:
            return refuse(400, f"unknown scenario {scenario[:40]!r}")
        if step not in STEPS:
            return refuse(400, f"step must be one of {', '.join(STEPS)}")
        length = request.headers.get("content-length")
        declared = int(length) if length and length.isascii() and length.isdigit() else 0
        if declared > MAX_RECORDING_BYTES:
            return refuse(413, f"a recording may be at most {MAX_RECORDING_BYTES // 2**20} MB")
        try:
            host = request.client.host if request.client else None
            place = imports.reserve(declared, host)  # before a byte of the upload is stored
        except ImportBusy as exc:
            return busy(exc)
        from core.safe_files import make_dirs

        try:
            stage = make_dirs(Path(record_dir) / ".incoming" / uuid.uuid4().hex, Path(record_dir))
        except ValueError as exc:
            place.release()
            return refuse(500, f"the recording could not be saved: {_relative(str(exc), Path(record_dir))}")
        try:
            upload = stage / "upload.webm"
            size = 0
            with upload.open("wb") as handle:
                async for chunk in body_deadline.chunks(request):
                    size += len(chunk)
                    if size > MAX_RECORDING_BYTES:
                        return refuse(413, f"a recording may be at most {MAX_RECORDING_BYTES // 2**20} MB")
                    place.grow(size)  # a chunked body, or one past what it declared, takes more as it comes
                    handle.write(chunk)
            if not size:
                return refuse(400, "the recording is empty")
            files = await imports.run(_import, Path(record_dir), stage, scenario, step, upload)
        except ImportBusy as exc:
            return busy(exc)
        except BodyTooSlow as exc:
            return JSONResponse(
                {"error": f"the recording did not arrive in time: {exc}"}, status_code=408, headers=TOO_SLOW_HEADERS
            )
        except ClientDisconnect:  # the client left mid-upload: nothing to answer, nothing kept
            return refuse(400, "the upload was cut off")
        except MediaLimit as exc:  # probed from the header (or counted while decoding): nothing big decoded
            return refuse(413, f"the recording is over a step's limits: {_relative(str(exc), Path(record_dir))}")
        except ValueError as exc:
            return refuse(400, f"the recording cannot be used: {_relative(str(exc), Path(record_dir))}")
        except OSError as exc:
            return refuse(500, f"the recording could not be saved: {_relative(str(exc), Path(record_dir))}")
        finally:
            shutil.rmtree(stage, ignore_errors=True)
            place.release()
        return {"files": files}


def _relative(text: str, root: Path) -> str:
    """An error message with the server's paths under `root` shown relative to it."""
    for prefix in {str(root.resolve()), str(root)}:
        text = text.replace(prefix + os.sep, "")
    return text


def _import(root: Path, stage: Path, scenario_id: str, step: str, upload: Path) -> list[str]:
    """Import into a staging layout first, then rename the files into `root`
    (never over a link, never into a folder leading out of it) and index them
    together (one writer of the index at a time): a failure leaves `root` untouched."""
    from core.safe_files import check_target, make_dirs
    from media_effects.media_library import changing_index, entry_for, import_recording

    staged = import_recording(stage / "layout", scenario_id, step, upload)
    folder = make_dirs(root / scenario_id, root)
    entries = {}
    for path in staged:
        target = check_target(folder / path.name, root)
        os.replace(path, target)  # the stage is inside `root`: one file system
        entries[target.relative_to(root).as_posix()] = entry_for(target, "recorded", "recorded in the browser studio")
    with changing_index(root) as index:
        index["files"].update(entries)
    return list(entries)
