"""A disposable cache of events, keyed by commit id, inside the git directory.

Commits never change, so an entry never goes stale and forks share entries.  A
conversation is read from its tip by following ``parent`` links inside SQLite
(one recursive query); what the cache lacks is read from git and added.

A keyed table keeps one derived value per name (computed from the git state
its ``version`` names: a conversation's summary under its tip, a notes read
under the notes ref's commit), and ``listing`` the rows of `ls`, so that
listing reads no event chains.  A failure reads as a miss, and a write that
fails is dropped.

A third keeps segments: every chain is cut, from its root, into runs of
``SEGMENT`` events, each stored as one JSON array with its commit ids and
its facts (``gitstore.chainfacts``).  A segment is keyed by its last commit
and links to the one below it, so forks share them and they never go stale.
A long conversation then loads with one parse per segment instead of a row
and a parse per event, and ``parts`` answers what a chain is (its facts)
reading only the segment links and the few rows above the last segment.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from functools import cached_property
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitstore.cache import sql
from gitstore.cache.facts import SEGMENT, Facts, Run, segment_facts
from gitstore.cache.sql import FORMAT, SEGMENTS, TO_SEGMENT, rollback
from gitstore.cache.view import CachedChain, Segment
from gitstore.events import Event
from gitstore.events.canonical import encoder

if TYPE_CHECKING:
    from gitstore.cache import listing, search
else:
    from gitstore.lazy import lazy_module

    # `show` and `print` need neither; `ls` the listing, a write and `grep` the search
    listing = lazy_module("gitstore.cache.listing")
    search = lazy_module("gitstore.cache.search")

HELD_MOST = 2_000  # rows ``hold`` keeps in memory at most
PAGE_CACHE_KIB = 8_192  # SQLite's page cache of one connection, at most
_PUT_DERIVED = "INSERT OR REPLACE INTO derived VALUES (?, ?, ?)"
_VALUES = (
    "SELECT d.name, d.json FROM json_each(?) AS t JOIN derived AS d ON d.name = t.value"
    " WHERE d.version = ?"
)
_EACH = "json_each(?) AS c JOIN events AS e ON e.commit_id = c.value"
_encode = encoder(ensure_ascii=False)  # ``json.dumps(value, ensure_ascii=False)``


class Cache:
    """SQLite-backed; every failure degrades to a cache miss."""

    def __init__(self, gitdir: Path) -> None:
        self.path = gitdir / "jp" / "cache.sqlite"
        self.notice: sql.Notice = sql.quiet  # told of a slow step before it (to say so)
        self._db: sqlite3.Connection | None = None
        # rows this cache's writes may still index as they add them: together, not
        # each (an import of many small conversations is a big write, left to a search)
        self._index_budget: int | None = None  # None: all of WRITE_MOST
        # rows ``add`` and values ``keep_values`` keep until ``release`` or the next
        # read (None: each written at once)
        self._held: list[tuple[str, str | None, str]] | None = None
        self._held_values: list[tuple[str, str, str]] = []

    @cached_property
    def search(self) -> search.Search:
        """The events' text, for `grep`."""
        return search.Search(self)

    @cached_property
    def listing(self) -> listing.Listing:
        """The rows of `ls`, in order."""
        return listing.Listing(self)

    def _conn(self) -> sqlite3.Connection | None:
        """The connection, every row ``hold`` kept written first (a read sees them)."""
        db = self._open()
        if self._held or self._held_values:
            rows, values = self._held or [], self._held_values
            self._held, self._held_values = ([] if self._held is not None else None), []
            if db is not None:
                self._add_rows(db, rows, values)
        return db

    def _open(self) -> sqlite3.Connection | None:
        if self._db is not None:
            return self._db
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
            if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
                sql.new_file(db)  # before the file's header is written
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")
            # SQLite's default 2 MiB of pages does not hold the two commit-id indexes of
            # a 50,000-event import, whose inserts then read pages back (0.45 to 0.38 s
            # in a bench of the inserts); pages are taken only as they are used
            db.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if str(version) != FORMAT:  # another layout: start again (nothing is lost)
                sql.start_again(db)
                sql.reclaim(db, self.notice)  # what the old layout's rows took
            self._db = db
        except (sqlite3.Error, OSError):
            self._db = self._read_only()
        return self._db

    def _read_only(self) -> sqlite3.Connection | None:
        """The cache of a store that cannot be written (a read-only mount): read as it
        is, every write a miss.  Nothing else writes there, so it cannot change."""
        if not self.path.is_file():
            return None
        try:
            db = sqlite3.connect(f"file:{self.path}?mode=ro&immutable=1", uri=True)
            version = db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.Error:
            return None
        return db if str(version) == FORMAT else None

    def _fetch(self, query: str, args: Sequence[Any]) -> list[Any] | None:
        """The rows ``query`` reads (None: no cache, or an SQLite error: a miss)."""
        db = self._conn()
        if db is None:
            return None
        try:
            return db.execute(query, args).fetchall()
        except sqlite3.Error:
            return None

    def chain(self, tip: str) -> tuple[list[Any], bool]:
        """Cached links (commit, parent, ...) from ``tip`` towards the root, and whether
        the cache holds the chain whole (they reach the root or a segment, which is
        made only of a whole chain)."""
        rows = self._fetch(TO_SEGMENT, (tip,))
        if not rows or (sql.repeats(rows) and self._db and sql.reset(self._db)):  # a loop: dropped
            return [], False
        return rows, rows[-1][1] is None or bool(rows[-1][3])

    def events(self, tip: str) -> tuple[list[Event], list[str]] | None:
        """The chain ending at ``tip``, root first: events and commit ids (None: a miss)."""
        found = self.parts(tip)
        if found is None:
            return None
        events: list[Event] = []
        ids: list[str] = []
        for segment in found.segments:
            got = found.cut.get(segment.last) or self.segment(segment)
            if got is None:
                return None
            events += got[0]
            ids += got[1]
        return events + found.tail_events, ids + found.tail_ids

    def parts(self, tip: str) -> CachedChain | None:
        """The segments of the chain ending at ``tip`` and the events above them (None: a miss).

        Rows above the last segment that make up whole segments become segments.
        """
        db = self._conn()
        if db is None:
            return None
        try:
            rows = db.execute(TO_SEGMENT, (tip,)).fetchall()
            if not rows or (sql.repeats(rows) and sql.reset(db)):  # a loop: dropped
                return None
            segments: list[Segment] = []
            runs: list[Run] = []
            if rows[-1][3]:
                below = self._segments_below(db, rows.pop()[0])
                if below is None:
                    return None
                segments, runs = below
            elif rows[-1][1] is not None:
                return None  # part of the chain is not cached
            rows.reverse()
            tail: list[Event] = json.loads("[" + ",".join(r[2] for r in rows) + "]")
        except sqlite3.Error:
            return None
        except ValueError:  # a damaged row: read git instead
            return None
        if not sql.events_ok(tail) and sql.reset(db):  # rows of another shape: read git
            return None
        ids = [r[0] for r in rows]
        made: dict[str, tuple[list[Event], list[str]]] = {}
        if len(rows) >= SEGMENT:
            self._cut(db, rows, tail, segments, runs, made)
        cut = sum(len(m[0]) for m in made.values())
        start = segments[-1].start + segments[-1].count if segments else 0
        facts = segment_facts(tail[cut:])
        runs.append(Run.of(start, facts))
        return CachedChain(segments, runs, tail[cut:], ids[cut:], facts, made)

    def _cut(
        self,
        db: sqlite3.Connection,
        rows: list[Any],
        tail: list[Event],
        segments: list[Segment],
        runs: list[Run],
        made: dict[str, tuple[list[Event], list[str]]],
    ) -> None:
        """Store whole segments of ``rows`` (root first) above ``segments``, in one
        transaction, adding each to ``segments``, ``runs`` and ``made`` if it is kept."""
        start = segments[-1].start + segments[-1].count if segments else 0
        prev = segments[-1].last if segments else None
        new: list[tuple[Segment, Run, list[Event], list[str]]] = []
        stored: list[tuple[Any, ...]] = []
        for cut in range(0, len(rows) - SEGMENT + 1, SEGMENT):
            block = rows[cut : cut + SEGMENT]
            events, ids = tail[cut : cut + SEGMENT], [r[0] for r in block]
            facts = segment_facts(events)
            segment, run = Segment(ids[-1], start + cut, SEGMENT), Run.of(start + cut, facts)
            new.append((segment, run, events, ids))
            counts = (run.first, run.starts, int(run.lead), run.internal)
            text = "[" + ",".join(r[2] for r in block) + "]"
            facts_text = json.dumps(facts, ensure_ascii=False)
            stored.append(
                (segment.last, run.start, SEGMENT, prev, *counts, facts_text, " ".join(ids), text)
            )
            prev = segment.last
        try:
            db.execute("BEGIN")
            db.executemany(f"INSERT OR IGNORE INTO segments VALUES ({','.join('?' * 11)})", stored)
            db.execute("COMMIT")
        except sqlite3.Error:
            rollback(db)
            return
        for segment, run, events, ids in new:
            segments.append(segment)
            runs.append(run)
            made[segment.last] = (events, ids)

    def _segments_below(
        self, db: sqlite3.Connection, last: str
    ) -> tuple[list[Segment], list[Run]] | None:
        """The segments from the root up to the one ending at ``last``; None if broken."""
        found = db.execute(SEGMENTS, (last,)).fetchall()
        found.reverse()
        segments = [Segment(r[0], r[1], r[2]) for r in found]
        expected = 0
        for segment in segments:
            if segment.start != expected:
                break
            expected += segment.count
        else:
            if found and found[0][3] is None:
                runs = [Run(r[1], r[2], r[4], r[5], bool(r[6]), r[7]) for r in found]
                return segments, runs
        # a damaged or partly deleted run: forget it, the rows rebuild it
        self._forget(db, [s.last for s in segments])
        return None

    def _segment_row(self, segment: Segment, columns: str) -> tuple[Any, ...] | None:
        rows = self._fetch(f"SELECT {columns} FROM segments WHERE last = ?", (segment.last,))
        return tuple(rows[0]) if rows else None

    def _damaged(self, segment: Segment) -> None:
        db = self._conn()
        if db is not None:
            self._forget(db, [segment.last])

    def segment_facts(self, segment: Segment) -> Facts | None:
        """The full facts of one segment (None: a miss)."""
        row = self._segment_row(segment, "facts")
        try:
            facts = json.loads(row[0]) if row is not None else None
        except ValueError:
            facts = None
        if row is not None and not (isinstance(facts, dict) and facts.get("n") == segment.count):
            self._damaged(segment)
            return None
        return facts

    def segment(self, segment: Segment) -> tuple[list[Event], list[str]] | None:
        """The events and commit ids of one segment (None: a miss)."""
        row = self._segment_row(segment, "ids, json")
        if row is None:
            return None
        try:
            events: list[Event] = json.loads(row[1])
        except ValueError:
            events = []
        ids = row[0].split() if isinstance(row[0], str) else []
        if len(events) != segment.count or len(ids) != segment.count or not sql.events_ok(events):
            self._damaged(segment)
            return None
        return events, ids

    def segment_ids(self, segment: Segment) -> list[str] | None:
        """The commit ids of one segment, root first (None: a miss)."""
        row = self._segment_row(segment, "ids")
        ids = row[0].split() if row is not None else []
        return ids if len(ids) == segment.count else None

    def rows(self, commits: Sequence[str]) -> list[Event] | None:
        """The events of ``commits``, in that order (None unless every one is cached)."""
        found = self._fetch(f"SELECT c.key, e.json FROM {_EACH}", (json.dumps(list(commits)),))
        if found is None or len(found) != len(commits):
            return None
        found.sort()
        try:
            events: list[Event] = json.loads("[" + ",".join(r[1] for r in found) + "]")
        except (ValueError, TypeError):
            return None
        if not sql.events_ok(events) and self._db and sql.reset(self._db):
            return None
        return events

    def _forget(self, db: sqlite3.Connection, lasts: Sequence[str]) -> None:
        try:
            db.executemany("DELETE FROM segments WHERE last = ?", [(x,) for x in lasts])
        except sqlite3.Error:
            pass

    def known(self, commits: Sequence[str]) -> set[str]:
        """Which of ``commits`` have a row (one query, not one per commit)."""
        # an SQLite without json_each (an error: a miss) knows nothing; reads still work
        query = f"SELECT e.commit_id FROM {_EACH}"
        rows = self._fetch(query, (json.dumps(list(commits)),)) if commits else None
        return {r[0] for r in rows or []}

    def hold(self) -> None:
        """Keep the rows of later ``add`` calls and the values of ``keep_values``,
        written together at ``release`` (or before the next read of this cache, or
        every ``HELD_MOST`` rows): one transaction for an import's many small
        conversations, not one or two each."""
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """Write the rows held (``hold``), and write the next ones at once again."""
        if self._held or self._held_values:
            self._conn()
        self._held = None

    def add(self, entries: Iterable[tuple[str, str | None, Event | str]]) -> None:
        rows = [(c, p, e if isinstance(e, str) else _encode(e)) for c, p, e in entries]
        if self._held is not None:
            self._held += rows
            if len(self._held) < HELD_MOST:
                return
        db = self._conn()
        if db is not None and self._held is None:
            self._add_rows(db, rows)

    def _add_rows(
        self,
        db: sqlite3.Connection,
        rows: list[tuple[str, str | None, str]],
        values: Sequence[tuple[str, str, str]] = (),
    ) -> None:
        # in commit order: each index page a batch needs is then met once, not once a row
        rows.sort(key=itemgetter(0))
        try:
            db.execute("BEGIN")
            db.executemany("INSERT OR IGNORE INTO events VALUES (?, ?, ?)", rows)
            db.executemany(_PUT_DERIVED, values)
            budget = search.WRITE_MOST if self._index_budget is None else self._index_budget
            if budget > 0 and self.search.catch_up(db, budget):  # the new rows' text, if few
                self._index_budget = budget - len(rows)
            db.execute("COMMIT")
        except sqlite3.Error:
            rollback(db)

    def values(self, names: Sequence[str], version: str) -> dict[str, Any]:
        """The values kept for ``names`` that were computed from the git state named by
        ``version`` (e.g. a commit id); a name without one is absent."""
        db = self._conn()
        if db is None:
            return {}
        try:
            try:
                rows = db.execute(_VALUES, (json.dumps(list(names)), version)).fetchall()
            except sqlite3.OperationalError:  # an SQLite without json_each: lists of names
                rows = []
                for at in range(0, len(names), 500):
                    part = list(names[at : at + 500])
                    marks = ",".join("?" * len(part))
                    query = (
                        f"SELECT name, json FROM derived WHERE version = ? AND name IN ({marks})"
                    )
                    rows += db.execute(query, (version, *part)).fetchall()
            # one parse for every row; a row that is not one whole value fails it all (a miss)
            values = json.loads("[" + ",".join(r[1] for r in rows) + "]")
            return dict(zip((r[0] for r in rows), values, strict=True))
        except (sqlite3.Error, ValueError, TypeError):
            return {}

    def keep_values(self, version: str, items: dict[str, Any]) -> None:
        """Keep one value per name: the one for the newest ``version`` seen (held with
        the rows, ``hold``)."""
        rows = [(n, version, json.dumps(v, ensure_ascii=False)) for n, v in items.items()]
        if self._held is not None:
            self._held_values += rows
        else:
            self._write(_PUT_DERIVED, rows)

    def drop_values(self, prefix: str, keep: Sequence[str]) -> None:
        """Drop the values whose name starts with ``prefix``, but those named in ``keep``."""
        query = (
            "DELETE FROM derived WHERE substr(name, 1, ?) = ?"
            " AND name NOT IN (SELECT value FROM json_each(?))"
        )
        self._write(query, [(len(prefix), prefix, json.dumps(list(keep)))])

    def _write(self, query: str, rows: list[tuple[Any, ...]]) -> None:
        """``query`` for each of ``rows``, in one transaction; a failure drops the write."""
        db = self._conn()
        if db is None or not rows:
            return
        try:
            db.execute("BEGIN")
            db.executemany(query, rows)
            db.execute("COMMIT")
        except sqlite3.Error:
            rollback(db)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
