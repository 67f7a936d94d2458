"""`jp conversation grep` asks the index about the listing's kept rows (no ref
listed while the refs' fingerprint is unchanged), and a kept row that lies (the
cache file edited by hand) never yields a conversation, or a tip, that git does
not hold: the answer is checked against the refs, and grep then lists them."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from gitstore import Located
from gitstore.store.core import Store
from porcelain.app.search import indexed
from porcelain.render import lsview
from tests.e2e.test_grep_index import AFTER_CHANGE, plain_git_append, same_as_scan
from tests.reliability.harness import Sandbox


def three(tmp_path: Path) -> tuple[Sandbox, str, str, str]:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    holder = box.new("the zebra crossing and apples")
    other = box.new("pears only, no stripes")
    gone = box.new("a zebra that will be archived")
    box.ok("conversation", "archive", "--yes", gone)
    box.ok("conversation", "ls")  # the kept rows, up to date
    return box, holder, other, gone


def from_rows(box: Sandbox, pattern: str, archived: bool = False) -> list[Located] | None:
    store = Store(box.store)
    try:
        return indexed(store, re.compile(pattern, re.I), archived, False, lsview.rank)
    finally:
        store.close()


def edit(box: Sandbox, statement: str, *args: str) -> None:
    db = sqlite3.connect(box.store / "jp" / "cache.sqlite")
    db.execute(statement, args)
    db.commit()
    db.close()


def tip(box: Sandbox, cid: str, archived: bool = False) -> str:
    ref = f"refs/{'archive/' if archived else ''}conversations/{cid}"
    return box.git("rev-parse", ref).strip()


def test_the_kept_rows_answer_without_a_listing_of_the_refs(tmp_path: Path) -> None:
    box, holder, other, gone = three(tmp_path)
    assert from_rows(box, "zebra") == [Located(holder, tip(box, holder), False)]
    both = from_rows(box, "zebra", archived=True)
    assert both == sorted(
        [Located(holder, tip(box, holder), False), Located(gone, tip(box, gone, True), True)],
        key=lambda loc: (not loc.archived, loc.cid),
    )
    assert from_rows(box, "no-such-words") == []
    assert from_rows(box, "ze") is None, "nothing to narrow by: the refs are listed"
    same_as_scan(box, AFTER_CHANGE)
    plain_git_append(box, other, "a zebra that plain git wrote")  # the fingerprint moves
    assert {loc.cid for loc in from_rows(box, "zebra") or []} == {holder, other}
    assert box.json("conversation", "grep", "-l", "plain git wrote") == [other]
    box.git("update-ref", "-d", f"refs/conversations/{holder}")  # and deleted by plain git
    assert from_rows(box, "zebra") == [Located(other, tip(box, other), False)]
    same_as_scan(box, AFTER_CHANGE)


def test_a_kept_row_that_lies_names_nothing_git_does_not_hold(tmp_path: Path) -> None:
    box, holder, other, gone = three(tmp_path)
    expected = box.json("conversation", "grep", "-l", "zebra")
    assert expected == [holder]
    # the other conversation's row claims the holder's tip
    edit(box, "UPDATE listed SET tip = ? WHERE cid = ?", tip(box, holder), other)
    assert from_rows(box, "zebra") is None, "checked against its ref"
    assert box.json("conversation", "grep", "-l", "zebra") == expected
    same_as_scan(box, AFTER_CHANGE)
    # a row for a conversation that does not exist, or an id that is a path
    for cid in ("jp-c17000000099", "../../../HEAD"):
        edit(box, "UPDATE listed SET cid = ?, tip = ? WHERE cid = ?", cid, tip(box, holder), holder)
        assert from_rows(box, "zebra") is None
        assert box.json("conversation", "grep", "-l", "zebra") == expected
        edit(box, "UPDATE listed SET cid = ? WHERE cid = ?", holder, cid)
    # an archived conversation's row says it is live
    edit(box, "UPDATE listed SET archived = 0 WHERE cid = ?", gone)
    assert from_rows(box, "zebra") is None, "a live ref it does not have"
    assert box.json("conversation", "grep", "-l", "zebra") == expected
