"""The cache gives back the space an older layout left: once by a copy for a cache
made without incremental vacuum (said first), then by cutting the freed pages off,
while another connection reads its snapshot throughout."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from gitstore.cache import sql
from gitstore.store.core import Store
from tests.unit.gitstore.builders import request, start

OLD_INDEX = "CREATE VIRTUAL TABLE grep_text USING fts5(body, tokenize='trigram')"  # positions


def cache_of(path: Path) -> Path:
    return path / "jp" / "cache.sqlite"


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in cache_of(path).parent.glob("cache.sqlite*"))


def old_index(path: Path, rows: int = 800) -> None:
    """Put an index of an older layout, holding much text, in the store's cache."""
    rng = random.Random(7)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=8)) for _ in range(400)]
    db = sqlite3.connect(cache_of(path), isolation_level=None)
    db.execute("DROP TABLE grep_text")
    db.execute(OLD_INDEX)
    body = [(" ".join(rng.choices(words, k=120)),) for _ in range(rows)]
    db.executemany("INSERT INTO grep_text(body) VALUES (?)", body)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def search(store: Store) -> set[str] | None:
    return store.log.text_candidates([store.refs.require("jp-c1").tip], ["apples"])


@pytest.fixture(autouse=True)
def _small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sql, "LEAST", 256 * 1024)  # what a test can fill in a second
    monkeypatch.setattr(sql, "NOTE_FROM", 0)


def test_an_older_layouts_space_is_given_back_once_said(store: Store, path: Path) -> None:
    store.log.create("jp-c1", [start("jp-c1"), request("apples")], None, "create")
    assert search(store)
    store.close()
    made = sqlite3.connect(cache_of(path), isolation_level=None)  # a cache made before
    assert made.execute("PRAGMA auto_vacuum").fetchone() == (sql.INCREMENTAL,)
    made.execute("PRAGMA auto_vacuum = 0")
    made.execute("VACUUM")
    made.close()
    old_index(path)
    before = size(path)
    told: list[str] = []
    again = Store(path)
    again.local.tell(told.append)
    assert search(again) == {again.refs.require("jp-c1").tip}, "the index made again answers"
    again.close()
    after = size(path)
    assert after < before - 1024 * 1024, (before, after)
    assert len(told) == 1 and "giving back" in told[0], told
    db = sqlite3.connect(cache_of(path))
    assert db.execute("PRAGMA auto_vacuum").fetchone() == (sql.INCREMENTAL,)
    db.close()
    old_index(path)  # the next layout change: the freed pages are cut off, nothing said
    before = size(path)
    third = Store(path)
    third.local.tell(told.append)
    assert search(third) == {third.refs.require("jp-c1").tip}
    third.close()
    assert size(path) < before - 1024 * 1024 and len(told) == 1


def test_a_reader_keeps_its_snapshot_while_the_space_is_given_back(
    store: Store, path: Path
) -> None:
    store.log.create("jp-c1", [start("jp-c1"), request("apples")], None, "create")
    assert search(store)
    store.close()
    old_index(path)
    reader = sqlite3.connect(cache_of(path), isolation_level=None)
    reader.execute("BEGIN")
    held = reader.execute("SELECT count(*) FROM grep_text").fetchone()
    assert held == (800,)
    again = Store(path)
    assert search(again) == {again.refs.require("jp-c1").tip}
    assert reader.execute("SELECT count(*) FROM grep_text").fetchone() == held, "its snapshot"
    reader.execute("COMMIT")
    assert reader.execute("SELECT count(*) FROM events").fetchone()[0] > 0
    again.close()
    assert search(Store(path)) == {Store(path).refs.require("jp-c1").tip}


def test_a_cache_of_another_format_is_made_again_small(store: Store, path: Path) -> None:
    store.log.create("jp-c1", [start("jp-c1"), request("apples")], None, "create")
    assert search(store)
    store.close()
    old_index(path)
    db = sqlite3.connect(cache_of(path), isolation_level=None)
    db.execute("PRAGMA user_version = 4")  # an older format: every table dropped
    db.close()
    before = size(path)
    again = Store(path)
    assert search(again) == {again.refs.require("jp-c1").tip}
    again.close()
    assert size(path) < before - 1024 * 1024
