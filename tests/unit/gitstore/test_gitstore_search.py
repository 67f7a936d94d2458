"""The cache's full-text index: it narrows a search to a superset of the
conversations that match, never loses one, and follows every write."""

from __future__ import annotations

import _sre
import re
import sqlite3
from pathlib import Path

from gitstore.cache import search
from gitstore.store.core import Store
from porcelain.commands.conversation.grep import SCOPES
from porcelain.domain.grepneedles import needles
from tests.unit.gitstore.builders import answer, request, start

_casefix = __import__("re._casefix").__dict__["_casefix"]


def test_fold_gives_one_string_for_every_character_re_matches_ignoring_case() -> None:
    """re matches ``c`` with ``d`` under IGNORECASE when their lowercase forms are
    equal or in one of its extra groups: ``fold`` must agree on each such pair."""
    for c in range(0x110000):
        if 0xD800 <= c < 0xE000:
            continue
        folded = search.fold(chr(c))
        assert len(folded) == 1, hex(c)
        assert search.fold(chr(_sre.unicode_tolower(c))) == folded, hex(c)
    for low, others in _casefix._EXTRA_CASES.items():
        assert len({search.fold(chr(x)) for x in (low, *others)}) == 1, low
    assert search.fold("ΣΑΣ σ") == search.fold("σας ς"), "a final sigma folds as any sigma"
    assert search.fold("İstanbul KELVİN") == search.fold("istanbul kelvin")
    assert "\x00" not in search.fold("a\x00b") and "\ud800" not in search.fold("a\ud800")


def test_every_text_grep_searches_is_indexed() -> None:
    assert sorted(SCOPES.values()) == sorted(search.SEARCHED)


def test_needles_are_what_every_match_holds() -> None:
    def of(pattern: str, flags: int = 0) -> list[str]:
        return needles(re.compile(pattern, flags))

    assert of(re.escape("a.b*c (x)")) == ["a.b*c (x)"]
    assert of("colou?r is nice") == ["colo", "r is nice"]
    assert of("(abc)def[0-9]ghi", re.I) == ["abc", "def", "ghi"]
    assert of("(?x) h e l l o") == ["hello"]
    assert of("foo|barbaz") == [] and of("ab") == [] and of("(?:abc|xyz)") == []
    assert of("(?!abc)xy") == [] and of("a{3}bcd") == ["bcd"]


def candidates(store: Store, *words: str) -> set[str]:
    tips = {loc.tip: loc.cid for loc in store.refs.list()}
    found = store.log.text_candidates(list(tips), list(words))
    assert found is not None, "this SQLite has FTS5: the index answers"
    return {tips[t] for t in found}


def test_the_index_narrows_to_the_conversations_that_hold_the_words(
    store: Store, path: Path
) -> None:
    store.log.create("jp-c1", [start("jp-c1"), request("Apples and pears")], None, "create")
    store.log.create("jp-c2", [start("jp-c2"), request("bananas")], None, "create")
    tip = store.refs.require("jp-c1").tip
    store.log.create("jp-c3", [answer("more apples, in a fork")], tip, "create")
    assert candidates(store, "apples") == {"jp-c1", "jp-c3"}
    assert candidates(store, "APPLES", "pears") == {"jp-c1", "jp-c3"}
    assert candidates(store, "in a fork") == {"jp-c3"}
    assert candidates(store, "zebra") == set()
    store.log.append("jp-c2", [answer("a zebra crossing")], store.refs.require("jp-c2").tip, "q")
    assert candidates(store, "zebra") == {"jp-c2"}, "an append is indexed"
    assert candidates(Store(path), "zebra") == {"jp-c2"}
    assert store.log.text_candidates([tip], ["ab"]) is None, "too short to narrow by"


def test_a_needle_is_confirmed_on_the_text_not_only_its_trigrams(store: Store, path: Path) -> None:
    """The index keeps no positions: every trigram of ``abcdef`` in one event, but
    not the string, is no candidate; an index of the older layout is made again."""
    store.log.create("jp-c1", [start("jp-c1"), request("xabcdy bcdefz")], None, "create")
    store.log.create("jp-c2", [start("jp-c2"), request("the ABCDEF here")], None, "create")
    store.log.create("jp-c3", [start("jp-c3"), request("only abc")], None, "create")
    assert candidates(store, "abcdef") == {"jp-c2"}
    assert candidates(store, "abc") == {"jp-c1", "jp-c2", "jp-c3"}, "one trigram: exact"
    assert candidates(store, "abcd", "cdef") == {"jp-c1", "jp-c2"}, "each needle on its own"
    store.close()
    db = sqlite3.connect(path / "jp" / "cache.sqlite")
    db.execute("DROP TABLE grep_text")
    db.execute("CREATE VIRTUAL TABLE grep_text USING fts5(body, content='')")  # another layout
    db.commit()
    db.close()
    assert candidates(Store(path), "abcdef") == {"jp-c2"}


def test_a_tip_the_cache_does_not_hold_is_read_from_git_first(store: Store, path: Path) -> None:
    store.log.create("jp-c1", [start("jp-c1"), request("apples")], None, "create")
    store.close()
    (path / "jp" / "cache.sqlite").unlink()
    assert candidates(Store(path), "apples") == {"jp-c1"}


def test_a_damaged_index_is_made_again(store: Store, path: Path) -> None:
    store.log.create("jp-c1", [start("jp-c1"), request("apples")], None, "create")
    assert candidates(store, "apples") == {"jp-c1"}
    store.close()
    db = sqlite3.connect(path / "jp" / "cache.sqlite")
    db.execute("DELETE FROM grep_text_data")  # the index's own pages
    db.commit()
    db.close()
    fresh = Store(path)
    tips = [fresh.refs.require("jp-c1").tip]
    first = fresh.log.text_candidates(tips, ["apples"])
    assert first == set(tips), "an index SQLite cannot open is made again, then answers"
    assert candidates(fresh, "apples") == {"jp-c1"}


def test_a_big_write_is_indexed_by_the_next_search_not_by_the_write(
    store: Store, path: Path
) -> None:
    events = [start("jp-c1")] + [request(f"line {n}") for n in range(search.WRITE_MOST + 50)]
    store.log.create("jp-c1", [*events, request("the zebra at the end")], None, "create")
    db = sqlite3.connect(path / "jp" / "cache.sqlite")
    (upto,) = db.execute("SELECT coalesce(max(upto), 0) FROM grep_state").fetchone()
    (top,) = db.execute("SELECT max(rowid) FROM events").fetchone()
    db.close()
    assert upto < top, "the write left its rows to the next search"
    assert candidates(store, "zebra") == {"jp-c1"}
    store.log.append("jp-c1", [answer("one more zebra")], store.refs.require("jp-c1").tip, "q")
    db = sqlite3.connect(path / "jp" / "cache.sqlite")
    assert db.execute("SELECT upto FROM grep_state").fetchone()[0] == top + 1, "a small write"
    db.close()


def _watermark(path: Path) -> tuple[int, int]:
    db = sqlite3.connect(path / "jp" / "cache.sqlite")
    (upto,) = db.execute("SELECT coalesce(max(upto), 0) FROM grep_state").fetchone()
    (top,) = db.execute("SELECT max(rowid) FROM events").fetchone()
    db.close()
    return upto, top


def test_many_small_writes_of_one_store_are_one_big_write_to_the_index(
    store: Store, path: Path
) -> None:
    """An import of many small conversations: the writes of one opened store index
    ``WRITE_MOST`` rows between them, the rest waits for the next search."""
    size = search.WRITE_MOST // 2 + 10  # each write alone is small
    for n in range(1, 5):
        events = [start(f"jp-c{n}")] + [request(f"line {n} {k}") for k in range(size)]
        store.log.create(f"jp-c{n}", [*events, request(f"zebra {n}")], None, "create")
    upto, top = _watermark(path)
    assert 0 < upto <= search.WRITE_MOST < top, "the first write indexed, the later ones waited"
    assert candidates(store, "zebra") == {"jp-c1", "jp-c2", "jp-c3", "jp-c4"}
    assert _watermark(path)[0] == top, "the search indexed the rest"
    fresh = Store(path)  # another command: its own small write is indexed as it is made
    fresh.log.append("jp-c1", [answer("one more zebra")], fresh.refs.require("jp-c1").tip, "q")
    assert _watermark(path)[0] == top + 1


def test_a_text_too_long_to_index_is_always_a_candidate(store: Store) -> None:
    """A pasted blob is not indexed (its trigrams would cost several times its size,
    and fill a small disk): its conversation is read as a scan would read it."""
    blob = "".join(f"{n:x}" for n in range(search.INDEX_MOST)) + " needle-in-blob"
    store.log.create("jp-c1", [start("jp-c1"), request(blob)], None, "create")
    store.log.create("jp-c2", [start("jp-c2"), request("short and plain")], None, "create")
    assert candidates(store, "needle-in-blob") == {"jp-c1"}
    assert candidates(store, "plain") == {"jp-c1", "jp-c2"}, "the long one may hold anything"
