"""A first pull of many conversations: their anchors land in one pack (no loose
file each), and their notes are read in one pass, the same as one at a time."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from gitstore.sync import meta as syncmeta
from gitstore.sync import remotes
from gitstore.sync.here import Here
from gitstore.sync.pull import Syncer
from gitstore.sync.push import push
from gitstore.sync.transport import choose
from tests.support.servers.fixtures import Remote

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="pulled through git")


def machine(path: Path, url: str) -> Syncer:
    init_bare(path)
    store = Store(path)
    remotes.add(store.repo, "origin", url)
    return Syncer(Here.of(store), "origin", choose(store.repo, GIT))


def test_a_first_pull_packs_the_anchors_and_keeps_every_note(
    tmp_path: Path, bare_remote: Remote
) -> None:
    laptop = machine(tmp_path / "laptop", bare_remote.url)
    count = syncmeta.PACKED_AT + 5
    cids = [f"jp-c{n}" for n in range(1, count + 1)]
    for cid in cids:
        start = {"type": "conversation_start", "timestamp": "2026-01-05T09:00:00Z",
                 "conversation_id": cid}  # fmt: skip
        laptop.here.log.create(cid, [start], None, "test")
    laptop.here.notes.set_meta(cids[0], {"title": "first"}, "test")
    laptop.here.notes.set_meta(cids[-1], {"title": "last", "pinned": True}, "test")
    push(laptop)
    desktop = machine(tmp_path / "desktop", bare_remote.url)
    created = {o.id for o in desktop.pull() if o.action == "created" and o.kind == "conversation"}
    assert created == set(cids)
    store = desktop.here
    objects = store.place.gitdir / "objects"
    for cid in cids:
        anchor = store.notes.anchor(cid)
        assert store.place.repo.get(anchor) is not None  # the notes hang on something
        assert not (objects / anchor[:2] / anchor[2:]).exists()  # and it is packed
    many = store.notes.metas(cids)
    assert many == {cid: store.notes.meta(cid) for cid in cids}
    assert many[cids[0]]["title"] == "first" and many[cids[-1]]["pinned"] is True
    assert store.notes.metas([]) == {}


def test_a_pull_of_a_few_writes_their_anchors_as_before(
    tmp_path: Path, bare_remote: Remote
) -> None:
    laptop = machine(tmp_path / "laptop", bare_remote.url)
    start = {"type": "conversation_start", "timestamp": "2026-01-05T09:00:00Z",
             "conversation_id": "jp-c1"}  # fmt: skip
    laptop.here.log.create("jp-c1", [start], None, "test")
    push(laptop)
    desktop = machine(tmp_path / "desktop", bare_remote.url)
    assert [o.action for o in desktop.pull() if o.kind == "conversation"] == ["created"]
    assert desktop.here.place.repo.get(desktop.here.notes.anchor("jp-c1")) is not None
