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
from typing import TYPE_CHECKING, Any

from gitstore.cache.sql import rollback

if TYPE_CHECKING:
    from gitstore.cache.db import Cache

TABLES = """
CREATE TABLE IF NOT EXISTS listed (cid TEXT PRIMARY KEY, tip TEXT NOT NULL,
  archived INTEGER NOT NULL, pinned INTEGER NOT NULL, flags INTEGER NOT NULL,
  rank REAL NOT NULL, row TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS listed_order ON listed (pinned, rank, cid, archived, flags);
CREATE INDEX IF NOT EXISTS listed_tip ON listed (tip);
CREATE TABLE IF NOT EXISTS listed_state (id INTEGER PRIMARY KEY, refs TEXT NOT NULL,
  key TEXT NOT NULL, n INTEGER NOT NULL);
"""
TABLE_NAMES = ("listed", "listed_state")
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
    def __init__(self, cache: Cache) -> None:
        self._cache = cache
        self._made = False

    def _db(self) -> sqlite3.Connection | None:
        db = self._cache._conn()
        if db is None or self._made:
            return db
        try:
            db.executescript(TABLES)
        except sqlite3.Error:  # read-only: the tables are there or this is a miss
            pass
        self._made = True
        return db

    def state(self) -> tuple[str, str] | None:
        """(refs fingerprint, key) the rows were last brought up to date for; None
        when there is none, or the rows are not as many as were written (a table
        dropped or rows deleted by hand: every row is made again)."""
        db = self._db()
        if db is None:
            return None
        query = "SELECT refs, key, n, (SELECT count(*) FROM listed) FROM listed_state WHERE id = 1"
        try:
            row = db.execute(query).fetchone()
        except sqlite3.Error:
            return None
        if row is None or row[2] != row[3]:
            return None
        return str(row[0]), str(row[1])

    def known(self) -> dict[str, tuple[str, bool]]:
        """Every row's id -> (tip, archived)."""
        db = self._db()
        if db is None:
            return {}
        try:
            rows = db.execute("SELECT cid, tip, archived FROM listed").fetchall()
        except sqlite3.Error:
            return {}
        return {str(c): (str(t), bool(a)) for c, t, a in rows}

    def update(
        self, refs: str, key: str, put: Sequence[Listed], gone: Sequence[str], *, whole: bool
    ) -> bool:
        """Write ``put``, delete ``gone`` (``whole``: every other row too) and record the
        state; False if it could not be written (the caller then lists from git)."""
        db = self._db()
        if db is None:
            return False
        rows = [
            (x.cid, x.tip, int(x.archived), int(x.pinned), x.flags, x.rank, _dumps(x.row))
            for x in put
        ]
        try:
            db.execute("BEGIN IMMEDIATE")
            if whole:
                db.execute("DELETE FROM listed")
            db.executemany("DELETE FROM listed WHERE cid = ?", [(c,) for c in gone])
            db.executemany("INSERT OR REPLACE INTO listed VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            (count,) = db.execute("SELECT count(*) FROM listed").fetchone()
            db.execute(
                "INSERT OR REPLACE INTO listed_state VALUES (1, ?, ?, ?)", (refs, key, count)
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
        db = self._db()
        if db is None:
            return None
        where = _WHERE.format(",".join("?" * len(archived)))
        args: list[Any] = [int(a) for a in archived] + [hide]
        query = f"SELECT row FROM listed WHERE {where} AND cid != ?"
        query += " ORDER BY pinned DESC, rank DESC, cid DESC LIMIT ?"
        try:
            found = db.execute(query, (*args, skip or "", -1 if limit is None else limit))
            raw = [r[0] for r in found.fetchall()]
            total = db.execute(f"SELECT count(*) FROM listed WHERE {where}", args).fetchone()[0]
            rows = json.loads("[" + ",".join(reversed(raw)) + "]")
        except (sqlite3.Error, ValueError, TypeError):
            return None
        if not all(isinstance(r, dict) for r in rows):
            return None
        return rows, int(total)

    def row(self, cid: str, archived: Sequence[bool], hide: int) -> dict[str, Any] | None:
        """The row of ``cid`` if it is one ``last`` would give (``{}``: it is not);
        None: a miss (a damaged row included)."""
        db = self._db()
        if db is None:
            return None
        where = _WHERE.format(",".join("?" * len(archived)))
        query = f"SELECT row FROM listed WHERE cid = ? AND {where}"
        try:
            found = db.execute(query, (cid, *[int(a) for a in archived], hide)).fetchone()
            row = json.loads(found[0]) if found is not None else {}
        except (sqlite3.Error, ValueError, TypeError):
            return None
        return row if isinstance(row, dict) and (not row or row.get("id") == cid) else None

    def neighbours(self, cid: str) -> tuple[str | None, str | None]:
        """The ids just before and just after ``cid`` in id order (every row)."""
        db = self._db()
        if db is None:
            return None, None
        try:
            before = db.execute("SELECT max(cid) FROM listed WHERE cid < ?", (cid,)).fetchone()[0]
            after = db.execute("SELECT min(cid) FROM listed WHERE cid > ?", (cid,)).fetchone()[0]
        except sqlite3.Error:
            return None, None
        return before, after

    def ids(self, start: str = "") -> list[tuple[str, bool, str]]:
        """(id, archived, title) of every row whose id begins with ``start``, in id
        order (a range of the primary key: what completion shows, not every row)."""
        db = self._db()
        if db is None:
            return []
        query = "SELECT cid, archived, coalesce(json_extract(row, '$.title'), '') FROM listed"
        query += " WHERE cid >= ? AND cid < ? ORDER BY cid"
        try:
            rows = db.execute(query, (start, start + "\U0010ffff")).fetchall()
        except sqlite3.Error:
            return []
        return [(str(c), bool(a), str(t)) for c, a, t in rows]


def _dumps(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"))
