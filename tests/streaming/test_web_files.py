"""The pages' files from memory (`streaming.web_files`, issue 57 row 2): each file of streaming/web/ at
`/web/NAME` with its type and an ETag, 304 when the client has it, HEAD without a body, and nothing but
those files (no other path, no way out of the folder)."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from streaming.web_files import WEB_ROOT, add_web_files


@pytest.fixture(scope="module")
def client():
    app = FastAPI()
    add_web_files(app)
    with TestClient(app) as client:
        yield client


def test_each_file_is_served_whole_with_its_type(client):
    for name, kind in (("app.js", "javascript"), ("style.css", "text/css"), ("index.html", "text/html")):
        answer = client.get(f"/web/{name}")
        assert answer.status_code == 200 and answer.content == (WEB_ROOT / name).read_bytes()
        assert kind in answer.headers["content-type"] and answer.headers["etag"]


def test_a_client_that_has_the_file_gets_304_and_head_gets_no_body(client):
    etag = client.get("/web/wire.js").headers["etag"]
    again = client.get("/web/wire.js", headers={"if-none-match": etag})
    assert again.status_code == 304 and again.content == b""
    assert client.get("/web/wire.js", headers={"if-none-match": '"other"'}).status_code == 200
    head = client.head("/web/wire.js")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len((WEB_ROOT / "wire.js").read_bytes()))


@pytest.mark.parametrize("path", ["/web/nope.js", "/web/..%2Fapp.py", "/web/../app.py", "/web/%2e%2e/wire.py"])
def test_nothing_but_the_folder_s_files(client, path):
    assert client.get(path).status_code == 404
