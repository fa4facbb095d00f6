"""The pages' files (`streaming/web/`), read once and answered from memory at `/web/NAME`, for the live
page and the labelling page alike.

StaticFiles looks each file up and reads it in a worker thread on every request; under a crowd of
clients pipelining GETs of the page's script (issue 57 row 2: 520 clients, 12 GETs each) that kept
`/healthz` waiting 2.2-2.6 s behind them. From memory the same crowd leaves it under about a second
(docs/performance.md, "The fourth red-team pass"). The folder is a few small files that change only with
the package. A response carries an ETag (a hash of the bytes); a request that names it gets 304.
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI, Request, Response

WEB_ROOT = Path(__file__).with_name("web")


@dataclass(frozen=True, kw_only=True)
class WebFile:
    body: bytes
    media_type: str
    etag: str


def read_web_files(root: Path = WEB_ROOT) -> dict[str, WebFile]:
    """Every regular file directly in `root`, by name."""
    files = {}
    for path in sorted(root.iterdir()):
        if path.is_file() and not path.is_symlink():
            body = path.read_bytes()
            files[path.name] = WebFile(
                body=body,
                media_type=mimetypes.guess_type(path.name)[0] or "application/octet-stream",
                etag='"' + hashlib.sha256(body).hexdigest()[:32] + '"',
            )
    return files


def add_web_files(app: FastAPI) -> None:
    """`GET` and `HEAD /web/NAME`: the file from memory, 304 when the client has it, else 404."""
    files = read_web_files()

    @app.api_route("/web/{name}", methods=["GET", "HEAD"], include_in_schema=False)
    async def web_file(name: str, request: Request) -> Response:
        found = files.get(name)
        if found is None:
            return Response("not found", status_code=404, media_type="text/plain")
        headers = {"etag": found.etag, "cache-control": "no-cache"}
        if found.etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        body = b"" if request.method == "HEAD" else found.body
        headers["content-length"] = str(len(found.body))
        return Response(body, media_type=found.media_type, headers=headers)
