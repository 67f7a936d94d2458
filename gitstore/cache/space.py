"""Giving back the space of what the cache no longer keeps.

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
from collections.abc import Callable

LEAST = 16 * 2**20  # freed bytes below which nothing is given back
NOTE_FROM = 64 * 2**20  # a copy of more live bytes than this is said first
INCREMENTAL = 2  # PRAGMA auto_vacuum's value for INCREMENTAL

Notice = Callable[[str], None]


def quiet(_message: str) -> None:
    """A notice that nobody hears (the store's default)."""


def free_bytes(db: sqlite3.Connection) -> int:
    (pages,) = db.execute("PRAGMA freelist_count").fetchone()
    (size,) = db.execute("PRAGMA page_size").fetchone()
    return int(pages) * int(size)


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
        free = free_bytes(db)
        if free < LEAST:
            return False
        (mode,) = db.execute("PRAGMA auto_vacuum").fetchone()
        if mode == INCREMENTAL:
            # run to its end (``execute`` would step it once: one page)
            db.executescript("PRAGMA incremental_vacuum;")
        else:
            size = _file_bytes(db)
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


def _file_bytes(db: sqlite3.Connection) -> int:
    (pages,) = db.execute("PRAGMA page_count").fetchone()
    (size,) = db.execute("PRAGMA page_size").fetchone()
    return int(pages) * int(size)
