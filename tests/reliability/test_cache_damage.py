"""A cache whose rows have unexpected shapes, or a parent loop: dropped and rebuilt.

The cache (`jp/cache.sqlite`) is derived data that anyone with the git
directory can write.  Rows of another shape, or parent links that loop, must
cost a rebuild from git, never an internal error or a walk without end.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.reliability.harness import Sandbox

COMMANDS = (
    ("conversation", "ls"),
    ("conversation", "show"),
    ("conversation", "print"),
    ("conversation", "grep", "again"),
)


def _damage(box: Sandbox, how: str) -> None:
    db = sqlite3.connect(box.store / "jp" / "cache.sqlite")
    try:
        if how == "event-rows-not-objects":
            db.execute("UPDATE events SET json = '[1, 2]'")
        elif how == "event-rows-without-kind":
            db.execute("""UPDATE events SET json = '{"type": 5, "timestamp": null}'""")
        elif how == "summaries-not-objects":
            db.execute("""UPDATE derived SET json = '"a text"' WHERE name LIKE 'summary %'""")
        elif how == "parent-loop":
            (root,) = db.execute("SELECT commit_id FROM events WHERE parent IS NULL").fetchone()
            (tip,) = db.execute(
                "SELECT commit_id FROM events WHERE commit_id NOT IN "
                "(SELECT parent FROM events WHERE parent IS NOT NULL)"
            ).fetchone()
            db.execute("UPDATE events SET parent = ? WHERE commit_id = ?", (tip, root))
        elif how == "search-index-pages-gone":  # FTS5 can no longer open its table
            db.execute("DELETE FROM grep_text_data")
        elif how == "search-index-dropped":
            db.execute("DROP TABLE grep_text")
        elif how == "search-watermark-ahead":  # rows added later would never be indexed
            db.execute("UPDATE grep_state SET upto = 1000000")
        elif how == "search-watermark-behind":  # rows indexed twice
            db.execute("UPDATE grep_state SET upto = 0")
        elif how == "search-watermark-not-a-number":
            db.execute("UPDATE grep_state SET upto = 'many'")
        db.commit()
    finally:
        db.close()


@pytest.mark.parametrize(
    "how",
    [
        "event-rows-not-objects",
        "event-rows-without-kind",
        "summaries-not-objects",
        "parent-loop",
        "search-index-pages-gone",
        "search-index-dropped",
        "search-watermark-ahead",
        "search-watermark-behind",
        "search-watermark-not-a-number",
    ],
)
def test_a_damaged_cache_is_rebuilt_not_an_error(tmp_path: Path, how: str) -> None:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    box.new("hello")
    box.ok("q", "and again")
    before = [box.ok(*args) for args in COMMANDS]
    _damage(box, how)
    after = [box.ok(*args) for args in COMMANDS]
    assert after == before
    box.ok("q", "after the damage")
    requests = [e.get("content") for e in box.conversations()[box.head() or ""].events]
    assert "after the damage" in requests
    assert "after the damage" in box.ok("conversation", "grep", "after the damage")
