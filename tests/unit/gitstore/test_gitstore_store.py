"""gitstore.store: create, append (compare-and-swap), fork, archive, delete, JP_HEAD."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from gitstore import faults
from gitstore.errors import (
    ConversationBusy,
    ConversationExists,
    ConversationNotFound,
    InvalidId,
    StaleTip,
)
from gitstore.git import refs
from gitstore.store.core import Store
from tests.unit.gitstore.builders import git, request, start, turn


def reflog(path: Path, ref: str) -> list[str]:
    return git(path, "reflog", "show", "--format=%gs", ref).splitlines()


def test_create_publishes_a_chain_and_an_anchor(store: Store, path: Path) -> None:
    events = [start("jp-c1"), *turn(1)]
    tip = store.log.create("jp-c1", events, None, "test create")
    assert store.refs.list() == [store.refs.locate("jp-c1")]
    conv = store.log.load("jp-c1")
    assert conv.events == events and conv.tip == tip and not conv.archived
    assert len(conv.commits) == 4 and conv.commits[-1] == tip
    assert git(path, "rev-list", "--count", tip).strip() == "4"
    anchor = git(path, "hash-object", "--stdin", input="jp-conversation jp-c1\n").strip()
    assert store.notes.anchor("jp-c1") == anchor
    assert git(path, "cat-file", "-p", anchor) == "jp-conversation jp-c1\n", "the anchor is stored"
    assert reflog(path, refs.live("jp-c1")) == ["test create"]
    with pytest.raises(ConversationExists):
        store.log.create("jp-c1", [start("jp-c1")], None, "again")
    with pytest.raises(InvalidId):
        store.log.create("../../HEAD", [start("x")], None, "bad")
    with pytest.raises(ValueError):
        store.log.create("jp-c2", [], None, "empty")
    assert store.log.load("jp-c1").tip == tip


def test_append_moves_the_ref_only_from_the_expected_tip(store: Store, path: Path) -> None:
    tip = store.log.create("jp-c1", [start("jp-c1")], None, "create")
    new = store.log.append("jp-c1", turn(1), tip, "first turn")
    assert store.refs.require("jp-c1").tip == new
    assert git(path, "rev-parse", f"{new}~3").strip() == tip
    with pytest.raises(StaleTip) as caught:
        store.log.append("jp-c1", turn(2), tip, "stale")
    assert (caught.value.expected, caught.value.actual) == (tip, new)
    assert store.refs.require("jp-c1").tip == new, "a stale append moved nothing"
    assert store.log.append("jp-c1", [], new, "nothing") == new
    with pytest.raises(ConversationNotFound):
        store.log.append("jp-c9", turn(1), tip, "missing")
    assert reflog(path, refs.live("jp-c1"))[0] == "first turn"


def test_append_loses_nothing_to_a_writer_in_between(store: Store, path: Path) -> None:
    tip = store.log.create("jp-c1", [start("jp-c1")], None, "create")
    other = Store(path)
    raced: list[bool] = []

    def race(point: str) -> None:
        if point == "append:objects-written" and not raced:
            raced.append(True)  # before the call: the other append reaches this point too
            other.log.append("jp-c1", [request("OTHER WRITER")], tip, "other")

    faults.install(race)
    with pytest.raises(StaleTip):  # refusing is right; overwriting would lose OTHER WRITER
        store.log.append("jp-c1", [request("MINE")], tip, "mine")
    faults.install(None)
    assert raced
    contents = [e.get("content") for e in Store(path).log.load("jp-c1").events]
    assert "OTHER WRITER" in contents


def test_append_anyway_retries_on_a_moved_tip(store: Store) -> None:
    store.log.create("jp-c1", [start("jp-c1")], None, "create")
    store.log.append_anyway("jp-c1", [request("one")], "reason")
    store.log.append_anyway("jp-c1", [request("two")], "reason")
    assert [e.get("content") for e in store.log.load("jp-c1").events] == [None, "one", "two"]


def test_fork_is_one_commit_on_the_source(store: Store, path: Path) -> None:
    tip = store.log.create("jp-c1", [start("jp-c1"), *turn(1)], None, "create")
    fork_tip = store.log.create(
        "jp-c2",
        [start("jp-c2", forked_from={"conversation_id": "jp-c1", "commit": tip})],
        tip,
        "fork",
    )
    assert git(path, "rev-parse", f"{fork_tip}^").strip() == tip
    assert git(path, "merge-base", tip, fork_tip).strip() == tip
    fork = store.log.load("jp-c2")
    assert fork.events[:4] == store.log.load("jp-c1").events
    assert fork.events[-1]["forked_from"]["conversation_id"] == "jp-c1"
    store.log.append("jp-c2", turn(2), fork_tip, "more")
    assert store.refs.require("jp-c1").tip == tip, "appending to the fork leaves the source"


def test_archive_unarchive_and_delete_move_refs(store: Store, path: Path) -> None:
    tip = store.log.create("jp-c1", [start("jp-c1")], None, "create")
    store.log.create("jp-c2", [start("jp-c2")], None, "create")
    store.refs.archive("jp-c1", "jp conversation archive jp-c1")
    assert git(path, "for-each-ref", "--format=%(refname)").split() == [
        "refs/archive/conversations/jp-c1",
        "refs/conversations/jp-c2",
    ]
    located = store.refs.locate("jp-c1")
    assert located is not None and located.archived and located.tip == tip
    assert [loc.cid for loc in store.refs.list(archived=True)] == ["jp-c1"]
    assert [loc.cid for loc in store.refs.list(archived=None)] == ["jp-c1", "jp-c2"]
    assert store.log.load("jp-c1").archived
    assert reflog(path, refs.archived("jp-c1")) == ["jp conversation archive jp-c1"]
    store.refs.archive("jp-c1", "again")  # archiving twice is harmless
    store.refs.unarchive("jp-c1", "back")
    assert not store.refs.require("jp-c1").archived
    assert not (path / "jp" / "ops").exists() or not list((path / "jp" / "ops").iterdir())
    store.refs.delete("jp-c1", "rm")
    assert store.refs.locate("jp-c1") is None
    assert git(path, "cat-file", "-t", tip).strip() == "commit", "objects stay until gc"
    with pytest.raises(ConversationNotFound):
        store.log.load("jp-c1")
    with pytest.raises(ConversationNotFound):
        store.refs.archive("jp-c1", "gone")


def test_refs_skip_names_that_are_not_ids(store: Store, path: Path) -> None:
    tip = store.log.create("jp-c1", [start("jp-c1")], None, "create")
    git(path, "update-ref", "refs/conversations/not-an-id", tip)
    git(path, "update-ref", "refs/heads/main", tip)
    assert [loc.cid for loc in store.refs.list(archived=None)] == ["jp-c1"]


def test_the_active_conversation_is_a_symbolic_ref(store: Store, path: Path) -> None:
    assert store.refs.active() is None
    store.log.create("jp-c1", [start("jp-c1")], None, "create")
    store.refs.set_active("jp-c1")
    assert git(path, "symbolic-ref", "JP_HEAD").strip() == "refs/conversations/jp-c1"
    assert store.refs.active() == "jp-c1"
    head = (path / "HEAD").read_text()
    store.refs.set_active(None)
    assert store.refs.active() is None
    store.refs.set_active(None)
    assert (path / "HEAD").read_text() == head, "HEAD is never touched"


def test_hold_is_exclusive_across_stores(store: Store, path: Path) -> None:
    other = Store(path)
    with store.refs.hold("jp-c1"), pytest.raises(ConversationBusy), other.refs.hold("jp-c1", wait=0.1):
        pass
    with other.refs.hold("jp-c1"):
        pass  # released when the first holder left


def test_a_store_opens_only_git_repositories(tmp_path: Path) -> None:
    from gitstore.errors import StoreError

    with pytest.raises(StoreError):
        Store(tmp_path / "missing")
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(StoreError):
        Store(plain)
    pygit2.init_repository(str(tmp_path / "bare.git"), bare=True)
    assert Store(tmp_path / "bare.git").refs.list() == []


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "chat_request", "timestamp": "2026-01-05T09:00:00.000000Z", "content": 5},
        {
            "type": "compaction",
            "timestamp": "2026-01-05T09:00:00.000000Z",
            "from_turn": -1,
            "to_turn": 0,
        },
        {"type": "chat_response", "timestamp": "not a date", "message": "x"},
    ],
    ids=["content", "negative-turn", "timestamp"],
)
def test_append_refuses_invalid_events(store: Store, bad: dict[str, object]) -> None:
    from gitstore.errors import InvalidEvent

    tip = store.log.create("jp-c1", [start("jp-c1")], None, "create")
    with pytest.raises(InvalidEvent):
        store.log.append("jp-c1", [bad], tip, "bad")
    assert store.refs.require("jp-c1").tip == tip


def test_what_the_store_records_is_dated_by_its_clock(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from gitstore import activity
    from gitstore.clock import FixedClock
    from gitstore.store.repo import init_store

    at = datetime(2030, 5, 6, 7, 8, 9, tzinfo=UTC)
    path = tmp_path / "clocked.git"
    init_store(path)
    store = Store(path, clock=FixedClock(at))
    with store.ops.operation("jp test"):
        store.log.create(
            "jp-c19000000001",
            [{"type": "turn_start", "timestamp": "2026-01-01T00:00:00Z"}],
            None,
            "new",
        )
    activity.record_activation(store, "jp-c19000000001")
    store.notes.set_meta("jp-c19000000001", {"title": "T"}, "title")
    op = store.ops.list(1)[0]
    assert op.time == op.started == at.timestamp()
    assert activity.activations(store) == {"jp-c19000000001": at.timestamp()}
    note = store.notes.note(store.notes.refs.meta, "jp-c19000000001") or ""
    assert f'"t":{int(at.timestamp() * 1000)}' in note.replace(" ", "")


def test_an_object_write_spoiled_by_a_prune_is_written_again() -> None:
    """git's prune removed `objects/XX/` between libgit2's mkdir and rename."""
    from gitstore.git import pruned

    calls: list[int] = []

    def write() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise pygit2.GitError("failed to rename lockfile to '/x/objects/ab/cd': No such file")
        return "written"

    assert pruned.write(write) == "written" and len(calls) == 2


def test_a_written_object_gone_with_its_folder_is_named_as_a_prune(store: Store) -> None:
    from gitstore.errors import EnvironmentFault
    from gitstore.fs import diskfault

    missing = "ab" + "0" * 38  # its folder objects/ab/ is not there: pruned away
    with pytest.raises(EnvironmentFault) as caught:
        diskfault.check_written(store.place, missing)
    assert caught.value.kind == "pruned"


def test_a_lock_left_on_a_notes_ref_is_named_as_a_lock(store: Store, path: Path) -> None:
    """A killed writer's lock on a ref that ``intake.land`` moves (a note, an
    operation record) is not another writer getting ahead: it is named as a lock."""
    from gitstore.errors import LockedRef, RefBusy

    store.log.create("jp-c1", [start("jp-c1")], None, "create")
    store.notes.set_meta("jp-c1", {"title": "one"}, "title")
    name = next(n for n in store.repo.references if n.startswith("refs/notes/"))
    (path / f"{name}.lock").write_text("0" * 40 + "\n")  # its writer was killed
    with pytest.raises((RefBusy, LockedRef), match=r"\.lock exists"):
        store.notes.set_meta("jp-c1", {"title": "two"}, "title")
