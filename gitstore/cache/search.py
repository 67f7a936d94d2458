"""The cache's full-text index of event text: it narrows a search, never decides it.

Every event row of the cache that holds searchable text (``SEARCHED``: what
``jp conversation grep`` looks in) has a row in an SQLite FTS5 table with the
trigram tokenizer, holding that text *folded* (``fold``).  The index is
derived data like the rest of the cache:

- it follows the event rows by a watermark (the last ``events`` rowid it
  holds), so whatever added rows (a write, a pull, a read of git) the next
  catch-up indexes them: in the same transaction as the rows when the cache
  adds a few (``WRITE_MOST``: a turn, a small pull; counted over all the adds
  of one ``Cache``, so an import of many small conversations is the big write
  it is), at the next search when many wait (an import: trigram indexing costs
  about a millisecond per kilobyte of text, which no write should pay for a
  whole history);
- an event row is keyed by its commit, so forks share its index row and an
  edit, an undo or a pull only adds rows;
- which conversations hold a match is read from git's own shape: a commit's
  descendants among the cached rows (an index on ``parent``), then the tips
  asked about.  That is only right for a tip whose whole chain is cached, so
  ``whole`` lists the commits known to be: a tip not yet known is walked down
  to a known one once (a tip that plain git moved is such a tip), and the
  caller reads from git whatever is missing;
- a caller confirms each candidate on its events; a tip the index cannot
  answer for is always a candidate.  Without FTS5, with a read-only cache or
  on any SQLite error the answer is None: search everything.

A match can never be lost by the narrowing: ``fold`` maps every character to
the same string as any character that Python's ``re`` matches it with under
IGNORECASE (full Unicode or ASCII), so a line that a pattern finds, with or
without case, holds the folded form of each string the pattern requires.
"""

from __future__ import annotations

import importlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from gitstore.cache import sql

# (event type, field) pairs whose text is searched
SEARCHED = (
    ("chat_request", "content"),
    ("chat_response", "message"),
    ("chat_response", "reasoning"),
    ("tool_call_request", "arguments"),
    ("tool_call_response", "content"),
)
SHORTEST = 3  # the trigram tokenizer finds no string shorter than this
BATCH = 5000
# an event's text longer than this is not indexed (a trigram index of a pasted blob
# or a long tool output costs several times its size): such an event is always a
# candidate, so grep reads its conversation as a scan would
INDEX_MOST = 64 * 1024
WRITE_MOST = 200  # rows a write indexes at once (a turn, a small pull); more wait for a search

_WHOLE_NOW = """
WITH RECURSIVE up(tip, c, p) AS (
  SELECT t.value, e.commit_id, e.parent FROM json_each(?) AS t
  JOIN events AS e ON e.commit_id = t.value
  WHERE t.value NOT IN (SELECT commit_id FROM whole)
  UNION
  SELECT up.tip, e.commit_id, e.parent FROM up JOIN events AS e ON e.commit_id = up.p
  WHERE up.p NOT IN (SELECT commit_id FROM whole)
)
SELECT DISTINCT tip FROM up WHERE p IS NULL OR p IN (SELECT commit_id FROM whole)
"""

# a commit's descendants among the cached rows, from the commits that match (the first ?)
_DOWN = """
WITH RECURSIVE down(c) AS (
  SELECT value FROM json_each(?)
  UNION
  SELECT e.commit_id FROM events AS e JOIN down ON e.parent = down.c)
"""
# the tips (passed in) that hold a match
_HOLDING = _DOWN + "SELECT t.value FROM json_each(?) AS t WHERE t.value IN (SELECT c FROM down)"
# the same walk, answered from the listing's kept rows (``listing.py``, index on tip)
# instead of tips passed in, and the tips not known whole: what costs the store is
# then only SQLite's
_IN_LISTING = (
    _DOWN
    + """, held(c) AS (SELECT c FROM down UNION SELECT value FROM json_each(?))
SELECT l.cid, l.tip, l.archived FROM held CROSS JOIN listed AS l ON l.tip = held.c
WHERE l.archived IN ({}) AND (l.archived = 0 OR l.flags & ? = 0)
"""
)
# the kept rows' tips not known to be whole (through the index on tip, no row read)
_LISTED_UNWHOLE = (
    "SELECT tip FROM listed WHERE tip != '' AND tip NOT IN (SELECT commit_id FROM whole)"
)
WHOLE_MARK = "grep_whole"  # derived row: the refs' fingerprint every kept tip was whole at


def _folding() -> tuple[dict[int, str], dict[int, str]]:
    """The tables ``fold`` applies before and after ``str.lower``."""
    # re's own table of the characters that match others under IGNORECASE
    extra: dict[int, tuple[int, ...]] = importlib.import_module("re._casefix")._EXTRA_CASES
    least: dict[int, int] = {}
    for low in extra:  # each group of equal characters to its least member
        members, todo = {low}, [low]
        while todo:
            for other in extra.get(todo.pop(), ()):
                if other not in members:
                    members.add(other)
                    todo.append(other)
        for m in members:
            least[m] = min(members)
    before: dict[int, str] = {0x130: "i", 0: "\x01"}  # İ: re lowers it to i; NUL ends FTS text
    before.update(dict.fromkeys(range(0xD800, 0xE000), "\ufffd"))  # SQLite takes no surrogate
    return before, {c: chr(m) for c, m in least.items() if c != m}


_BEFORE, _AFTER = _folding()


def fold(text: str) -> str:
    """``text`` with each character replaced by one standing for every character
    that ``re`` matches it with when ignoring case (one character for one)."""
    if text.isascii() and "\x00" not in text:
        return text.lower()
    return text.translate(_BEFORE).lower().translate(_AFTER)


def searchable(event: Any) -> str | None:
    """The folded searchable text of an event (None: it has none)."""
    if not isinstance(event, dict):
        return None
    kind = event.get("type")
    parts: list[str] = []
    for k, key in SEARCHED:
        if kind == k and key in event:
            value = event[key]
            parts.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    return fold("\n".join(parts)) if parts else None


# the rows an index query names, and the events that are always candidates
_MATCHED = "SELECT commit_id, json FROM events WHERE rowid IN (SELECT rowid FROM grep_text WHERE grep_text MATCH ?)"
_LONG = "SELECT commit_id FROM events WHERE rowid IN (SELECT id FROM grep_long)"


def phrase(needles: Sequence[str]) -> str | None:
    """An FTS5 query for rows holding every trigram of every needle, folded (None: no
    needle is long enough).  The index keeps no positions, so a needle longer than
    a trigram is confirmed on the row's text (``matching``)."""
    grams = {g for n in folded(needles) for g in (n[i : i + SHORTEST] for i in range(len(n) - 2))}
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in sorted(grams)) or None


def folded(needles: Sequence[str]) -> list[str]:
    """The needles the index can narrow by, folded as its text is."""
    return [fold(n) for n in needles if len(n) >= SHORTEST]


def matching(db: sqlite3.Connection, query: str, needles: Sequence[str]) -> list[str]:
    """The commits of the events whose text holds every (folded) needle, and those
    too long to be indexed: the index names the rows that hold every trigram, and
    each is confirmed on its text unless every needle is one trigram (then exact)."""
    longer = [n for n in needles if len(n) > SHORTEST]
    found = [str(c) for (c,) in db.execute(_LONG).fetchall()]
    for commit, raw in db.execute(_MATCHED, (query,)).fetchall():
        if longer:
            try:
                text = searchable(json.loads(raw)) or ""
            except (ValueError, TypeError):
                text = None  # a damaged row: a candidate, which grep reads from git
            if text is not None and not all(n in text for n in longer):
                continue
        found.append(str(commit))
    return found


class Search:
    """The index of one cache (``Cache.search``)."""

    def __init__(self, cache: sql.Cached) -> None:
        self._cache = cache
        self._usable: bool | None = None

    def usable(self, db: sqlite3.Connection) -> bool:
        """Whether this SQLite has the index (FTS5 and the table, of this layout: an
        index of another is made again by the next search); asked once."""
        if self._usable is None:
            try:
                db.execute("SELECT rowid FROM grep_text LIMIT 0")
                made = db.execute(
                    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'grep_text'"
                ).fetchone()
                self._usable = made is not None and made[0] == sql.FTS_MADE
            except sqlite3.Error:
                self._usable = False
        return self._usable

    def catch_up(self, db: sqlite3.Connection, most: int | None = None) -> bool:
        """Index the event rows past the watermark (inside the caller's transaction);
        False when it could not or, with ``most``, when more rows than that wait (an
        import: the next search indexes them, so that no write pays for a backlog)."""
        if not self.usable(db):
            return False
        try:
            db.execute("SAVEPOINT grep_index")
            done = self._index(db, most)
            db.execute("RELEASE grep_index")
        except sqlite3.Error:  # a slower search, never a lost write
            try:
                db.execute("ROLLBACK TO grep_index")
                db.execute("RELEASE grep_index")
            except sqlite3.Error:
                pass
            return False
        return done

    def _index(self, db: sqlite3.Connection, most: int | None) -> bool:
        (upto,) = db.execute("SELECT coalesce(max(upto), 0) FROM grep_state").fetchone()
        (top,) = db.execute("SELECT coalesce(max(rowid), 0) FROM events").fetchone()
        if most is not None and not (isinstance(upto, int) and 0 <= top - upto <= most):
            return False
        if not isinstance(upto, int) or upto > top:  # a watermark above the rows: start again
            db.execute("INSERT INTO grep_text(grep_text) VALUES ('delete-all')")
            db.execute("DELETE FROM grep_long")
            upto = 0
        while upto < top:
            rows = db.execute(
                "SELECT rowid, json FROM events WHERE rowid > ? ORDER BY rowid LIMIT ?",
                (upto, BATCH),
            ).fetchall()
            if not rows:
                break
            bodies, longs = [], []
            for rowid, raw in rows:
                try:
                    body = searchable(json.loads(raw))
                except (ValueError, TypeError):
                    body = None  # a damaged row: whoever reads it drops the cache
                if body is not None and len(body) > INDEX_MOST:
                    longs.append((rowid,))
                elif body is not None:
                    bodies.append((rowid, body))
            db.executemany("INSERT INTO grep_text(rowid, body) VALUES (?, ?)", bodies)
            db.executemany("INSERT OR IGNORE INTO grep_long VALUES (?)", longs)
            upto = rows[-1][0]
        db.execute("INSERT OR REPLACE INTO grep_state VALUES (0, ?)", (upto,))
        return True

    def candidates(
        self, tips: Sequence[str], needles: Sequence[str]
    ) -> tuple[set[str], list[str]] | None:
        """The ``tips`` whose chains may hold every needle, and the tips the index
        cannot answer for (their chains are not wholly cached).  None: no index."""
        args = (json.dumps(list(tips)),)
        found = self._narrow(needles, lambda db: self._mark_whole(db, tips), _HOLDING, args)
        return None if found is None else ({r[0] for r in found[0]}, found[1])

    def in_listing(
        self, refs: str, needles: Sequence[str], archived: Sequence[bool], hide: int
    ) -> tuple[list[tuple[str, str, bool]], list[str]] | None:
        """Candidates among the listing's kept rows, which the caller brought up to
        date for the refs' fingerprint ``refs``: (id, tip, archived) of each row, of
        those ``archived`` as asked and (archived ones) with no bit of ``hide``, whose
        chain may hold every needle; and the tips whose chains are not wholly cached
        (read them and ask again: meanwhile they are candidates).  None: no answer
        (the caller asks ``candidates``, which repairs a damaged index).  The rows are
        the cache's, so the caller checks each against the refs."""
        if not refs or not archived:
            return None
        select = _IN_LISTING.format(",".join("?" * len(archived)))
        args = (*(int(a) for a in archived), hide)
        found = self._narrow(
            needles, lambda db: self._listed_whole(db, refs), select, args, True, repair=False
        )
        if found is None:
            return None
        rows = [
            (c, t, bool(a)) for c, t, a in found[0] if isinstance(c, str) and isinstance(t, str)
        ]
        return rows, found[1]

    def _narrow(
        self,
        needles: Sequence[str],
        unwhole: Callable[[sqlite3.Connection], list[str]],
        select: str,
        args: tuple[Any, ...],
        unknown_first: bool = False,
        repair: bool = True,
    ) -> tuple[list[Any], list[str]] | None:
        """The rows ``select`` reads, given the matching commits (and, ``unknown_first``,
        the tips not wholly cached) before ``args``; and the tips ``unwhole`` finds not
        wholly cached, found in one write transaction with the index caught up.  None:
        no answer (with ``repair``, a damaged or missing index is made again)."""
        query = phrase(needles)
        db = self._cache._conn()
        if query is None or db is None:
            return None
        if repair and not self.usable(db):
            self.rebuild(db)  # dropped by someone, or this SQLite has no FTS5
        if not self.usable(db):
            return None
        try:
            db.execute("BEGIN IMMEDIATE")
            if not self.catch_up(db):
                raise sqlite3.DatabaseError("the index cannot catch up")
            unknown = unwhole(db)
            db.execute("COMMIT")
            seeds = json.dumps(matching(db, query, folded(needles)))
            more = (json.dumps(unknown),) if unknown_first else ()
            found = db.execute(select, (seeds, *more, *args)).fetchall()
        except (sqlite3.Error, ValueError) as exc:
            if db.in_transaction:
                sql.rollback(db)
            locked = isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
            if repair and not locked:
                self.rebuild(db)  # a damaged index: the next search builds it again
            return None
        return found, unknown

    def _listed_whole(self, db: sqlite3.Connection, refs: str) -> list[str]:
        """The kept rows' tips that are not whole, marking those found whole; once every
        one is, only a new fingerprint of the refs makes this look again."""
        mark = db.execute("SELECT version FROM derived WHERE name = ?", (WHOLE_MARK,)).fetchone()
        if mark is not None and mark[0] == refs:
            return []
        rest = [r[0] for r in db.execute(_LISTED_UNWHOLE).fetchall()]
        unknown = self._mark_whole(db, rest) if rest else []
        if not unknown:
            db.execute("INSERT OR REPLACE INTO derived VALUES (?, ?, '{}')", (WHOLE_MARK, refs))
        return unknown

    def rebuild(self, db: sqlite3.Connection) -> None:
        """Start the index again, empty: its next catch-up reads every row.  The
        space of the one dropped (an older layout's, or a damaged one) is given back."""
        sql.search_table(db)
        try:
            db.execute("DELETE FROM grep_state")
            db.execute("DELETE FROM grep_long")
        except sqlite3.Error:
            pass
        self._usable = None
        sql.reclaim(db, self._cache.notice)

    def _mark_whole(self, db: sqlite3.Connection, tips: Sequence[str]) -> list[str]:
        """Record the tips found whole; return the ones that are not."""
        listed = json.dumps(list(tips))
        known = db.execute(
            "SELECT value FROM json_each(?) WHERE value IN (SELECT commit_id FROM whole)", (listed,)
        ).fetchall()
        done = {r[0] for r in known}
        rest = [t for t in dict.fromkeys(tips) if t not in done]
        if not rest:
            return []
        now = {r[0] for r in db.execute(_WHOLE_NOW, (json.dumps(rest),)).fetchall()}
        db.executemany("INSERT OR IGNORE INTO whole VALUES (?)", [(t,) for t in now])
        return [t for t in rest if t not in now]
