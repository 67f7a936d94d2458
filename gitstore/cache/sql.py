"""The cache's SQLite file: its schema, the recursive walks it reads chains with,
a layout started again, and the space of what it no longer keeps given back.

A cache of another layout has its tables dropped (``Cache._conn``) and an index
of another layout is made again (``Search.rebuild``); SQLite keeps the freed
pages in the file for later rows, so an old cache would stay its old size (the
index of positions alone was 679 MiB at 100,000 conversations).  Past
``LEAST`` freed bytes they are given back once, at that change:

- a cache made by this layout keeps ``auto_vacuum = INCREMENTAL``, so the free
  pages are cut off the end of the file (``incremental_vacuum``): it costs the
  pages freed, not the file;
- an older cache, made without it, is copied once by ``VACUUM`` into a file
  of its live pages, which turns the mode on for every later change.  That
  costs the whole cache (seconds for hundreds of MiB), so the caller is told
  first, to say so.

Both run in SQLite's own write transaction, so concurrent readers keep their
snapshot and writers wait (the connection's timeout) or get a miss; a crash
leaves the old file or the new one, never a mix.  Every failure (a busy cache,
a full disk) leaves the space where it is: the cache works the same.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any, Protocol

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (commit_id TEXT PRIMARY KEY, parent TEXT, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS segments (last TEXT PRIMARY KEY, start INTEGER NOT NULL,
  n INTEGER NOT NULL, prev TEXT, first INTEGER, starts INTEGER NOT NULL, lead INTEGER NOT NULL,
  internal INTEGER NOT NULL, facts TEXT NOT NULL, ids TEXT NOT NULL, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS derived (name TEXT PRIMARY KEY, version TEXT NOT NULL, json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_by_parent ON events (parent);
CREATE TABLE IF NOT EXISTS grep_state (id INTEGER PRIMARY KEY, upto INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS whole (commit_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS grep_long (id INTEGER PRIMARY KEY);
"""
FORMAT = "6"
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
# From a tip down to the root or to the first commit that ends a segment (flag s).
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


def start_again(db: sqlite3.Connection, damaged: bool = False) -> bool:
    """Drop every table of any layout and make this one's (nothing is lost: git has it
    all): a cache of another ``FORMAT``, in one transaction, or a ``damaged`` one's
    contents, whatever fails.  True, so that a caller can say ``if ... and
    sql.reset(db): return None``."""
    script = (
        "".join(f"DROP TABLE IF EXISTS {t};" for t in OLD_TABLES)
        + SCHEMA
        + f"PRAGMA user_version = {int(FORMAT)};"
    )
    try:
        db.executescript(script if damaged else f"BEGIN IMMEDIATE;{script} COMMIT;")
    except sqlite3.Error:
        if not damaged:
            raise
    search_table(db)
    return True


def reset(db: sqlite3.Connection) -> bool:
    """A damaged cache's contents dropped, and started again (``start_again``)."""
    return start_again(db, damaged=True)


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


# -- the space of what the cache no longer keeps --------------------------------------

LEAST = 16 * 2**20  # freed bytes below which nothing is given back
NOTE_FROM = 64 * 2**20  # a copy of more live bytes than this is said first
INCREMENTAL = 2  # PRAGMA auto_vacuum's value for INCREMENTAL

Notice = Callable[[str], None]


def quiet(_message: str) -> None:
    """A notice that nobody hears (the store's default)."""


class Cached(Protocol):
    """What the cache's listing and search ask of ``db.Cache``, without importing it
    (``db`` makes them): its connection (None: no cache file), its reads, and whom to
    tell of a slow step."""

    notice: Notice

    def _conn(self) -> sqlite3.Connection | None: ...

    def _fetch(self, query: str, args: Sequence[Any]) -> list[Any] | None: ...


def _bytes(db: sqlite3.Connection, pages: str = "freelist_count") -> int:
    """The bytes of the file's free pages (``page_count``: of all its pages)."""
    (count,) = db.execute(f"PRAGMA {pages}").fetchone()
    (size,) = db.execute("PRAGMA page_size").fetchone()
    return int(count) * int(size)


def new_file(db: sqlite3.Connection) -> None:
    """Before a new cache's first table: free pages can be given back cheaply later."""
    try:
        db.execute(f"PRAGMA auto_vacuum = {INCREMENTAL}")
    except sqlite3.Error:
        pass


def reclaim(db: sqlite3.Connection, notice: Notice) -> bool:
    """Give the freed pages back to the file system (outside any transaction);
    whether it was done.  ``notice`` is told before a copy of the whole cache."""
    if db.in_transaction:
        return False
    try:
        free = _bytes(db)
        if free < LEAST:
            return False
        (mode,) = db.execute("PRAGMA auto_vacuum").fetchone()
        if mode == INCREMENTAL:
            # run to its end (``execute`` would step it once: one page)
            db.executescript("PRAGMA incremental_vacuum;")
        else:
            size = _bytes(db, "page_count")
            if size - free > NOTE_FROM:
                notice(
                    f"note: giving back {free / 2**20:.0f} MiB that an older layout of the "
                    f"cache left in {size / 2**20:.0f} MiB (once; it may take a while)"
                )
            db.execute(f"PRAGMA auto_vacuum = {INCREMENTAL}")
            db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error:
        return False
    return True
