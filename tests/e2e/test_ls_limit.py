"""`jp conversation ls --limit N` reads the cache's ordered rows and shows exactly the
tail of the whole listing: after edits of metadata, forks, archive, rm, undo, a
pull, a tip that plain git moved, refs packed by git, and a cache that is damaged
or deleted.  The whole listing (no --limit) is made from the refs and summaries
every time, so it is the reference."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tests.e2e.test_grep_index import git, plain_git_append
from tests.reliability.harness import Sandbox, remote_pair

# the limited listings checked at every step: (options, limit)
VARIANTS = [((), 2), (("--all",), 3)]
# and at a few steps also these
MORE = [(("--archived",), 1), (("--no-reviews",), 2), ((), 100)]


def limited_is_tail(box: Sandbox, variants: list[tuple[tuple[str, ...], int]]) -> None:
    """Each limited listing is the whole listing's last rows, and says how many it hid."""
    for options, limit in variants:
        whole = box.json("conversation", "ls", *options)
        shown = box.json("conversation", "ls", *options, "--limit", str(limit))
        assert shown == whole[-limit:], (options, limit)


def events_of(box: Sandbox, cid: str) -> int:
    rows = box.json("conversation", "ls", "--all", "--limit", "10")
    return int(next(r for r in rows if r["id"] == cid)["events"])


def completion(box: Sandbox) -> list[str]:
    return box.ok("completion", "fish", "--complete", "--", "c", "show", "").splitlines()


def ids(rows: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in rows]


def test_limited_listing_is_the_tail_of_the_whole_one(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    first = box.new("apples and pears")
    second = box.new("banana bread")
    third = box.new("cherries")
    limited_is_tail(box, VARIANTS)
    box.ok("conversation", "edit", first, "--title", "Renamed \x1b[31m", "--pin")
    box.ok("conversation", "edit", second, "--label", "team=red")
    fork = box.ok("conversation", "fork", second).split()[-1]
    box.ok("conversation", "use", first)  # the active one goes last
    limited_is_tail(box, VARIANTS)
    box.ok("conversation", "archive", third)
    limited_is_tail(box, VARIANTS + MORE)
    assert "(2 hidden)" in box.ok("conversation", "ls", "--limit", "1")
    box.ok("conversation", "rm", "--yes", fork)
    limited_is_tail(box, VARIANTS)
    box.ok("undo")  # the fork is back
    limited_is_tail(box, VARIANTS)
    assert fork in ids(box.json("conversation", "ls", "--limit", "5"))
    before = events_of(box, second)
    plain_git_append(box, second, "plain git wrote")
    assert events_of(box, second) == before + 1, "a tip moved by plain git is seen"
    limited_is_tail(box, VARIANTS)
    git(box, "pack-refs", "--all")  # every ref moves into packed-refs: the same listing
    limited_is_tail(box, VARIANTS[:1])
    offered = completion(box)  # from the kept rows, now up to date
    assert any(line.startswith(f"{first}\tRenamed") for line in offered), offered
    (box.store / "jp" / "cache.sqlite").unlink()
    assert completion(box) == offered, "completion reads the kept rows as the notes say"


def test_a_pulled_store_lists_what_it_pulled(tmp_path: Path) -> None:
    one, two = remote_pair(tmp_path)
    first = one.new("apples from the first machine")
    one.ok("push")
    two.ok("pull")
    two.new("one of the second machine")
    limited_is_tail(two, VARIANTS)
    one.ok("q", "later, on the first machine")
    one.ok("conversation", "edit", first, "--title", "Pulled title")
    one.ok("push")
    two.ok("pull")
    limited_is_tail(two, VARIANTS)
    row = next(r for r in two.json("conversation", "ls", "--limit", "2") if r["id"] == first)
    assert (row["title"], row["turns"]) == ("Pulled title", 2)


def test_a_damaged_or_deleted_cache_lists_the_same(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    for text in ("one", "two", "three"):
        box.new(text)
    expected = box.json("conversation", "ls", "--limit", "2")
    cache = box.store / "jp" / "cache.sqlite"
    db = sqlite3.connect(cache)
    db.execute("UPDATE listed SET row = 'not json' WHERE rowid = (SELECT max(rowid) FROM listed)")
    db.commit()
    db.close()
    assert box.json("conversation", "ls", "--limit", "2") == expected
    assert box.json("conversation", "ls", "--limit", "2") == expected  # made again
    db = sqlite3.connect(cache)  # rows made for other tips, and refs said to have moved
    db.execute("UPDATE listed SET tip = 'old', row = json_set(row, '$.title', 'old')")
    db.execute("UPDATE listed_state SET refs = 'stale'")
    db.commit()
    db.close()
    assert box.json("conversation", "ls", "--limit", "2") == expected
    db = sqlite3.connect(cache)
    db.execute("DROP TABLE listed")
    db.commit()
    db.close()
    assert box.json("conversation", "ls", "--limit", "2") == expected
    cache.unlink()
    assert box.json("conversation", "ls", "--limit", "2") == expected
    assert json.loads(box.ok("-F", "json", "conversation", "ls", "--limit", "1"))[0]["active"]
