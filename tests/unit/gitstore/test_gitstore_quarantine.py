"""``quarantine.replace``: a pull's refused refs kept aside, moved as every ref is
(``update_refs``: one transaction, reflog lines, a stale listing refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitstore.errors import ConcurrentUpdate
from gitstore.git.refs import quarantine
from gitstore.store.core import Store
from tests.unit.gitstore.builders import git, start


def kept(tip: str) -> quarantine.Entry:
    return quarantine.Entry(tip, "a merge commit", True)


def held(path: Path) -> dict[str, str]:
    out = git(path, "for-each-ref", "--format=%(refname) %(objectname)", quarantine.ROOT)
    return dict(line.split() for line in out.splitlines())


def test_replace_makes_the_quarantine_exactly_the_kept_refs(store: Store, path: Path) -> None:
    one = store.log.write_commits([start("jp-c1")], None)[-1]
    two = store.log.write_commits([start("jp-c2")], None)[-1]
    a, b = "refs/conversations/jp-c1", "refs/conversations/jp-c2"
    quarantine.replace(store.place, "origin", {}, {a: kept(one), b: kept(two)})
    qa, qb = quarantine.quarantine_ref("origin", a), quarantine.quarantine_ref("origin", b)
    assert held(path) == {qa: one, qb: two}
    log = git(path, "reflog", "show", "--format=%gs", qa)
    assert log.strip() == "jp pull origin: refused"
    refused_outright = quarantine.Entry(one, "an event over the limit", False)
    quarantine.replace(store.place, "origin", held(path), {a: kept(two), b: refused_outright})
    assert held(path) == {qa: two}, "the kept ref moved, the one no longer kept went"
    assert set(quarantine.recorded(path, "origin")) == {a, b}
    assert not (path / "logs" / qb).exists(), "a deleted ref's reflog goes with it"
    quarantine.replace(store.place, "origin", held(path), {})
    assert held(path) == {}
    assert quarantine.recorded(path, "origin") == {}


def test_replace_from_a_stale_listing_moves_nothing(store: Store, path: Path) -> None:
    one = store.log.write_commits([start("jp-c1")], None)[-1]
    two = store.log.write_commits([start("jp-c2")], None)[-1]
    a, b = "refs/conversations/jp-c1", "refs/conversations/jp-c2"
    quarantine.replace(store.place, "origin", {}, {a: kept(one)})
    before = held(path)
    with pytest.raises(ConcurrentUpdate):  # the listing missed the ref it would create over
        quarantine.replace(store.place, "origin", {}, {a: kept(two), b: kept(two)})
    assert held(path) == before
    assert not list((path / "jp" / "ops").glob("*.json"))
