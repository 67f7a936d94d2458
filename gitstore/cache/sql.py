"""The cache's SQLite schema and the recursive walks it reads chains with."""

from __future__ import annotations

import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (commit_id TEXT PRIMARY KEY, parent TEXT, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS summaries (tip TEXT PRIMARY KEY, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS segments (last TEXT PRIMARY KEY, start INTEGER NOT NULL,
  n INTEGER NOT NULL, prev TEXT, first INTEGER, starts INTEGER NOT NULL, lead INTEGER NOT NULL,
  internal INTEGER NOT NULL, facts TEXT NOT NULL, ids TEXT NOT NULL, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS derived (name TEXT PRIMARY KEY, version TEXT NOT NULL, json TEXT NOT NULL);
"""
FORMAT = "4"
# every table any layout had: a cache of another FORMAT is dropped whole
OLD_TABLES = ("events", "summaries", "snapshots", "segments", "derived")

CHAIN = """
WITH RECURSIVE chain(c, p, j) AS (
  SELECT commit_id, parent, json FROM events WHERE commit_id = ?
  UNION ALL
  SELECT e.commit_id, e.parent, e.json FROM events e JOIN chain ON e.commit_id = chain.p
)
SELECT c, p, j FROM chain
"""

# The same walk, stopping at the first commit that ends a segment (flag s).
TO_SEGMENT = """
WITH RECURSIVE chain(c, p, j, s) AS (
  SELECT commit_id, parent, json, EXISTS (SELECT 1 FROM segments WHERE last = commit_id)
  FROM events WHERE commit_id = ?
  UNION ALL
  SELECT e.commit_id, e.parent, e.json, EXISTS (SELECT 1 FROM segments WHERE last = e.commit_id)
  FROM events e JOIN chain ON e.commit_id = chain.p WHERE chain.s = 0
)
SELECT c, p, j, s FROM chain
"""

# The segments below one, down to the root: their links and counts only (the
# columns before the long ones, so that no event text is read).
SEGMENTS = """
WITH RECURSIVE seg(last, start, n, prev, first, starts, lead, internal) AS (
  SELECT last, start, n, prev, first, starts, lead, internal FROM segments WHERE last = ?
  UNION ALL
  SELECT s.last, s.start, s.n, s.prev, s.first, s.starts, s.lead, s.internal
  FROM segments s JOIN seg ON s.last = seg.prev
)
SELECT last, start, n, prev, first, starts, lead, internal FROM seg
"""


def rollback(db: sqlite3.Connection) -> None:
    """End a failed transaction (a cache that cannot is only a slower cache)."""
    try:
        db.execute("ROLLBACK")
    except sqlite3.Error:
        pass
