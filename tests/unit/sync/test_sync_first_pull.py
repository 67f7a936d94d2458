"""A first pull of many conversations: their anchors land in one pack (no loose
file each), and their notes are read in one pass, the same as one at a time."""

from __future__ import annotations

import shutil
from pathlib import Path

import pygit2
import pytest

from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from gitstore.sync import inbound, remotes
from gitstore.sync import notes as syncnotes
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


def create(syncer: Syncer, *cids: str) -> None:
    """Conversations of one event each, in ``syncer``'s store."""
    for cid in cids:
        start = {"type": "conversation_start", "timestamp": "2026-01-05T09:00:00Z",
                 "conversation_id": cid}  # fmt: skip
        syncer.here.log.create(cid, [start], None, "test")


def test_a_first_pull_packs_the_anchors_and_keeps_every_note(
    tmp_path: Path, bare_remote: Remote
) -> None:
    laptop = machine(tmp_path / "laptop", bare_remote.url)
    count = syncnotes.PACKED_AT + 5
    cids = [f"jp-c{n}" for n in range(1, count + 1)]
    create(laptop, *cids)
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


def test_a_pull_checks_what_came_without_libgit2s_object_cache(
    tmp_path: Path, bare_remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks read every new commit once: libgit2 keeps none of them, and its
    cache is on again once the pull is over."""
    laptop = machine(tmp_path / "laptop", bare_remote.url)
    cids = [f"jp-c{n}" for n in range(1, 41)]
    create(laptop, *cids)
    push(laptop)
    desktop = machine(tmp_path / "desktop", bare_remote.url)
    grown: list[int] = []
    screen = inbound.screen

    def watched(*args: object, **kwargs: object) -> inbound.Inbound:
        before = pygit2.settings.cached_memory[0]
        try:
            return screen(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            grown.append(pygit2.settings.cached_memory[0] - before)

    monkeypatch.setattr(inbound, "screen", watched)
    created = [o for o in desktop.pull() if o.action == "created"]
    assert len(created) == len(cids) and grown and max(grown) <= 0, grown
    before = pygit2.settings.cached_memory[0]
    repo = desktop.here.place.repo
    for cid in cids:
        repo.revparse_single(f"refs/conversations/{cid}").peel(pygit2.Commit)
    assert pygit2.settings.cached_memory[0] > before, "cached again after the pull"


def test_a_pull_of_a_few_writes_their_anchors_as_before(
    tmp_path: Path, bare_remote: Remote
) -> None:
    laptop = machine(tmp_path / "laptop", bare_remote.url)
    create(laptop, "jp-c1")
    push(laptop)
    desktop = machine(tmp_path / "desktop", bare_remote.url)
    assert [o.action for o in desktop.pull() if o.kind == "conversation"] == ["created"]
    assert desktop.here.place.repo.get(desktop.here.notes.anchor("jp-c1")) is not None


@pytest.mark.parametrize("count", [3, syncnotes.PACKED_AT + 2])  # created one by one, in bulk
def test_a_first_pull_says_what_each_conversation_continues_without_reading_the_notes(
    tmp_path: Path, bare_remote: Remote, monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    laptop = machine(tmp_path / "laptop", bare_remote.url)
    cids = [f"jp-c{n}" for n in range(1, count + 1)]
    create(laptop, *cids)
    laptop.here.notes.set_meta(cids[0], {"title": "plain"}, "test")
    laptop.here.notes.set_meta(cids[1], {"diverged_from": "jp-c900", "title": "x"}, "test")
    escaped = '{"k": "diverged\\u005ffrom", "m": "m1", "t": 5, "v": "jp-c901"}\n'
    laptop.here.notes.set_note(laptop.here.notes.refs.meta, cids[2], escaped, "test")
    push(laptop)

    desktop = machine(tmp_path / "desktop", bare_remote.url)
    asked: list[list[str]] = []
    real = desktop.here.notes.metas
    monkeypatch.setattr(desktop.here.notes, "metas", lambda c, **k: asked.append(list(c))
                        or real(c, **k))  # fmt: skip
    made = {o.id: o.continues for o in desktop.pull()
            if o.action == "created" and o.kind == "conversation"}  # fmt: skip
    assert asked == []  # the notes step had every note in hand
    assert made[cids[1]] == "jp-c900" and made[cids[2]] == "jp-c901"
    assert made[cids[0]] == "" and all(made[c] == "" for c in cids[3:])
    # the same answer the notes give when read
    values = real(cids, keys=("diverged_from",))
    assert {c: values[c].get("diverged_from", "") for c in cids} == made

    # a later pull that creates one: the store had notes, so they are read to know
    extra = "jp-c800"
    create(laptop, extra)
    laptop.here.notes.set_meta(extra, {"diverged_from": "jp-c902"}, "test")
    push(laptop)
    again = [o for o in Syncer(desktop.here, "origin", desktop.transport).pull()
             if o.action == "created" and o.kind == "conversation"]  # fmt: skip
    assert [(o.id, o.continues) for o in again] == [(extra, None)]
