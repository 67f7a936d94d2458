"""The refs' fingerprint (``refs.state``) and the cache's ordered listing rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gitstore import Listed
from gitstore.git.refs import files
from gitstore.store.core import Store
from tests.unit.gitstore.builders import git, start, turn
from tests.unit.gitstore.test_gitstore_refread import PREFIXES, make


def test_the_fingerprint_moves_with_any_ref_and_only_then(store: Store, path: Path) -> None:
    made = make(store, 3)
    first = store.refs.state()
    assert first is not None and store.refs.state() == first
    git(path, "pack-refs", "--all")  # the same refs, now packed: may differ, must be stable
    packed = store.refs.state()
    assert packed == store.refs.state()
    ref = f"refs/conversations/{made[0]}"
    other = git(path, "rev-parse", f"refs/conversations/{made[1]}").strip()
    git(path, "update-ref", ref, other)  # plain git, a loose ref of the same size
    moved = store.refs.state()
    assert moved not in (first, packed)
    git(path, "pack-refs", "--all")  # and packed again: packed-refs is a new file
    assert store.refs.state() not in (first, packed, moved)
    cid = "jp-c17000000099"
    store.log.create(cid, [start(cid), *turn(1)], None, "test")
    assert store.refs.state() != moved
    assert files.refs_state(path, PREFIXES) == store.refs.state()


def test_the_refs_that_moved_are_told_while_packed_refs_is_untouched(
    store: Store, path: Path
) -> None:
    made = make(store, 3)
    git(path, "pack-refs", "--all")
    packed = store.refs.state()
    assert packed is not None and store.refs.moved_since(packed, packed) == []
    other = git(path, "rev-parse", f"refs/conversations/{made[1]}").strip()
    git(path, "update-ref", f"refs/conversations/{made[0]}", other)  # a loose ref appears
    moved = store.refs.state()
    assert moved is not None and store.refs.moved_since(packed, moved) == [made[0]]
    git(path, "update-ref", "-d", f"refs/conversations/{made[2]}")  # packed-refs rewritten
    gone = store.refs.state()
    assert gone is not None and store.refs.moved_since(moved, gone) is None
    cid = "jp-c17000000099"
    store.log.create(cid, [start(cid), *turn(1)], None, "test")  # a loose ref, written by jp
    now = store.refs.state()
    assert now is not None and store.refs.moved_since(gone, now) == [cid]
    assert store.refs.moved_since("", now) is None, "no fingerprint kept: list the refs"


def row(cid: str, rank: float, *, pinned: bool = False, archived: bool = False) -> Listed:
    return Listed(
        cid, "t" + cid, archived, pinned, 1 if cid.endswith("9") else 0, rank, {"id": cid}
    )


def test_rows_come_back_in_order_a_limited_number(store: Store) -> None:
    kept = store.local.listing
    rows = [
        row("jp-c11", 5.0),
        row("jp-c12", float("-inf")),
        row("jp-c13", 5.0, pinned=True),
        row("jp-c14", 1.0, archived=True),
        row("jp-c19", 9.0),
        row("jp-c15", 7.0),
    ]
    assert kept.update("refs", "key", rows, [], whole=True)
    assert kept.state() == ("refs", "key")
    found = kept.last((False,), 0, None, None)
    assert found is not None
    assert [r["id"] for r in found[0]] == ["jp-c12", "jp-c11", "jp-c15", "jp-c19", "jp-c13"]
    assert found[1] == 5
    assert kept.last((False,), 1, 2, "jp-c13") == ([{"id": "jp-c11"}, {"id": "jp-c15"}], 4)
    assert kept.last((False, True), 0, 1, None) == ([{"id": "jp-c13"}], 6)
    assert kept.row("jp-c14", (False,), 0) == {}
    assert kept.row("jp-c14", (True,), 0) == {"id": "jp-c14"}
    assert kept.neighbours("jp-c13") == ("jp-c12", "jp-c14")
    assert kept.neighbours("jp-c11") == (None, "jp-c12")
    assert kept.update("refs2", "key", [row("jp-c16", 0.0)], ["jp-c19"], whole=False)
    assert kept.known()["jp-c16"] == ("tjp-c16", False) and "jp-c19" not in kept.known()
    kept.forget()
    assert kept.state() is None


def test_rows_deleted_behind_its_back_are_no_state(store: Store) -> None:
    kept = store.local.listing
    assert kept.update("refs", "key", [row("jp-c11", 1.0), row("jp-c12", 2.0)], [], whole=True)
    db = kept._db()  # the table itself, to damage it behind the listing's back
    assert db is not None
    db.execute("DELETE FROM listed WHERE cid = 'jp-c11'")
    assert kept.state() is None
    db.execute("UPDATE listed SET row = '[1' WHERE cid = 'jp-c12'")
    assert kept.last((False,), 0, 5, None) is None
    assert kept.row("jp-c12", (False,), 0) is None


def counted(db: sqlite3.Connection, archived: tuple[int, ...], hide: int) -> int:
    """The rows themselves counted, what the kept counts must equal."""
    marks = ",".join("?" * len(archived))
    query = f"SELECT count(*) FROM listed WHERE archived IN ({marks}) AND flags & ? = 0"
    return int(db.execute(query, (*archived, hide)).fetchone()[0])


def test_the_kept_counts_follow_every_write_of_the_rows(store: Store) -> None:
    kept = store.local.listing
    first = [row(f"jp-c1{n}", float(n), archived=n % 3 == 0) for n in range(10)]
    assert kept.update("refs", "key", first, [], whole=True)
    # a row archived, one unarchived, one gone, one new, one written twice in one update
    again = [
        row("jp-c11", 1.0, archived=True),
        row("jp-c13", 3.0),
        row("jp-c20", 4.0),
        row("jp-c20", 4.5),
    ]
    assert kept.update("refs2", "key", again, ["jp-c14"], whole=False)
    db = kept._db()
    assert db is not None
    for which in ((0,), (1,), (0, 1)):
        for hide in (0, 1):
            found = kept.last(tuple(bool(a) for a in which), hide, 1, None)
            assert found is not None and found[1] == counted(db, which, hide), (which, hide)
    assert kept.state() == ("refs2", "key")
    assert kept.update("refs3", "key", [row("jp-c30", 1.0)], [], whole=True)
    assert kept.last((False, True), 0, None, None) == ([{"id": "jp-c30"}], 1)


def test_counts_dropped_behind_its_back_are_made_again(store: Store, path: Path) -> None:
    kept = store.local.listing
    rows = [row(f"jp-c1{n}", float(n), archived=n == 2) for n in range(6)]
    assert kept.update("refs", "key", rows, [], whole=True)
    db = kept._db()
    assert db is not None
    db.execute("DROP TABLE listed_n")  # and with it nothing else: the rows stay
    store.close()
    reopened = Store(path).local.listing
    assert reopened.state() == ("refs", "key"), "counted again: the rows are all there"
    assert reopened.last((False,), 0, 2, None) == ([{"id": "jp-c14"}, {"id": "jp-c15"}], 5)
    db = reopened._db()
    assert db is not None
    db.execute("DROP TRIGGER listed_removed")  # a delete the counts would miss
    db.execute("DELETE FROM listed WHERE cid = 'jp-c10'")
    reopened = Store(path).local.listing
    assert reopened.state() is None, "fewer rows than written: every row is made again"
    assert reopened.last((False,), 0, 1, None) == ([{"id": "jp-c15"}], 4)
    other = reopened._db()
    assert other is not None
    other.execute("DROP TABLE listed")  # the rows and their triggers
    other.close()
    again = Store(path).local.listing
    assert again.state() is None and again.last((False,), 0, 5, None) == ([], 0)


def test_newest_pages_are_the_activity_order_newest_first(store: Store) -> None:
    kept = store.local.listing
    ranks = [3.0, float("-inf"), 7.0, 3.0, 1.0, 9.0, 7.0, 2.0]
    rows = [
        row(f"jp-c{10 + n}", rank, pinned=n == 4, archived=n == 6) for n, rank in enumerate(ranks)
    ]
    assert kept.update("refs", "key", rows, [], whole=True)
    live = [x for x in rows if not x.archived and not x.flags & 1]
    expected = [x.cid for x in sorted(live, key=lambda x: (x.rank, x.cid), reverse=True)]
    pages = [kept.newest((False,), 1, 3, start) for start in (0, 3, 6)]
    assert all(p is not None and p[1] == len(live) for p in pages)
    assert [r["id"] for p in pages if p for r in p[0]] == expected
    everything = kept.newest((False, True), 0, 100, 0)
    assert everything is not None and everything[1] == len(rows)
    assert [r["id"] for r in everything[0]][:3] == ["jp-c15", "jp-c16", "jp-c12"]
