"""`jp serve`'s list in its default order reads one page of the cache's kept rows
(as `ls --limit` does), and every page is the one cut from the whole list that
the filters' path makes: live, archived and every conversation, pages past the
end, after a store changed under it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gitstore.store.core import Store
from porcelain.serve.pages import listing as list_page
from tests.e2e.test_grep_index import plain_git_append
from tests.reliability.harness import Sandbox

pytestmark = pytest.mark.e2e

KINDS: list[dict[str, list[str]]] = [{}, {"archived": ["1"]}, {"all": ["1"]}]


def whole(store: Store, query: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The list as the filters' path makes it: every row, then ordered."""
    return list_page.rows_for(store, query)[0]


def pages_match(store: Store, size: int) -> None:
    for kind in KINDS:
        every = whole(store, kind)
        pages = max(1, -(-len(every) // size))
        for page in range(1, pages + 2):  # and one past the end: the last page again
            query = {**kind, "per_page": [str(size)], "page": [str(page)]}
            shown = list_page.shown(store, query)
            at = min(page, pages)
            assert (shown.page, shown.pages, shown.total) == (at, pages, len(every)), kind
            assert shown.rows == every[(at - 1) * size : at * size], (kind, page)


def test_every_page_is_the_whole_lists_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    made = [box.new(f"conversation number {n}") for n in range(7)]
    box.ok("conversation", "edit", made[1], "--pin", "--title", "Pinned one")
    box.ok("conversation", "archive", made[2])
    box.ok("conversation", "archive", made[5])
    box.ok("conversation", "use", made[3])
    store = Store(box.store)
    for size in (1, 3, 100):
        pages_match(store, size)
    before = next(r for r in whole(store, {}) if r["id"] == made[0])["events"]
    plain_git_append(box, made[0], "plain git wrote")  # a tip moved behind jp's back
    box.ok("conversation", "edit", made[4], "--title", "Renamed")
    store = Store(box.store)
    pages_match(store, 2)
    first = list_page.shown(store, {"per_page": ["2"]}).rows
    moved = list_page.shown(store, {"per_page": ["100"]}).rows
    assert next(r for r in moved if r["id"] == made[0])["events"] == before + 1

    def every_row(*_args: object) -> None:
        raise AssertionError("the default list made every row")

    monkeypatch.setattr(list_page, "listing", every_row)  # only the filters' path makes rows
    again = list_page.shown(Store(box.store), {"per_page": ["2"]})
    assert again.rows == first and again.total == 5
    html = str(list_page.page(Store(box.store), {"per_page": ["2"]}))
    assert "5 conversations" in html and "page 1 of 3" in html
