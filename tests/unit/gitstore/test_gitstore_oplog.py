"""The operation log in process: what an operation records, undo's choice and
compare-and-swap, restore, recovery of a killed command's record, precision
under interleaved writers, retention, and the format version."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from gitstore import undoing as opundo
from gitstore.errors import StoreFormatTooNew
from gitstore.git import refs
from gitstore.oplog import log as oplog
from gitstore.oplog import model as opmodel
from gitstore.oplog import recorder as oprecord
from gitstore.oplog.model import Move, Op
from gitstore.store import format as storeformat
from gitstore.store import maintenance
from gitstore.store.core import Store
from tests.unit.gitstore.builders import git, signature, start, turn

# -- pure: the model ----------------------------------------------------------------------


def op(op_id: str, *moves: Move, undoes: str | None = None) -> Op:
    return Op(op_id, f"jp {op_id}", 0.0, moves=list(moves), undoes=undoes)


def test_coalesce_keeps_the_first_old_and_the_last_new_value_per_ref() -> None:
    moves = [Move("a", "1", "2"), Move("b", None, "x"), Move("a", "2", "3"), Move("b", "x", None)]
    assert opmodel.coalesce(moves) == [Move("a", "1", "3")]  # b came and went


def test_undo_skips_an_undo_together_with_what_it_undid() -> None:
    a, b = op("a", Move("r", "1", "2")), op("b", Move("r", "2", "3"))
    assert opundo.undo_target([b, a]) is b
    ub = op("ub", Move("r", "3", "2"), undoes="b")
    assert opundo.undo_target([ub, b, a]) is a
    ua = op("ua", Move("r", "2", "1"), undoes="a")
    assert opundo.undo_target([ua, ub, b, a]) is None
    c = op("c", Move("r", "1", "9"))
    assert opundo.undo_target([c, ua, ub, b, a]) is c


def test_state_after_takes_each_ref_back_to_the_oldest_later_value() -> None:
    a = op("a", Move("r", None, "1"))
    b = op("b", Move("r", "1", "2"), Move("s", "x", None))
    c = op("c", Move("r", "2", "3"))
    assert opundo.state_after([c, b, a], "a")[0] == {"r": "1", "s": "x"}
    assert opundo.state_after([c, b, a], "b")[0] == {"r": "2"}
    assert opundo.state_after([c, b, a], "c")[0] == {}
    with pytest.raises(KeyError):
        opundo.state_after([c, b, a], "zz")


def test_an_operation_reads_back_as_written() -> None:
    one = Op(
        "abc",
        "jp c rm x",
        5.0,
        started=4.0,
        pid=7,
        host="h",
        active="jp-c1",
        moves=[Move("JP_HEAD", "symbolic:refs/conversations/jp-c1", None)],
        remotes=[opmodel.RemoteChange("o", {"url": "u"}, None)],
        undoes="zz",
        recovered=True,
    )
    assert Op.from_json(one.to_json()) == one


# -- in a store ------------------------------------------------------------------------------


def test_a_command_is_one_operation_with_each_ref_once(store: Store, path: Path) -> None:
    with store.ops.operation("jp q hello"):
        tip = store.log.create("jp-c1", [start("jp-c1")], None, "create")
        mid = store.log.append("jp-c1", turn(1), tip, "turn 1")
        end = store.log.append("jp-c1", turn(2), mid, "turn 2")
        store.notes.set_meta("jp-c1", {"title": "t"}, "title")
        store.refs.set_active("jp-c1")
    (only,) = oplog.ops(store.repo)
    assert only.command == "jp q hello"
    assert only.active == "jp-c1"
    assert {m.ref: (m.old, m.new) for m in only.moves} == {
        refs.live("jp-c1"): (None, end),
        refs.NOTES_META: (None, store.refs.target(refs.NOTES_META)),
        refs.ACTIVE: (None, "symbolic:" + refs.live("jp-c1")),
    }
    assert not oprecord.pending(store.gitdir), "the pending record outlived the command"
    with store.ops.operation("jp c ls"):
        store.refs.list()
    assert len(oplog.ops(store.repo)) == 1, "a command that moved nothing recorded an operation"


def test_a_writer_that_names_what_landed_is_recorded_for_those_refs_alone(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first pull creates thousands of refs in one write that says which it made:
    they are recorded from its word, not looked up one by one."""
    from gitstore.git.refs import transaction
    from gitstore.git.refs.transaction import RefUpdate

    tip = store.log.create("jp-c1", [start("jp-c1")], None, "create")
    wanted = [RefUpdate(refs.live(f"jp-c{i + 10}"), None, tip) for i in range(3)]
    landed: list[str] = []
    looked: list[str] = []
    current = transaction.current
    monkeypatch.setattr(transaction, "current", lambda r, n: looked.append(n) or current(r, n))
    with store.ops.operation("jp pull"), store.ops.moving(wanted, verify=lambda: landed):
        for update in wanted[:2]:  # the third "exists by now": the writer leaves it
            store.repo.references.create(update.name, tip)
            landed.append(update.name)
    (only,) = [o for o in oplog.ops(store.repo) if o.command == "jp pull"]
    assert {m.ref: (m.old, m.new) for m in only.moves} == {
        wanted[0].name: (None, tip),
        wanted[1].name: (None, tip),
    }
    assert not set(looked) & {u.name for u in wanted}, "the moves were looked up one by one"


def test_undo_refuses_a_ref_moved_since_and_force_overwrites(store: Store) -> None:
    with store.ops.operation("jp new"):
        tip = store.log.create("jp-c1", [start("jp-c1")], None, "create")
    with store.ops.operation("jp archive"):
        store.refs.archive("jp-c1", "archive")
    with store.ops.operation("jp q"):  # outside the log's knowledge: moved by hand below
        pass
    other = store.log.write_commits(turn(1), tip)[-1]
    store.repo.references[refs.archived("jp-c1")].set_target(other)
    with store.ops.operation("jp undo"), pytest.raises(opundo.UndoConflict) as caught:
        opundo.undo(store)
    found = caught.value
    assert (found.ref, found.expected, found.actual) == (refs.archived("jp-c1"), tip, other)
    assert store.refs.require("jp-c1").archived, "a refused undo moved something"
    with store.ops.operation("jp undo --force"):
        opundo.undo(store, force=True)
    assert store.refs.require("jp-c1") == store.refs.locate("jp-c1")
    assert not store.refs.require("jp-c1").archived and store.refs.require("jp-c1").tip == tip


def test_restore_returns_to_the_state_after_an_operation(store: Store) -> None:
    with store.ops.operation("jp new"):
        store.log.create("jp-c1", [start("jp-c1")], None, "create")
    with store.ops.operation("jp edit one"):
        store.notes.set_meta("jp-c1", {"title": "one"}, "t")
    first = oplog.ops(store.repo)[0].id
    with store.ops.operation("jp edit two"):
        store.notes.set_meta("jp-c1", {"title": "two"}, "t")
    with store.ops.operation("jp rm"):
        store.refs.delete("jp-c1", "rm")
    with store.ops.operation("jp op restore"):
        opundo.restore(store, first[:6])
    assert store.notes.meta("jp-c1")["title"] == "one"
    newest = oplog.ops(store.repo)[0]
    assert newest.restores == first
    with store.ops.operation("jp undo"):
        opundo.undo(store)
    assert not store.refs.exists("jp-c1"), "undoing the restore brings back the state before it"
    with pytest.raises(opundo.UnknownOperation):
        opundo.restore(store, "nothing-like-this")


def test_interleaved_writers_each_record_only_their_own_refs(path: Path) -> None:
    one, two = Store(path), Store(path)
    one.ops.begin("jp q one")
    two.ops.begin("jp q two")
    a = one.log.create("jp-c1", [start("jp-c1")], None, "c1")
    b = two.log.create("jp-c2", [start("jp-c2")], None, "c2")
    one.log.append("jp-c1", turn(1), a, "t")
    two.log.append("jp-c2", turn(1), b, "t")
    two.ops.end()
    one.ops.end()
    ops = {o.command: [m.ref for m in o.moves] for o in oplog.ops(one.repo)}
    assert ops == {"jp q one": [refs.live("jp-c1")], "jp q two": [refs.live("jp-c2")]}


def _killed_archive(path: Path) -> None:
    """In a child process: create and archive jp-c1, then die before the command ends."""
    pid = os.fork()
    if pid == 0:
        try:
            killed = Store(path)
            killed.ops.begin("jp c archive jp-c1")
            tip = killed.log.create("jp-c1", [start("jp-c1")], None, "create")
            killed.refs.archive("jp-c1", "archive")
            (path / "tip").write_text(tip)
        finally:
            os._exit(0)  # no end_operation: what a kill leaves
    os.waitpid(pid, 0)


def test_a_killed_commands_record_is_completed_by_the_next_store(path: Path) -> None:
    _killed_archive(path)
    tip = (path / "tip").read_text()
    (record,) = oprecord.folder(path).glob("*.pending")
    text = record.read_text()
    assert oplog.ops(Store(path, repair=False).repo) == []
    store = Store(path)  # the next command opens the store
    (found,) = oplog.ops(store.repo)
    assert found.recovered and found.command == "jp c archive jp-c1"
    assert found.moves == [Move(refs.archived("jp-c1"), None, tip)]
    assert not record.exists()
    Store(path)
    assert len(oplog.ops(store.repo)) == 1, "recorded twice"
    # a record whose last move never happened (killed just before it) leaves it out
    intent = json.dumps({"g": 9, "u": [["refs/conversations/jp-c9", None, tip]]}) + "\n"
    rebuilt = oprecord.rebuild(store.repo, text + intent)
    assert rebuilt is not None and rebuilt.moves == found.moves
    # a move that failed is left out even when more follow
    failed = json.dumps({"g": 1, "u": [["refs/conversations/jp-c8", None, tip]]}) + "\n"
    failed += '{"f": 1}\n'
    rebuilt = oprecord.rebuild(store.repo, text.splitlines()[0] + "\n" + failed + intent)
    assert rebuilt is None


def test_deleted_tips_stay_reachable_from_the_log(store: Store, path: Path) -> None:
    with store.ops.operation("jp new"):
        tip = store.log.create("jp-c1", [start("jp-c1"), *turn(1)], None, "create")
    with store.ops.operation("jp rm"):
        store.refs.delete("jp-c1", "rm")
    git(path, "reflog", "expire", "--expire=now", "--all")
    git(path, "gc", "--prune=now", "--quiet")
    assert git(path, "cat-file", "-t", tip).strip() == "commit"
    with store.ops.operation("jp undo"):
        opundo.undo(store)
    assert store.log.load("jp-c1").tip == tip
    git(path, "fsck", "--strict")


def test_many_tips_hang_from_keeper_commits(store: Store, path: Path) -> None:
    tips = store.log.write_commits([start(f"jp-c{n}", n) for n in range(oplog.KEEP * 2 + 5)], None)
    moves = [Move(f"refs/conversations/jp-c{n}", None, t) for n, t in enumerate(tips)]
    commit, _ = oplog.write(store.repo, Op("big", "jp pull", time.time(), moves=moves), signature())
    parents = git(path, "rev-list", "--parents", "-n", "1", commit).split()[1:]
    assert len(parents) <= oplog.KEEP
    reachable = set(git(path, "rev-list", commit).split())
    assert set(tips) <= reachable
    assert [o.id for o in oplog.ops(store.repo)] == ["big"]


def test_only_the_commits_an_operation_names_hang_from_it(store: Store, path: Path) -> None:
    """Told from each object's header: a blob, a missing id and a symbolic value
    are named in the record but kept by nothing."""
    tip = store.log.write_commits([start("jp-c1")], None)[-1]
    blob = git(path, "hash-object", "-w", "--stdin", input="not a commit").strip()
    moves = [
        Move(refs.live("jp-c1"), "1" * 40, tip),
        Move("refs/jp/elsewhere", None, blob),
        Move("JP_HEAD", None, "ref: refs/conversations/jp-c1"),
    ]
    commit, _ = oplog.write(store.repo, Op("few", "jp x", time.time(), moves=moves), signature())
    assert git(path, "rev-list", "--parents", "-n", "1", commit).split()[1:] == [tip]
    assert [m.new for m in oplog.ops(store.repo)[0].moves] == [tip, blob, moves[2].new]


def test_retention_drops_old_operations_and_keeps_the_rest(store: Store, path: Path) -> None:
    day = 86400.0
    now = time.time()
    old_tip = store.log.write_commits([start("jp-c1")], None)[-1]
    new_tip = store.log.write_commits([start("jp-c2")], None)[-1]
    sig = signature()
    oplog.write(
        store.repo,
        Op("old", "jp old", now - 100 * day, moves=[Move(refs.live("jp-c1"), None, old_tip)]),
        sig,
    )
    oplog.write(
        store.repo,
        Op("new", "jp new", now - day, moves=[Move(refs.live("jp-c2"), None, new_tip)]),
        sig,
    )
    assert oplog.oldest_time(store.repo) == pytest.approx(now - 100 * day)
    assert maintenance.trim_oplog(store.place, 200 * day, now) == 0
    assert maintenance.trim_oplog(store.place, 90 * day, now) == 1
    assert [o.id for o in oplog.ops(store.repo)] == ["new"]
    reachable = set(git(path, "rev-list", oplog.REF).split())
    assert new_tip in reachable and old_tip not in reachable
    assert oplog.oldest_time(store.repo) == pytest.approx(now - day)
    git(path, "fsck", "--strict")
    # after an operation, a log a day past its retention is trimmed (the store's retention)
    git(path, "update-ref", "-d", oplog.REF)
    oplog.write(store.repo, Op("older", "jp x", now - 400 * day), sig)
    store.ops.retention = lambda: 30 * day
    with store.ops.operation("jp c edit"):
        store.notes.set_meta("jp-c2", {"title": "t"}, "t")
    assert [o.command for o in oplog.ops(store.repo)] == ["jp c edit"]


def test_a_newer_store_format_is_refused_before_anything_is_read(path: Path) -> None:
    assert storeformat.read(path) == storeformat.FORMAT, "init records the format"
    git(path, "config", "jp.format", str(storeformat.FORMAT + 1))
    with pytest.raises(StoreFormatTooNew) as caught:
        Store(path)
    assert (caught.value.found, caught.value.supported) == (str(storeformat.FORMAT + 1), 1)
    git(path, "config", "--unset", "jp.format")
    older = Store(path)
    assert older.format is None
    with older.ops.operation("jp new"):
        older.log.create("jp-c1", [start("jp-c1")], None, "create")
    assert storeformat.read(path) == storeformat.FORMAT, "the first write records the format"


def test_a_held_conversation_names_its_owner(store: Store) -> None:
    from gitstore.errors import ConversationBusy

    other = Store(store.path)
    with (
        store.refs.hold("jp-c1"),
        pytest.raises(ConversationBusy) as caught,
        other.refs.hold("jp-c1"),
    ):
        pass
    assert caught.value.owner == f"pid {os.getpid()} on {os.uname().nodename}"


def test_the_next_operation_reads_when_the_log_began_from_one_small_file(
    store: Store, path: Path
) -> None:
    """``since`` beside ``op.json``: an operation after a first pull of many refs reads
    it, not the list of every ref; a log an older jp wrote (no such file) still tells."""
    sig, now = signature(), time.time()
    tips = store.log.write_commits([start(f"jp-c{n}", n) for n in range(50)], None)
    moves = [Move(f"refs/conversations/jp-c{n}", None, t) for n, t in enumerate(tips)]
    first, _ = oplog.write(store.repo, Op("first", "jp pull", now - 50, moves=moves), sig)
    assert float(git(path, "cat-file", "blob", f"{first}:since")) == pytest.approx(now - 50)
    for k, name in enumerate(("second", "third")):
        later, _ = oplog.write(store.repo, Op(name, "jp x", now - 10 + k), sig)
        assert float(git(path, "cat-file", "blob", f"{later}:since")) == pytest.approx(now - 50)
    assert [o.since for o in oplog.ops(store.repo)] == [pytest.approx(now - 50)] * 3
    # the log as an older jp wrote it: op.json alone, the oldest recorded 9 days ago
    old = Op("old", "jp y", now - 5, since=now - 9 * 86400)
    blob = git(path, "hash-object", "-w", "--stdin", input=json.dumps(old.to_json())).strip()
    tree = git(path, "mktree", input=f"100644 blob {blob}\top.json\n").strip()
    commit = git(path, "commit-tree", tree, "-p", later, "-m", "jp op old: jp y").strip()
    git(path, "update-ref", oplog.REF, commit)
    newest, _ = oplog.write(store.repo, Op("newest", "jp z", now), sig)
    assert [o.id for o in oplog.ops(store.repo)] == ["newest", "old", "third", "second", "first"]
    assert float(git(path, "cat-file", "blob", f"{newest}:since")) == pytest.approx(old.since)
    git(path, "fsck", "--strict")
