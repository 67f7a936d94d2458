"""The cache's SQLite schema and the recursive walks it reads chains with."""

from __future__ import annotations

import sqlite3
from itertools import repeat
from typing import Any, Protocol

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (commit_id TEXT PRIMARY KEY, parent TEXT, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS summaries (tip TEXT PRIMARY KEY, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS segments (last TEXT PRIMARY KEY, start INTEGER NOT NULL,
  n INTEGER NOT NULL, prev TEXT, first INTEGER, starts INTEGER NOT NULL, lead INTEGER NOT NULL,
  internal INTEGER NOT NULL, facts TEXT NOT NULL, ids TEXT NOT NULL, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS derived (name TEXT PRIMARY KEY, version TEXT NOT NULL, json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_by_parent ON events (parent);
CREATE TABLE IF NOT EXISTS grep_state (id INTEGER PRIMARY KEY, upto INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS whole (commit_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS grep_long (id INTEGER PRIMARY KEY);
"""
FORMAT = "5"
# the full-text index (``search``): text folded before it is stored, so no case folding here
# and no positions (``detail=none``): a quarter of the size; a longer needle is confirmed
# on the event's text (``search.matching``)
FTS_MADE = (
    "CREATE VIRTUAL TABLE grep_text USING fts5(body, content='', columnsize=0,"
    " detail=none, tokenize='trigram case_sensitive 1')"
)
FTS = FTS_MADE.replace("CREATE VIRTUAL TABLE", "CREATE VIRTUAL TABLE IF NOT EXISTS")
# every table any layout had: a cache of another FORMAT is dropped whole
OLD_TABLES = (
    "events",
    "summaries",
    "snapshots",
    "segments",
    "derived",
    "grep_state",
    "whole",
    "grep_long",
    "listed",
    "listed_state",
    "listed_n",
)

# Every walk is bounded by the rows its table has (a chain is no longer than
# that), so a parent loop in a damaged cache ends; the caller sees the repeat.
CHAIN = """
WITH RECURSIVE chain(c, p, j, d) AS (
  SELECT commit_id, parent, json, 0 FROM events WHERE commit_id = ?
  UNION ALL
  SELECT e.commit_id, e.parent, e.json, chain.d + 1 FROM events e JOIN chain ON e.commit_id = chain.p
  WHERE chain.d < (SELECT max(rowid) FROM events)
)
SELECT c, p, j FROM chain
"""

# The same walk, stopping at the first commit that ends a segment (flag s).
TO_SEGMENT = """
WITH RECURSIVE chain(c, p, j, s, d) AS (
  SELECT commit_id, parent, json, EXISTS (SELECT 1 FROM segments WHERE last = commit_id), 0
  FROM events WHERE commit_id = ?
  UNION ALL
  SELECT e.commit_id, e.parent, e.json, EXISTS (SELECT 1 FROM segments WHERE last = e.commit_id),
    chain.d + 1
  FROM events e JOIN chain ON e.commit_id = chain.p
  WHERE chain.s = 0 AND chain.d < (SELECT max(rowid) FROM events)
)
SELECT c, p, j, s FROM chain
"""

# The segments below one, down to the root: their links and counts only (the
# columns before the long ones, so that no event text is read).
SEGMENTS = """
WITH RECURSIVE seg(last, start, n, prev, first, starts, lead, internal, d) AS (
  SELECT last, start, n, prev, first, starts, lead, internal, 0 FROM segments WHERE last = ?
  UNION ALL
  SELECT s.last, s.start, s.n, s.prev, s.first, s.starts, s.lead, s.internal, seg.d + 1
  FROM segments s JOIN seg ON s.last = seg.prev
  WHERE seg.d < (SELECT max(rowid) FROM segments)
)
SELECT last, start, n, prev, first, starts, lead, internal FROM seg
"""


def repeats(rows: list[Any]) -> bool:
    """Whether a walk met a commit twice: a parent loop, which no git chain has."""
    return len({r[0] for r in rows}) != len(rows)


def events_ok(events: Any) -> bool:
    """Whether cached rows parsed into events (objects with a kind): the cache is
    derived data anyone with the git directory can write, so every shape is checked."""
    if not isinstance(events, list):
        return False
    # every event's kind read by dict's own ``get``, which refuses anything not an
    # object (TypeError), in one C-level pass: a load of 10,000 events checked them
    # one generator step at a time in a tenth of its time, two passes in 1 ms
    try:
        kinds = list(map(dict.get, events, repeat("type")))
    except TypeError:
        return False
    return {str}.issuperset(map(type, kinds))


def start_again(db: sqlite3.Connection) -> None:
    """Drop every table of any layout and make this one's, in one transaction (a cache
    of another ``FORMAT``: nothing is lost, git has it all)."""
    db.executescript(
        "BEGIN IMMEDIATE;"
        + "".join(f"DROP TABLE IF EXISTS {t};" for t in OLD_TABLES)
        + SCHEMA
        + f"PRAGMA user_version = {int(FORMAT)}; COMMIT;"
    )
    search_table(db)


def reset(db: sqlite3.Connection) -> bool:
    """Drop a damaged cache's contents and start again (nothing is lost: git has it
    all).  True, so that a caller can say ``if ... and sql.reset(db): return None``."""
    try:
        db.executescript(
            "".join(f"DROP TABLE IF EXISTS {t};" for t in OLD_TABLES)
            + SCHEMA
            + f"PRAGMA user_version = {int(FORMAT)};"
        )
    except sqlite3.Error:
        pass
    search_table(db)
    return True


def search_table(db: sqlite3.Connection) -> None:
    """Make the full-text index's table anew (an SQLite without FTS5 has none)."""
    try:
        db.execute("DROP TABLE IF EXISTS grep_text")
    except sqlite3.Error:  # damaged, or made by an SQLite with FTS5 and read by one without
        _unlist_search(db)
    try:
        db.execute(FTS)
    except sqlite3.Error:
        pass


def _unlist_search(db: sqlite3.Connection) -> None:
    """Remove an index table that SQLite can no longer open, so cannot drop: its row
    in the schema (every connection reloads the schema), then its own tables."""
    try:
        if not db.in_transaction:
            db.execute("BEGIN IMMEDIATE")
        (version,) = db.execute("PRAGMA schema_version").fetchone()
        db.execute("PRAGMA writable_schema = ON")
        db.execute("DELETE FROM sqlite_master WHERE type = 'table' AND name = 'grep_text'")
        db.execute(f"PRAGMA schema_version = {int(version) + 1}")
        db.execute("PRAGMA writable_schema = OFF")
        db.execute("COMMIT")
        for shadow in ("data", "idx", "docsize", "config", "content"):
            db.execute(f"DROP TABLE IF EXISTS grep_text_{shadow}")
    except sqlite3.Error:
        rollback(db)


def rollback(db: sqlite3.Connection) -> None:
    """End a failed transaction (a cache that cannot is only a slower cache)."""
    try:
        db.execute("ROLLBACK")
    except sqlite3.Error:
        pass


class Connected(Protocol):
    """What the cache's listing and search ask of ``db.Cache``: its connection
    (None: no cache file), without importing it (``db`` makes them)."""

    def _conn(self) -> sqlite3.Connection | None: ...
