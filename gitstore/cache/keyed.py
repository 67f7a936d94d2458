"""The cache's two keyed tables: a summary per tip (counts, first request, last
time: what `ls` shows without reading a chain) and one derived value per name
(computed from the git state its ``version`` names).  Each function takes the
open connection; a failure reads as a miss, and a write that fails is dropped."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from gitstore.cache.sql import rollback


def summaries(db: sqlite3.Connection, tips: Sequence[str]) -> dict[str, dict[str, Any]]:
    query = "SELECT s.tip, s.json FROM json_each(?) AS t JOIN summaries AS s ON s.tip = t.value"
    try:
        try:
            rows = db.execute(query, (json.dumps(list(tips)),)).fetchall()
        except sqlite3.OperationalError:  # an SQLite without json_each
            rows = []
            for start in range(0, len(tips), 500):
                part = list(tips[start : start + 500])
                marks = ",".join("?" * len(part))
                found = db.execute(f"SELECT tip, json FROM summaries WHERE tip IN ({marks})", part)
                rows += found.fetchall()
        found = json.loads("{" + ",".join(f'"{t}":{raw}' for t, raw in rows) + "}")
    except (sqlite3.Error, ValueError, TypeError):
        return {}
    return {t: v for t, v in found.items() if isinstance(v, dict)}  # rows of a shape


def put_summaries(db: sqlite3.Connection, items: dict[str, dict[str, Any]]) -> None:
    try:
        db.execute("BEGIN")
        db.executemany(
            "INSERT OR REPLACE INTO summaries VALUES (?, ?)",
            [(t, json.dumps(s, ensure_ascii=False)) for t, s in items.items()],
        )
        db.execute("COMMIT")
    except sqlite3.Error:
        rollback(db)


def derived(db: sqlite3.Connection, name: str, version: str) -> Any:
    try:
        row = db.execute("SELECT version, json FROM derived WHERE name = ?", (name,)).fetchone()
        return json.loads(row[1]) if row is not None and row[0] == version else None
    except (sqlite3.Error, ValueError):
        return None


def derived_many(db: sqlite3.Connection, names: Sequence[str], version: str) -> dict[str, Any]:
    """The values kept for ``names`` under ``version``, in one query (a name without
    one, or with another version, is absent)."""
    query = (
        "SELECT d.name, d.json FROM json_each(?) AS t JOIN derived AS d ON d.name = t.value"
        " WHERE d.version = ?"
    )
    try:
        rows = db.execute(query, (json.dumps(list(names)), version)).fetchall()
        # one parse for every row; a row that is not one whole value fails it all (a miss)
        values = json.loads("[" + ",".join(r[1] for r in rows) + "]")
        return dict(zip((r[0] for r in rows), values, strict=True))
    except (sqlite3.Error, ValueError, TypeError):
        return {}


def put_derived_many(db: sqlite3.Connection, version: str, items: dict[str, Any]) -> None:
    try:
        db.execute("BEGIN")
        db.executemany(
            "INSERT OR REPLACE INTO derived VALUES (?, ?, ?)",
            [(n, version, json.dumps(v, ensure_ascii=False)) for n, v in items.items()],
        )
        db.execute("COMMIT")
    except sqlite3.Error:
        rollback(db)


def drop_derived(db: sqlite3.Connection, prefix: str, keep: Sequence[str]) -> None:
    """Drop the values whose name starts with ``prefix``, but those named in ``keep``."""
    query = (
        "DELETE FROM derived WHERE substr(name, 1, ?) = ?"
        " AND name NOT IN (SELECT value FROM json_each(?))"
    )
    try:
        db.execute("BEGIN")
        db.execute(query, (len(prefix), prefix, json.dumps(list(keep))))
        db.execute("COMMIT")
    except sqlite3.Error:
        rollback(db)


def put_derived(db: sqlite3.Connection, name: str, version: str, value: Any) -> None:
    try:
        db.execute(
            "INSERT OR REPLACE INTO derived VALUES (?, ?, ?)",
            (name, version, json.dumps(value, ensure_ascii=False)),
        )
    except sqlite3.Error:
        pass
