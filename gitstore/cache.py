"""A disposable cache of events, keyed by commit id, inside the git directory.

Commits never change, so an entry never goes stale and forks share entries.
A conversation is read from its tip by following ``parent`` links inside
SQLite (one recursive query); whatever the cache lacks is read from git and
added.  Deleting ``<gitdir>/jp/cache.sqlite`` loses nothing.

A second table keeps per-tip summaries (counts, first request, last time) so
that listing 10,000 conversations reads no event chains.

A third keeps snapshots: the whole chain up to one commit as a single JSON
array, so that a long conversation loads with one parse instead of a row and
a parse per event.  Loading reads the nearest snapshot below the tip and the
rows above it; once those rows number ``SNAPSHOT_EVERY``, the result becomes
the new snapshot and replaces the one it grew from.
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
CREATE TABLE IF NOT EXISTS snapshots (tip TEXT PRIMARY KEY, ids TEXT NOT NULL, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS derived (name TEXT PRIMARY KEY, version TEXT NOT NULL, json TEXT NOT NULL);
"""
FORMAT = "2"
SNAPSHOT_EVERY = 1000

_CHAIN = """
WITH RECURSIVE chain(c, p, j) AS (
  SELECT commit_id, parent, json FROM events WHERE commit_id = ?
  UNION ALL
  SELECT e.commit_id, e.parent, e.json FROM events e JOIN chain ON e.commit_id = chain.p
)
SELECT c, p, j FROM chain
"""

# The same walk, stopping at the first commit that has a snapshot (flag s).
_TO_SNAPSHOT = """
WITH RECURSIVE chain(c, p, j, s) AS (
  SELECT commit_id, parent, json, EXISTS (SELECT 1 FROM snapshots WHERE tip = commit_id)
  FROM events WHERE commit_id = ?
  UNION ALL
  SELECT e.commit_id, e.parent, e.json, EXISTS (SELECT 1 FROM snapshots WHERE tip = e.commit_id)
  FROM events e JOIN chain ON e.commit_id = chain.p WHERE chain.s = 0
)
SELECT c, p, j, s FROM chain
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
                db.executescript(
                    "DELETE FROM events; DELETE FROM summaries; DELETE FROM snapshots; "
                    "DELETE FROM derived;"
                )
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

    def events(self, tip: str) -> tuple[list[Event], list[str]] | None:
        """The chain ending at ``tip``, root first: events and commit ids (None: a miss)."""
        db = self._conn()
        if db is None:
            return None
        base: str | None = None
        try:
            rows = db.execute(_TO_SNAPSHOT, (tip,)).fetchall()
            if not rows:
                return None
            head_ids, head_json = "", "[]"
            if rows[-1][3]:
                base = rows.pop()[0]
                found = db.execute("SELECT ids, json FROM snapshots WHERE tip = ?", (base,))
                snapshot = found.fetchone()
                if snapshot is None:
                    return None
                head_ids, head_json = snapshot
            elif rows[-1][1] is not None:
                return None  # part of the chain is not cached
            rows.reverse()
            tail_json = "[" + ",".join(r[2] for r in rows) + "]"
            events: list[Event] = json.loads(head_json) + json.loads(tail_json)
        except sqlite3.Error:
            return None
        except ValueError:  # a damaged entry: forget the snapshot, read git instead
            if base is not None:
                self._snapshot(None, "", "", base)
            return None
        ids = head_ids.split() + [r[0] for r in rows]
        if len(rows) >= SNAPSHOT_EVERY:
            text = tail_json if base is None else head_json[:-1] + "," + tail_json[1:]
            self._snapshot(tip, " ".join(ids), text, base)
        return events, ids

    def _snapshot(self, tip: str | None, ids: str, text: str, replaces: str | None) -> None:
        """Store the chain up to ``tip`` as one JSON array, dropping ``replaces``."""
        db = self._conn()
        if db is None:
            return
        try:
            db.execute("BEGIN")
            if tip is not None:
                db.execute("INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?)", (tip, ids, text))
            if replaces is not None:
                db.execute("DELETE FROM snapshots WHERE tip = ?", (replaces,))
            db.execute("COMMIT")
        except sqlite3.Error:
            self._rollback(db)

    def known(self, commits: Sequence[str]) -> set[str]:
        """Which of ``commits`` have a row (one query, not one per commit)."""
        db = self._conn()
        if db is None or not commits:
            return set()
        query = "SELECT e.commit_id FROM json_each(?) AS c JOIN events AS e ON e.commit_id = c.value"
        try:
            rows = db.execute(query, (json.dumps(list(commits)),)).fetchall()
        except sqlite3.Error:  # an SQLite without json_each: nothing is known, reads still work
            return set()
        return {r[0] for r in rows}

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
        query = "SELECT s.tip, s.json FROM json_each(?) AS t JOIN summaries AS s ON s.tip = t.value"
        try:
            try:
                rows = db.execute(query, (json.dumps(list(tips)),)).fetchall()
            except sqlite3.OperationalError:  # an SQLite without json_each
                rows = []
                for start in range(0, len(tips), 500):
                    part = list(tips[start : start + 500])
                    marks = ",".join("?" * len(part))
                    found = db.execute(
                        f"SELECT tip, json FROM summaries WHERE tip IN ({marks})", part
                    )
                    rows += found.fetchall()
            # tips are hex ids: one parse of one object instead of one per row
            found = json.loads("{" + ",".join(f'"{t}":{raw}' for t, raw in rows) + "}")
        except (sqlite3.Error, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

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

    def derived(self, name: str, version: str) -> Any:
        """A value computed from git state named by ``version`` (e.g. a commit id), or None."""
        db = self._conn()
        if db is None:
            return None
        try:
            row = db.execute("SELECT version, json FROM derived WHERE name = ?", (name,)).fetchone()
            return json.loads(row[1]) if row is not None and row[0] == version else None
        except (sqlite3.Error, ValueError):
            return None

    def put_derived(self, name: str, version: str, value: Any) -> None:
        """Keep one value per name: the one for the newest ``version`` seen."""
        db = self._conn()
        if db is None:
            return
        try:
            db.execute(
                "INSERT OR REPLACE INTO derived VALUES (?, ?, ?)",
                (name, version, json.dumps(value, ensure_ascii=False)),
            )
        except sqlite3.Error:
            pass

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
