"""The rows of a conversation listing, kept in the cache in their order.

One row per conversation ref (live and archived): the tip it was made from,
its place in the order (``pinned``, then ``rank``, then the id) and the row
itself as JSON, made by the caller.  Beside them, the fingerprint of the refs
(``refs.state``) and the caller's key for everything else a row depends on, as
they were when the rows were last brought up to date.  A listing of the last
``N`` rows then reads ``N`` rows through an index; a caller whose fingerprint
or key differs brings the rows up to date first (only those whose tip moved,
when only refs moved).  Like the rest of the cache: derived, disposable, and
every failure is a miss.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gitstore.cache.sql import Cached, rollback
from gitstore.events.canonical import encoder

TABLES = """
CREATE TABLE IF NOT EXISTS listed (cid TEXT PRIMARY KEY, tip TEXT NOT NULL,
  archived INTEGER NOT NULL, pinned INTEGER NOT NULL, flags INTEGER NOT NULL,
  rank REAL NOT NULL, row TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS listed_order ON listed (pinned, rank, cid, archived, flags);
CREATE INDEX IF NOT EXISTS listed_tip ON listed (tip);
CREATE TABLE IF NOT EXISTS listed_state (id INTEGER PRIMARY KEY, refs TEXT NOT NULL,
  key TEXT NOT NULL, n INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS listed_newest ON listed (rank, cid, archived, flags);
CREATE TABLE IF NOT EXISTS listed_n (archived INTEGER NOT NULL, flags INTEGER NOT NULL,
  n INTEGER NOT NULL, PRIMARY KEY (archived, flags)) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS listed_added AFTER INSERT ON listed BEGIN
  INSERT INTO listed_n VALUES (new.archived, new.flags, 1)
  ON CONFLICT (archived, flags) DO UPDATE SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS listed_removed AFTER DELETE ON listed BEGIN
  UPDATE listed_n SET n = n - 1 WHERE archived = old.archived AND flags = old.flags; END;
CREATE TRIGGER IF NOT EXISTS listed_moved AFTER UPDATE OF archived, flags ON listed BEGIN
  UPDATE listed_n SET n = n - 1 WHERE archived = old.archived AND flags = old.flags;
  INSERT INTO listed_n VALUES (new.archived, new.flags, 1)
  ON CONFLICT (archived, flags) DO UPDATE SET n = n + 1; END;
"""
# what the counts need: without any of them (a cache of before them, a table dropped
# by hand and with it its triggers) the counts are made again from the rows; the
# state then holds only if the rows are as many as it says (``state``)
_COUNTED = ("listed", "listed_n", "listed_added", "listed_removed", "listed_moved")
_RECOUNT = """
DELETE FROM listed_n;
INSERT INTO listed_n SELECT archived, flags, count(*) FROM listed GROUP BY archived, flags;
"""
_WHERE = "archived IN ({}) AND flags & ? = 0"


@dataclass(frozen=True)
class Listed:
    """One conversation's row and where it sorts."""

    cid: str
    tip: str  # "" for a row to make again next time (e.g. its objects were missing)
    archived: bool
    pinned: bool
    flags: int  # the caller's bits, for rows a listing leaves out
    rank: float
    row: dict[str, Any]


class Listing:
    def __init__(self, cache: Cached) -> None:
        self._cache = cache
        self._made = False

    def _db(self) -> sqlite3.Connection | None:
        db = self._cache._conn()
        if db is None or self._made:
            return db
        try:
            marks = ",".join("?" * len(_COUNTED))
            query = f"SELECT count(*) FROM sqlite_master WHERE name IN ({marks})"
            (there,) = db.execute(query, _COUNTED).fetchone()
            if there != len(_COUNTED):  # a new cache, an older one, or one damaged by hand
                db.executescript("BEGIN IMMEDIATE;" + TABLES + _RECOUNT + "COMMIT;")
        except sqlite3.Error:  # read-only: the tables are there or this is a miss
            rollback(db)
        self._made = True
        return db

    def _rows(self, query: str, args: Sequence[Any] = ()) -> list[Any] | None:
        """The rows ``query`` reads, the tables made first (None: a miss)."""
        return self._cache._fetch(query, args) if self._db() is not None else None

    def state(self) -> tuple[str, str] | None:
        """(refs fingerprint, key) the rows were last brought up to date for; None
        when there is none, or the rows are not as many as were written (rows deleted
        by hand: every row is made again).  The rows are counted by triggers as they
        are written (``listed_n``), so this reads no row."""
        query = "SELECT refs, key, n, (SELECT coalesce(sum(n), 0) FROM listed_n) FROM listed_state WHERE id = 1"
        rows = self._rows(query)
        if not rows or rows[0][2] != rows[0][3]:
            return None
        return str(rows[0][0]), str(rows[0][1])

    def known(self) -> dict[str, tuple[str, bool]]:
        """Every row's id -> (tip, archived)."""
        rows = self._rows("SELECT cid, tip, archived FROM listed") or []
        return {str(c): (str(t), bool(a)) for c, t, a in rows}

    def update(
        self, refs: str, key: str, put: Sequence[Listed], gone: Sequence[str], *, whole: bool
    ) -> bool:
        """Write ``put``, delete ``gone`` (``whole``: every other row too) and record the
        state; False if it could not be written (the caller then lists from git)."""
        db = self._db()
        if db is None:
            return False
        once = {x.cid: x for x in put}  # one row an id (the triggers count each insert)
        rows = [
            (x.cid, x.tip, int(x.archived), int(x.pinned), x.flags, x.rank, _dumps(x.row))
            for x in once.values()
        ]
        try:
            db.execute("BEGIN IMMEDIATE")
            if whole:
                db.execute("DELETE FROM listed")
            # deleted, not replaced: a replace fires no trigger, so the counts would drift
            out = [(c,) for c in gone] + [(r[0],) for r in rows]
            db.executemany("DELETE FROM listed WHERE cid = ?", out)
            db.executemany("INSERT INTO listed VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            (count,) = db.execute("SELECT coalesce(sum(n), 0) FROM listed_n").fetchone()
            db.execute(
                "INSERT OR REPLACE INTO listed_state VALUES (1, ?, ?, ?)", (refs, key, int(count))
            )
            db.execute("COMMIT")
        except sqlite3.Error:
            rollback(db)
            return False
        return True

    def forget(self) -> None:
        """Drop the state: the next listing makes every row again."""
        db = self._db()
        if db is not None:
            try:
                db.execute("DELETE FROM listed_state")
            except sqlite3.Error:
                pass

    def last(
        self, archived: Sequence[bool], hide: int, limit: int | None, skip: str | None
    ) -> tuple[list[dict[str, Any]], int] | None:
        """The last ``limit`` rows (all with None) in order, of those ``archived`` as
        asked, with no bit of ``hide``, other than ``skip``; and how many there are
        (``skip`` included).  None: a miss (a damaged row included)."""
        order = " AND cid != ? ORDER BY pinned DESC, rank DESC, cid DESC LIMIT ?"
        found = self._page(archived, hide, order, (skip or "", -1 if limit is None else limit))
        return None if found is None else (found[0][::-1], found[1])

    def newest(
        self, archived: Sequence[bool], hide: int, limit: int, offset: int
    ) -> tuple[list[dict[str, Any]], int] | None:
        """``limit`` rows from ``offset`` in the order of the newest activity first
        (``rank``, then the id, both descending; pinned ones not apart), of those
        ``archived`` as asked and with no bit of ``hide``; and how many there are.
        None: a miss.  What it reads is the rows shown and the index entries before
        them, never a row of the others."""
        order = " ORDER BY rank DESC, cid DESC LIMIT ? OFFSET ?"
        return self._page(archived, hide, order, (limit, offset), "INDEXED BY listed_newest")

    def _page(
        self,
        archived: Sequence[bool],
        hide: int,
        order: str,
        more: tuple[Any, ...],
        using: str = "",
    ) -> tuple[list[dict[str, Any]], int] | None:
        """The rows ``order`` (the end of the query, taking ``more``) picks of those
        ``archived`` as asked with no bit of ``hide``, and how many of those there are
        (from the counts: a few rows, not the rows)."""
        db = self._db()
        if db is None:
            return None
        where = _WHERE.format(",".join("?" * len(archived)))
        args: list[Any] = [int(a) for a in archived] + [hide]
        query = f"SELECT row FROM listed {using} WHERE {where}{order}"
        count = f"SELECT coalesce(sum(n), 0) FROM listed_n WHERE {where}"
        try:
            raw = [r[0] for r in db.execute(query, (*args, *more)).fetchall()]
            (total,) = db.execute(count, args).fetchone()
            rows = json.loads("[" + ",".join(raw) + "]")
        except (sqlite3.Error, ValueError, TypeError):
            return None
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            return None
        return rows, int(total)

    def row(self, cid: str, archived: Sequence[bool], hide: int) -> dict[str, Any] | None:
        """The row of ``cid`` if it is one ``last`` would give (``{}``: it is not);
        None: a miss (a damaged row included)."""
        found = self._page(archived, hide, " AND cid = ?", (cid,))
        row = (found[0] or [{}])[0] if found is not None else None
        return row if row is not None and (not row or row.get("id") == cid) else None

    def neighbours(self, cid: str) -> tuple[str | None, str | None]:
        """The ids just before and just after ``cid`` in id order (every row)."""
        query = "SELECT (SELECT max(cid) FROM listed WHERE cid < ?), (SELECT min(cid) FROM listed WHERE cid > ?)"
        rows = self._rows(query, (cid, cid))
        return (rows[0][0], rows[0][1]) if rows else (None, None)

    def ids(self, start: str = "") -> list[tuple[str, bool, str]]:
        """(id, archived, title) of every row whose id begins with ``start``, in id
        order (a range of the primary key: what completion shows, not every row)."""
        query = "SELECT cid, archived, coalesce(json_extract(row, '$.title'), '') FROM listed"
        query += " WHERE cid >= ? AND cid < ? ORDER BY cid"
        rows = self._rows(query, (start, start + "\U0010ffff")) or []
        return [(str(c), bool(a), str(t)) for c, a, t in rows]


_dumps = encoder(ensure_ascii=False, compact=True)
