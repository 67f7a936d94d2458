"""A disposable cache of events, keyed by commit id, inside the git directory.

Commits never change, so an entry never goes stale and forks share entries.
A conversation is read from its tip by following ``parent`` links inside
SQLite (one recursive query); whatever the cache lacks is read from git and
added.  Deleting ``<gitdir>/jp/cache.sqlite`` loses nothing.

A second table keeps per-tip summaries (counts, first request, last time) so
that listing 10,000 conversations reads no event chains.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from gitstore.events import Event

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (commit_id TEXT PRIMARY KEY, parent TEXT, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS summaries (tip TEXT PRIMARY KEY, json TEXT NOT NULL);
"""
FORMAT = "2"

_CHAIN = """
WITH RECURSIVE chain(c, p, j) AS (
  SELECT commit_id, parent, json FROM events WHERE commit_id = ?
  UNION ALL
  SELECT e.commit_id, e.parent, e.json FROM events e JOIN chain ON e.commit_id = chain.p
)
SELECT c, p, j FROM chain
"""


class Cache:
    """SQLite-backed; every failure degrades to a cache miss."""

    def __init__(self, gitdir: Path) -> None:
        self.path = gitdir / "jp" / "cache.sqlite"
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection | None:
        if self._db is not None:
            return self._db
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")
            db.executescript(SCHEMA)
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if str(version) != FORMAT:
                db.executescript("DELETE FROM events; DELETE FROM summaries;")
                db.execute(f"PRAGMA user_version = {int(FORMAT)}")
            self._db = db
        except sqlite3.Error:
            self._db = None
        return self._db

    def chain(self, tip: str) -> tuple[list[tuple[str, str | None, str]], bool]:
        """Cached links from ``tip`` towards the root, and whether they reach it."""
        db = self._conn()
        if db is None:
            return [], False
        try:
            rows = db.execute(_CHAIN, (tip,)).fetchall()
        except sqlite3.Error:
            return [], False
        complete = bool(rows) and rows[-1][1] is None
        return rows, complete

    def add(self, entries: Iterable[tuple[str, str | None, Event | str]]) -> None:
        db = self._conn()
        if db is None:
            return
        rows = [
            (c, p, e if isinstance(e, str) else json.dumps(e, ensure_ascii=False))
            for c, p, e in entries
        ]
        try:
            db.execute("BEGIN")
            db.executemany("INSERT OR IGNORE INTO events VALUES (?, ?, ?)", rows)
            db.execute("COMMIT")
        except sqlite3.Error:
            self._rollback(db)

    def summaries(self, tips: Sequence[str]) -> dict[str, dict[str, Any]]:
        db = self._conn()
        if db is None or not tips:
            return {}
        out: dict[str, dict[str, Any]] = {}
        try:
            for start in range(0, len(tips), 500):
                part = list(tips[start : start + 500])
                marks = ",".join("?" * len(part))
                query = f"SELECT tip, json FROM summaries WHERE tip IN ({marks})"
                for tip, raw in db.execute(query, part):
                    out[tip] = json.loads(raw)
        except sqlite3.Error:
            return {}
        return out

    def put_summaries(self, items: dict[str, dict[str, Any]]) -> None:
        db = self._conn()
        if db is None or not items:
            return
        try:
            db.execute("BEGIN")
            db.executemany(
                "INSERT OR REPLACE INTO summaries VALUES (?, ?)",
                [(t, json.dumps(s, ensure_ascii=False)) for t, s in items.items()],
            )
            db.execute("COMMIT")
        except sqlite3.Error:
            self._rollback(db)

    @staticmethod
    def _rollback(db: sqlite3.Connection) -> None:
        try:
            db.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
