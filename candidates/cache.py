"""The response cache: candidate and judge replies stored by what was asked.

A reply is stored under the sha256 of one canonical JSON document holding
the model id, the endpoint (base URL without credentials; for the embedded
model, its weights file), the system prompt, every message (role, text and
the sha256 of each image), the temperature, the reply cap, JSON mode and,
for candidates, the trial index. The same request asked again (a rerun, a
resume after a crash, a rescore with the same judge) is answered from disk
and costs no request; anything that changes the prompt changes the key.

Judges are keyed without the trial index: the judge prompt already holds the
reply it grades, so the same reply graded twice is the same request (a
rescore knows no trial context). Candidates are keyed with it, so repeated
trials of one cell stay separate requests.

The store is one SQLite file, `responses.sqlite3`, in `WEARSIM_CACHE_DIR`
(default `$XDG_CACHE_HOME/wearsim`, i.e. `~/.cache/wearsim`); several
processes may share it. Only successful replies are stored; errors are
never cached. SQLite writes its file in place (its journal keeps a write
whole), so the folder's rule is `core.safe_files`' own: the folder is
made with `make_dirs`, the database is created by us with O_NOFOLLOW before
SQLite opens it, and a database or journal (`-wal`, `-shm`, `-journal`)
that is a symbolic link or not a regular file is refused
(`UnsafePathError`, naming it) before anything is written.

The trial a candidate reply is keyed by, and the log of which replies of a
cell came from the cache, are handed over explicitly: the runner makes one
`CellCache` per cell and asks through `CachedCandidate.for_cell(cell)` (the
runner writes each cell's log to `RUN_DIR/cache_log.jsonl`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from core.candidate import GenerationConfig, Message, Reply, Usage, UsageError
from core.safe_files import check_target, make_dirs, open_append

CACHE_FILE = "responses.sqlite3"
JOURNALS = ("-wal", "-shm", "-journal")  # the files SQLite writes beside the database
KEY_VERSION = 1


@dataclass(kw_only=True)
class CellCache:
    """One cell's side of the cache: the trial its candidate replies are keyed by, and each reply
    asked in it as (role, came from the cache)."""

    trial: int | None = None
    events: list[tuple[str, bool]] = field(default_factory=list)

    def summary(self) -> dict:
        """Per role, the replies of the cell served from the cache and asked of the model."""
        out: dict = {}
        for role, hit in self.events:
            entry = out.setdefault(role, {"from_cache": 0, "requested": 0})
            entry["from_cache" if hit else "requested"] += 1
        return out


def default_cache_dir(env=None) -> Path:
    """`WEARSIM_CACHE_DIR`, else `$XDG_CACHE_HOME/wearsim`, else `~/.cache/wearsim`."""
    env = os.environ if env is None else env
    if env.get("WEARSIM_CACHE_DIR", "").strip():
        return Path(env["WEARSIM_CACHE_DIR"].strip()).expanduser()
    base = env.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base).expanduser() / "wearsim"


def safe_endpoint(base_url: str | None) -> str:
    """A base URL without credentials or query, for keys and listings."""
    if not base_url:
        return "default"
    from urllib.parse import urlsplit

    parts = urlsplit(base_url.strip())
    if not parts.scheme:
        return base_url.strip().split("?")[0]
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return f"{parts.scheme}://{host}{parts.path.rstrip('/')}"


def request_key(
    model_id: str,
    endpoint: str | None,
    system: str,
    messages: list[Message],
    config: GenerationConfig,
    trial: int | None,
) -> str:
    """The cache key of one request (hex sha256)."""
    document = {
        "v": KEY_VERSION,
        "model": model_id,
        "endpoint": endpoint or "default",
        "system": system,
        "messages": [[m.role, m.text, [hashlib.sha256(i.data).hexdigest() for i in m.images]] for m in messages],
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "json_mode": config.json_mode,
        "trial": trial,
    }
    text = json.dumps(document, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, kw_only=True)
class CacheStats:
    directory: Path
    entries: int
    bytes: int
    hits: int  # times an entry was served
    by_model: dict  # model id -> entries
    by_role: dict  # candidate / judge / ranking judge -> entries


class ResponseCache:
    """The on-disk store. `get` and `put` are synchronous (a local SQLite
    lookup takes well under a millisecond); one connection per thread."""

    def __init__(self, directory: Path | str | None = None):
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.path = self.directory / CACHE_FILE
        self._local = threading.local()
        self.hits = 0
        self.misses = 0

    def check(self) -> None:
        """`UnsafePathError` when the store or one of its journals is a link or not a regular file
        (a cache folder that came from someone else): call before a run writes anything."""
        for path in (self.path, *(self.path.with_name(CACHE_FILE + suffix) for suffix in JOURNALS)):
            check_target(path, self.directory)

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            make_dirs(self.directory)
            self.check()
            open_append(self.path, self.directory).close()  # created by us, never through a link
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, model TEXT, endpoint TEXT, "
                "role TEXT, created REAL, hits INTEGER DEFAULT 0, reply TEXT)"
            )
            self._local.db = db
        return db

    def get(self, key: str) -> Reply | None:
        row = self._db().execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        self._db().execute("UPDATE replies SET hits = hits + 1 WHERE key = ?", (key,))
        data = json.loads(row[0])
        return Reply(
            text=data["text"],
            model=data["model"],
            usage=_stored_usage(data.get("usage")),
            latency_s=data.get("latency_s", 0.0),
            first_token_s=data.get("first_token_s"),
            first_audio_s=data.get("first_audio_s"),
            heard=data.get("heard"),
            cached=True,
        )

    def put(self, key: str, reply: Reply, *, model: str, endpoint: str, role: str) -> None:
        data = {
            "text": reply.text,
            "model": reply.model,
            "usage": reply.usage.to_json(),
            "latency_s": reply.latency_s,
            "first_token_s": reply.first_token_s,
            "first_audio_s": reply.first_audio_s,
            "heard": reply.heard,
        }
        self._db().execute(
            "INSERT OR REPLACE INTO replies (key, model, endpoint, role, created, hits, reply) "
            "VALUES (?, ?, ?, ?, ?, 0, ?)",
            (key, model, endpoint, role, time.time(), json.dumps(data)),
        )

    def stats(self) -> CacheStats:
        if not self.path.exists():
            return CacheStats(directory=self.directory, entries=0, bytes=0, hits=0, by_model={}, by_role={})
        db = self._db()
        entries, hits = db.execute("SELECT COUNT(*), COALESCE(SUM(hits), 0) FROM replies").fetchone()
        by_model = dict(db.execute("SELECT model, COUNT(*) FROM replies GROUP BY model ORDER BY model"))
        by_role = dict(db.execute("SELECT role, COUNT(*) FROM replies GROUP BY role ORDER BY role"))
        size = sum(p.stat().st_size for p in self.directory.glob(CACHE_FILE + "*") if p.is_file())
        return CacheStats(
            directory=self.directory, entries=entries, bytes=size, hits=hits, by_model=by_model, by_role=by_role
        )

    def clear(self, model: str | None = None) -> int:
        """Delete every entry (or those of one model id); returns how many."""
        if not self.path.exists():
            return 0
        db = self._db()
        if model is None:
            count = db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]
            db.execute("DELETE FROM replies")
        else:
            count = db.execute("SELECT COUNT(*) FROM replies WHERE model = ?", (model,)).fetchone()[0]
            db.execute("DELETE FROM replies WHERE model = ?", (model,))
        db.execute("VACUUM")
        return count

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None


def _stored_usage(data) -> Usage:
    """A stored reply's usage: by modality (`Usage.to_json`), or as entries before it held
    the two totals only, `[input, output]` (the split then unknown)."""
    if isinstance(data, list) and len(data) == 2 and all(isinstance(n, int) for n in data):
        return Usage(input_tokens=data[0], output_tokens=data[1])
    try:
        return Usage.from_json(data)
    except UsageError:
        return Usage()


class CachedCandidate:
    """A `Candidate` whose replies go through a `ResponseCache`.

    `role` names it in the cell log ("candidate", "judge", "ranking judge");
    `keyed_by_trial` puts the trial index of `cell` into the key (candidates)
    or leaves it out (judges). `cell` is the cell it asks for (`for_cell`;
    None: no cell, as in a rescore: no trial, no log). The wrapped adapter's
    `endpoint` attribute (its base URL, or for the embedded model its weights
    file) goes into the key."""

    def __init__(
        self,
        inner,
        cache: ResponseCache,
        *,
        role: str = "candidate",
        keyed_by_trial: bool = True,
        cell: CellCache | None = None,
    ):
        self.inner = inner
        self.cache = cache
        self.role = role
        self.keyed_by_trial = keyed_by_trial
        self.cell = cell
        self.model_id = inner.model_id
        self.family = inner.family
        self.endpoint = safe_endpoint(getattr(inner, "endpoint", None))

    def for_cell(self, cell: CellCache) -> CachedCandidate:
        """The same model and store, asking for one cell: keyed by its trial (candidates), logged to it."""
        return CachedCandidate(self.inner, self.cache, role=self.role, keyed_by_trial=self.keyed_by_trial, cell=cell)

    def __getattr__(self, name):  # limiter, family, ... of the wrapped adapter
        return getattr(self.inner, name)

    async def respond(
        self,
        messages: list[Message],
        system: str,
        config: GenerationConfig,
        on_delta: Callable[[str], None] | None = None,
    ) -> Reply:
        trial = self.cell.trial if self.keyed_by_trial and self.cell is not None else None
        key = request_key(self.model_id, self.endpoint, system, messages, config, trial)
        log = self.cell.events if self.cell is not None else None
        cached = self.cache.get(key)
        if cached is not None:
            if on_delta is not None and cached.text:
                on_delta(cached.text)
            if log is not None:
                log.append((self.role, True))
            return cached
        reply = await self.inner.respond(messages, system, config, on_delta)
        self.cache.put(key, reply, model=self.model_id, endpoint=self.endpoint, role=self.role)
        if log is not None:
            log.append((self.role, False))
        return reply

    async def aclose(self) -> None:
        await self.inner.aclose()
