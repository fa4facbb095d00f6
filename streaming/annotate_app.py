"""The labelling page's server (`wearsim annotate`): a FastAPI app of its own,
behind the same Host and Origin checks as the live page (`streaming.origin`).

- `GET /`: the labelling page (`streaming/web/annotate.html`, plain
  HTML/CSS/JS, keys 1-4 and `u`, a note, back and skip, a progress bar, the
  rubric's definitions one click away);
- `GET /v1/annotate`: what the page shows: the annotator, the kind of item,
  the choices with their definitions, the sample's items and this
  annotator's own labels (a resumed visit starts at the first unlabelled
  item). The desk decides what an item holds; it never hands over a judge's
  label or another annotator's;
- `POST /v1/annotate/label`: one label (`{"key", "label", "note"}`, JSON, at
  most `MAX_LABEL_BODY` bytes), saved before the answer goes back. Its body
  must come within `LABEL_BODY_TIMEOUT_S`, at `MIN_LABEL_RATE` on average
  after `LABEL_GRACE_S` (`streaming.body_deadline`), else 408 and the
  connection closed: 530 POSTs trickling a byte every 8 s held every place
  of the page's server, and the page answered 503, for as long as they sent
  (issue 57 row 4).

The app knows nothing of runs or judges: it is handed a desk with `page()`
and `save(key, label, note)` (`benchmark.labels.run.AnnotatorDesk`); a
`ValueError` from either is the answer's one-line error.
"""

from __future__ import annotations

import json
from typing import Protocol, cast

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from streaming.body_deadline import TOO_SLOW_HEADERS, BodyDeadline, BodyTooSlow
from streaming.web_files import WEB_ROOT, add_web_files

MAX_LABEL_BODY = 16 * 1024
# A label is a few hundred bytes, sent by fetch() with its headers: a phone on a poor link (a few KB/s, a
# lost packet sent again after 1 s, then 2 s) has it all in well within the grace. Past the grace the body
# must average 1 KB/s, and all of it come within 15 s (a 15 KB note at that pace still lands); a body
# trickled a byte at a time lets go of its place after 5 s.
LABEL_BODY_TIMEOUT_S = 15.0
LABEL_GRACE_S = 5.0
MIN_LABEL_RATE = 1024  # bytes a second on average, once LABEL_GRACE_S have passed
NO_STORE = {"cache-control": "no-store"}


class Desk(Protocol):
    def page(self) -> dict: ...

    def save(self, key: str, label: str, note: str = "") -> int: ...


def create_annotate_app(
    desk: Desk, *, allowed_origins: tuple[str, ...] = (), allowed_hosts: tuple[str, ...] = ()
) -> FastAPI:
    from streaming.origin import OriginCheck

    app = FastAPI(title="wearsim labelling", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(OriginCheck, allowed_origins=allowed_origins, allowed_hosts=allowed_hosts)
    add_web_files(app)
    body_deadline = BodyDeadline(total_s=LABEL_BODY_TIMEOUT_S, min_rate=MIN_LABEL_RATE, grace_s=LABEL_GRACE_S)

    def refuse(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status, headers=NO_STORE)

    @app.get("/healthz")
    async def healthz():
        return {"ok": True}

    @app.get("/", include_in_schema=False)
    async def page():
        return FileResponse(WEB_ROOT / "annotate.html", headers=NO_STORE)

    @app.get("/v1/annotate")
    async def items():
        try:
            return JSONResponse(await run_in_threadpool(desk.page), headers=NO_STORE)
        except ValueError as exc:
            return refuse(409, str(exc))

    @app.post("/v1/annotate/label")
    async def label(request: Request):
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return refuse(415, "send the label as application/json")
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > MAX_LABEL_BODY:
            return refuse(413, f"a label may be at most {MAX_LABEL_BODY} bytes")
        body = b""
        try:
            async for chunk in body_deadline.chunks(request):
                body += chunk
                if len(body) > MAX_LABEL_BODY:
                    return refuse(413, f"a label may be at most {MAX_LABEL_BODY} bytes")
        except BodyTooSlow as exc:
            return JSONResponse(
                {"error": f"the label did not arrive in time: {exc}"},
                status_code=408,
                headers={**NO_STORE, **TOO_SLOW_HEADERS},
            )
        except ClientDisconnect:  # the client left mid-label: nothing to answer, nothing saved
            return refuse(400, "the label was cut off")
        try:
            data = json.loads(body)
        except RecursionError:
            return refuse(400, "the body is nested too deeply to be a label")
        except ValueError:  # not UTF-8, not JSON, or a number of more digits than Python converts
            return refuse(400, "the body is not JSON a label can be (key, label and note)")
        if not isinstance(data, dict):
            return refuse(400, "the body must be a JSON object with key, label and note")
        key, label, note = data.get("key"), data.get("label"), data.get("note") or ""
        for name, value in (("key", key), ("label", label), ("note", note)):
            if not isinstance(value, str):
                return refuse(400, f"field {name!r} must be text")
        # the desk checks what the page sent (a wrong key, label or note is its LabelError, a ValueError)
        try:
            labelled = await run_in_threadpool(desk.save, cast(str, key), cast(str, label), cast(str, note))
        except ValueError as exc:
            return refuse(400, str(exc))
        return JSONResponse({"saved": key, "labelled": labelled}, headers=NO_STORE)

    return app
