"""Notes on anchors: compare-and-swap writes, fan-out reading, metadata LWW and union."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import pygit2
import pytest

from gitstore import ids
from gitstore.clock import FixedClock
from gitstore.git import objects, refs
from gitstore.store import notes
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from tests.unit.gitstore.builders import git, signature, start


def test_a_note_is_readable_with_plain_git(store: Store, path: Path) -> None:
    store.log.create("jp-c2", [start("jp-c2")], None, "create")
    store.notes.set_note(refs.NOTES_SOURCE, "jp-c2", "jp-c1\n", "jp: review jp-c2 of jp-c1")
    shown = git(path, "notes", "--ref=source", "show", store.notes.anchor("jp-c2"))
    assert shown == "jp-c1\n"
    assert store.notes.note(refs.NOTES_SOURCE, "jp-c2") == "jp-c1\n"
    assert store.notes.source_of("jp-c2") == "jp-c1"
    assert store.notes.sources() == {store.notes.anchor("jp-c2"): "jp-c1"}
    assert store.notes.source_of("jp-c1") is None
    store.notes.set_note(refs.NOTES_SOURCE, "jp-c2", None, "remove")
    assert store.notes.note(refs.NOTES_SOURCE, "jp-c2") is None
    assert store.notes.sources() == {}


def test_sources_ignore_notes_that_are_not_ids(store: Store) -> None:
    store.notes.set_note(refs.NOTES_SOURCE, "jp-c3", "../../HEAD\n", "bad")
    store.notes.set_note(refs.NOTES_SOURCE, "jp-c4", "\n", "empty")
    assert store.notes.source_of("jp-c3") is None and store.notes.source_of("jp-c4") is None
    assert store.notes.sources() == {}


def test_update_retries_when_another_writer_moves_the_notes_ref(store: Store, path: Path) -> None:
    other = Store(path)
    calls: list[int] = []
    target = store.notes.anchor("jp-c1")

    def change(current: dict[str, str]) -> dict[str, str | None]:
        calls.append(len(current))
        if len(calls) == 1:  # another process writes its note right now
            other.notes.set_note(refs.NOTES_SOURCE, "jp-c9", "jp-c8\n", "other")
        return {target: "jp-c7\n"}

    notes.update(store.repo, refs.NOTES_SOURCE, change, signature(), "mine")
    assert calls == [0, 1], "the change was computed again on the moved ref"
    assert store.notes.source_of("jp-c1") == "jp-c7"
    assert store.notes.source_of("jp-c9") == "jp-c8", "the other writer's note survived"
    log = git(path, "log", "--format=%s", refs.NOTES_SOURCE).split("\n")
    assert log[:2] == ["mine", "other"]


def test_fan_out_trees_written_by_git_are_read_and_kept(store: Store) -> None:
    repo = store.repo
    anchor = store.notes.anchor("jp-c5")
    blob = repo.create_blob(b"jp-c4\n")
    inner = repo.TreeBuilder()
    inner.insert(anchor[2:], blob, pygit2.GIT_FILEMODE_BLOB)
    outer = repo.TreeBuilder()
    outer.insert(anchor[:2], inner.write(), pygit2.GIT_FILEMODE_TREE)
    repo.create_commit(refs.NOTES_SOURCE, signature(), signature(), "fan-out", outer.write(), [])
    assert store.notes.source_of("jp-c5") == "jp-c4"
    assert store.notes.sources() == {anchor: "jp-c4"}
    store.notes.set_note(refs.NOTES_SOURCE, "jp-c6", "jp-c4\n", "flat one")
    assert store.notes.source_of("jp-c5") == "jp-c4" and store.notes.source_of("jp-c6") == "jp-c4"


def test_metadata_newest_value_wins_and_none_unsets(store: Store) -> None:
    store.clock = Ticks([1000.0, 1001.0, 1002.0])
    store.notes.set_meta(
        "jp-c1", {"title": "First", "pinned_at": "2026-01-01T00:00:00.000000Z"}, "a"
    )
    store.notes.set_meta("jp-c1", {"title": "Second"}, "b")
    store.notes.set_meta("jp-c1", {"pinned_at": None}, "c")
    assert store.notes.meta("jp-c1") == {"title": "Second"}
    lines = [
        json.loads(line) for line in (store.notes.note(refs.NOTES_META, "jp-c1") or "").splitlines()
    ]
    assert [(x["k"], x["t"]) for x in lines] == [
        ("title", 1000000),
        ("pinned_at", 1000000),
        ("title", 1001000),
        ("pinned_at", 1002000),
    ]
    assert {x["m"] for x in lines} == {store.notes.machine}
    assert store.notes.meta("jp-c2") == {}


def test_the_later_of_two_writes_in_one_millisecond_wins(
    store: Store,
) -> None:
    store.clock = FixedClock(datetime.fromtimestamp(1000.0, UTC))
    store.notes.set_meta("jp-c1", {"title": "Older"}, "a")
    store.notes.set_meta("jp-c1", {"title": "Newer"}, "b")
    assert store.notes.meta("jp-c1")["title"] == "Newer"


def test_metadata_from_two_machines_merges_by_union(tmp_path: Path) -> None:
    here = "\n".join(
        [
            notes.meta_line("title", "Laptop title", 2000, "aaaa"),
            notes.meta_line("pinned_at", "2026-01-02T00:00:00.000000Z", 1000, "aaaa"),
        ]
    )
    there = "\n".join(
        [
            notes.meta_line("title", "Desktop title", 1500, "bbbb"),
            notes.meta_line("labels", {"area": "cli"}, 1700, "bbbb"),
            notes.meta_line("pinned_at", None, 3000, "bbbb"),
        ]
    )
    merged = notes.union(here, there)
    assert merged == notes.union(there, here), "the union does not depend on the order"
    assert merged.endswith("\n") and len(merged.splitlines()) == 5
    assert notes.union(merged, here) == merged, "idempotent"
    assert notes.meta_values(merged) == {"title": "Laptop title", "labels": {"area": "cli"}}
    tie = notes.union(
        notes.meta_line("title", "from aaaa", 5000, "aaaa"),
        notes.meta_line("title", "from bbbb", 5000, "bbbb"),
    )
    assert notes.meta_values(tie)["title"] == "from bbbb", "ties go to the larger machine id"
    assert notes.meta_values("garbage\n{}\n" + notes.meta_line("k", 1, 1, "m")) == {"k": 1}
    assert notes.meta_values(None) == {}


def test_git_merges_metadata_notes_by_union(tmp_path: Path) -> None:
    path = tmp_path / "s.git"
    init_bare(path)
    assert git(path, "config", "notes.meta.mergeStrategy").strip() == "cat_sort_uniq"
    machine = git(path, "config", "jp.machine").strip()
    assert machine and Store(path).notes.machine == machine


def test_long_metadata_notes_are_compacted_to_the_newest_line_per_key(
    store: Store,
) -> None:
    store.clock = Ticks(float(1000 + i) for i in range(100))
    for n in range(30):
        store.notes.set_meta("jp-c1", {"title": f"title {n}"}, "edit")
    store.notes.set_meta("jp-c1", {"pinned_at": "2026-01-01T00:00:00.000000Z"}, "pin")
    lines = (store.notes.note(refs.NOTES_META, "jp-c1") or "").splitlines()
    assert len(lines) <= 21
    assert store.notes.meta("jp-c1") == {
        "title": "title 29",
        "pinned_at": "2026-01-01T00:00:00.000000Z",
    }
    text = "".join(notes.meta_line("k", n, n, "m") + "\n" for n in range(25))
    assert notes.compact_meta(text) == notes.meta_line("k", 24, 24, "m") + "\n"
    assert notes.compact_meta("short\n") == "short\n"


def test_the_first_note_logs_its_reason(store: Store, path: Path) -> None:
    store.notes.set_meta("jp-c1", {"title": "T"}, "jp conversation edit jp-c1")
    assert git(path, "reflog", "show", "--format=%gs", refs.NOTES_META).splitlines() == [
        "jp conversation edit jp-c1"
    ]


def test_every_notes_reflog_entry_starts_with_the_command(store: Store, path: Path) -> None:
    store.notes.set_meta("jp-c1", {"title": "T"}, "jp conversation edit jp-c1")
    store.notes.set_meta("jp-c1", {"title": "U"}, "jp conversation edit jp-c1 again")
    log = git(path, "reflog", "show", "--format=%gs", refs.NOTES_META).splitlines()
    assert log == ["jp conversation edit jp-c1 again", "jp conversation edit jp-c1"]


# -- fan-out layout ------------------------------------------------------------------


def tree_paths(path: Path, ref: str) -> list[str]:
    """Every blob path in the notes tree at ``ref``, as git lists it."""
    return git(path, "ls-tree", "-r", "--name-only", ref).split()


def flat_notes(store: Store, ref: str, texts: dict[str, str]) -> None:
    """A notes commit whose tree is flat, as older jp wrote it."""
    repo = store.repo
    builder = repo.TreeBuilder()
    for target, text in texts.items():
        builder.insert(target, repo.create_blob(text.encode()), pygit2.GIT_FILEMODE_BLOB)
    repo.create_commit(ref, signature(), signature(), "flat", builder.write(), [])


def test_notes_are_written_fanned_out_and_plain_git_reads_them(store: Store, path: Path) -> None:
    cids = [f"jp-c{n}" for n in range(1, 8)]
    for n, cid in enumerate(cids):
        store.notes.set_meta(cid, {"title": f"T{n}"}, "title")
    anchors = {store.notes.anchor(cid): cid for cid in cids}
    assert sorted(tree_paths(path, refs.NOTES_META)) == sorted(f"{a[:2]}/{a[2:]}" for a in anchors)
    listed = git(path, "notes", "--ref=meta", "list").split("\n")
    assert sorted(line.split()[1] for line in listed if line) == sorted(anchors)
    for anchor, cid in anchors.items():
        shown = git(path, "notes", "--ref=meta", "show", anchor)
        assert shown == store.notes.note(refs.NOTES_META, cid)
        assert notes.meta_values(shown)["title"] == f"T{cids.index(cid)}"
    assert set(store.notes.all(refs.NOTES_META)) == set(anchors)
    store.notes.set_meta("jp-c3", {"title": "again"}, "retitle")
    assert len(tree_paths(path, refs.NOTES_META)) == len(cids)
    assert store.notes.meta("jp-c3")["title"] == "again"
    for cid in cids:
        store.notes.set_note(refs.NOTES_META, cid, None, "remove")
    assert tree_paths(path, refs.NOTES_META) == [], "emptied subtrees are dropped"
    assert store.notes.all(refs.NOTES_META) == {}


def test_a_note_git_adds_to_a_fanned_out_tree_is_read(store: Store, path: Path) -> None:
    store.notes.set_note(refs.NOTES_SOURCE, "jp-c2", "jp-c1\n", "review")
    blob = store.repo.create_blob(ids.anchor_bytes("jp-c4"))
    git(path, "notes", "--ref=source", "add", "-m", "jp-c3", str(blob))
    assert store.notes.source_of("jp-c4") == "jp-c3" and store.notes.source_of("jp-c2") == "jp-c1"
    store.notes.set_note(refs.NOTES_SOURCE, "jp-c4", "jp-c5\n", "replace git's note")
    assert store.notes.sources() == {
        store.notes.anchor("jp-c2"): "jp-c1",
        store.notes.anchor("jp-c4"): "jp-c5",
    }
    assert git(path, "notes", "--ref=source", "show", str(blob)) == "jp-c5\n"
    assert len(tree_paths(path, refs.NOTES_SOURCE)) == 2


def test_a_flat_store_is_moved_to_the_fan_out_on_its_first_write(store: Store, path: Path) -> None:
    cids = [f"jp-c{n}" for n in range(1, 40)]
    old = {store.notes.anchor(cid): notes.meta_line("title", cid, 1000, "m") + "\n" for cid in cids}
    flat_notes(store, refs.NOTES_META, old)
    assert all("/" not in p for p in tree_paths(path, refs.NOTES_META))
    assert store.notes.meta("jp-c7") == {"title": "jp-c7"}, "flat notes are read"
    store.notes.set_meta("jp-c7", {"pinned_at": "2026-01-01T00:00:00.000000Z"}, "pin")
    store.notes.set_meta("jp-c99", {"title": "new"}, "title")
    paths = tree_paths(path, refs.NOTES_META)
    anchors = [p.replace("/", "") for p in paths]
    assert all(len(p.split("/")[0]) == 2 for p in paths), "no flat note is left"
    assert sorted(anchors) == sorted([*old, store.notes.anchor("jp-c99")]), "each note once"
    for cid in cids:
        assert store.notes.meta(cid)["title"] == cid
    assert store.notes.meta("jp-c7")["pinned_at"] == "2026-01-01T00:00:00.000000Z"
    assert store.notes.meta("jp-c99") == {"title": "new"}
    shown = git(path, "notes", "--ref=meta", "show", store.notes.anchor("jp-c12"))
    assert shown == old[store.notes.anchor("jp-c12")]


def test_a_note_stored_in_several_layouts_is_written_once(store: Store, path: Path) -> None:
    repo = store.repo
    anchor, other = store.notes.anchor("jp-c1"), store.notes.anchor("jp-c2")

    def blob(text: str) -> pygit2.Oid:
        return repo.create_blob(text.encode())

    # the same note flat, at ab/cdef... and at ab/cd/ef... (git's deeper fan-out)
    deep = repo.TreeBuilder()
    deep.insert(anchor[4:], blob("deep\n"), pygit2.GIT_FILEMODE_BLOB)
    inner = repo.TreeBuilder()
    inner.insert(anchor[2:], blob("fanned\n"), pygit2.GIT_FILEMODE_BLOB)
    inner.insert(anchor[2:4], deep.write(), pygit2.GIT_FILEMODE_TREE)
    root = repo.TreeBuilder()
    root.insert(anchor, blob("flat\n"), pygit2.GIT_FILEMODE_BLOB)
    root.insert(anchor[:2], inner.write(), pygit2.GIT_FILEMODE_TREE)
    root.insert(other, blob("jp-c0\n"), pygit2.GIT_FILEMODE_BLOB)
    repo.create_commit(refs.NOTES_SOURCE, signature(), signature(), "mixed", root.write(), [])
    assert store.notes.note(refs.NOTES_SOURCE, "jp-c1") in {"flat\n", "fanned\n", "deep\n"}
    assert len(tree_paths(path, refs.NOTES_SOURCE)) == 4

    store.notes.set_note(refs.NOTES_SOURCE, "jp-c1", "jp-c9\n", "rewrite")
    assert sorted(tree_paths(path, refs.NOTES_SOURCE)) == sorted(
        [f"{anchor[:2]}/{anchor[2:]}", f"{other[:2]}/{other[2:]}"]
    )
    assert store.notes.sources() == {anchor: "jp-c9", other: "jp-c0"}
    assert git(path, "notes", "--ref=source", "show", anchor) == "jp-c9\n"

    store.notes.set_note(refs.NOTES_SOURCE, "jp-c1", None, "remove")
    assert tree_paths(path, refs.NOTES_SOURCE) == [f"{other[:2]}/{other[2:]}"]
    assert store.notes.note(refs.NOTES_SOURCE, "jp-c1") is None


def test_removing_a_note_removes_every_copy(store: Store, path: Path) -> None:
    anchor = store.notes.anchor("jp-c1")
    flat_notes(store, refs.NOTES_SOURCE, {anchor: "flat\n"})
    repo = store.repo
    inner = repo.TreeBuilder()
    inner.insert(anchor[2:], repo.create_blob(b"fanned\n"), pygit2.GIT_FILEMODE_BLOB)
    root = repo.TreeBuilder(repo.revparse_single(refs.NOTES_SOURCE).peel(pygit2.Tree))
    root.insert(anchor[:2], inner.write(), pygit2.GIT_FILEMODE_TREE)
    parent = repo.revparse_single(refs.NOTES_SOURCE).id
    repo.create_commit(refs.NOTES_SOURCE, signature(), signature(), "two", root.write(), [parent])
    store.notes.set_note(refs.NOTES_SOURCE, "jp-c1", None, "remove")
    assert tree_paths(path, refs.NOTES_SOURCE) == []
    assert store.notes.note(refs.NOTES_SOURCE, "jp-c1") is None


def test_update_reads_only_the_notes_its_change_asks_for(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(1, 30):
        store.notes.set_meta(f"jp-c{n}", {"title": f"T{n}"}, "title")
    read: list[pygit2.Oid] = []
    real = notes._text

    def counting(repo: pygit2.Repository, oid: pygit2.Oid) -> str:
        read.append(oid)
        return real(repo, oid)

    monkeypatch.setattr(notes, "_text", counting)
    store.notes.set_meta("jp-c5", {"title": "again"}, "retitle")
    assert len(read) == 1, "set_meta read its own note and no other"
    read.clear()
    store.notes.set_note(refs.NOTES_META, "jp-c6", None, "remove")
    assert read == []
    monkeypatch.setattr(notes, "_text", real)
    assert store.notes.meta("jp-c5") == {"title": "again"} and store.notes.meta("jp-c6") == {}
    assert store.notes.meta("jp-c7") == {"title": "T7"}


def test_the_lazy_notes_mapping_behaves_as_a_mapping(store: Store) -> None:
    store.notes.set_note(refs.NOTES_SOURCE, "jp-c1", "jp-c0\n", "a")
    store.notes.set_note(refs.NOTES_SOURCE, "jp-c2", "jp-c0\n", "b")
    seen: list[dict[str, str]] = []
    a1, a2, a3 = (store.notes.anchor(c) for c in ("jp-c1", "jp-c2", "jp-c3"))

    def change(current: notes.NoteTexts) -> dict[str, str | None]:
        assert a1 in current and a3 not in current and 5 not in current
        assert current[a1] == "jp-c0\n" and current.get(a3) is None
        with pytest.raises(KeyError):
            current[a3]
        assert len(current) == 2 and sorted(current) == sorted([a1, a2])
        seen.append(dict(current))
        return {a3: current[a2]}

    notes.update(store.repo, refs.NOTES_SOURCE, change, signature(), "copy")
    assert seen == [{a1: "jp-c0\n", a2: "jp-c0\n"}]
    assert store.notes.sources() == {a1: "jp-c0", a2: "jp-c0", a3: "jp-c0"}
    empty = notes.NoteTexts(store.repo, None)
    assert len(empty) == 0 and a1 not in empty and dict(empty) == {}


def test_notes_prefetched_through_git_read_as_when_looked_up_one_by_one(
    store: Store, path: Path
) -> None:
    for n in range(1, 40):
        store.notes.set_meta(f"jp-c{n}", {"title": f"T{n}"}, "title")
    anchors = [store.notes.anchor(f"jp-c{n}") for n in range(1, 60)]  # 20 have no note
    tip = str(store.repo.lookup_reference(refs.NOTES_META).target)
    cat = objects.CatFile(path)  # an import's reader: one git process
    try:
        found = notes._tip(cat, tip)
        assert found is not None
        texts = notes.NoteTexts(cat, found[1])
        texts.prefetch([*anchors, "0" * 40])
        each = notes.NoteTexts(notes._odb(store.repo), found[1])
        assert {a: texts.get(a) for a in anchors} == {a: each.get(a) for a in anchors}
    finally:
        cat.close()
    assert sum(1 for a in anchors if each.get(a)) == 39


def test_update_refuses_a_target_that_is_not_an_object_id(store: Store) -> None:
    with pytest.raises(ValueError):
        notes.update(store.repo, refs.NOTES_SOURCE, lambda _: {"HEAD": "x"}, signature(), "bad")


class Ticks:
    """A clock reading the given seconds since the epoch, one per reading."""

    def __init__(self, seconds: Iterable[float]) -> None:
        self._seconds = iter(seconds)

    def now(self) -> datetime:
        return datetime.fromtimestamp(next(self._seconds), UTC)

    def token(self, nbytes: int) -> str:
        return "ab" * nbytes


def test_metas_asked_for_keys_parse_only_the_notes_that_may_name_them(store: Store) -> None:
    """A note that names none of the keys reads as empty; one that names a key, plainly
    or in an escape JSON allows, is read whole, as ``meta`` reads it."""
    store.notes.set_meta("jp-c1", {"title": "plain"}, "title")
    store.notes.set_meta("jp-c2", {"diverged_from": "jp-c1", "title": "t"}, "diverged")
    escaped = json.dumps({"k": "diverged_\u0066rom", "v": "jp-c1", "t": 1, "m": "m"})
    escaped = escaped.replace("diverged_from", "diverged_\\u0066rom")
    store.notes.set_note(refs.NOTES_META, "jp-c3", escaped + "\n", "escaped by another tool")
    found = store.notes.metas(["jp-c1", "jp-c2", "jp-c3", "jp-c4"], keys=("diverged_from",))
    assert found == {
        "jp-c1": {},
        "jp-c2": store.notes.meta("jp-c2"),
        "jp-c3": {"diverged_from": "jp-c1"},
        "jp-c4": {},
    }
    assert store.notes.metas(["jp-c1"]) == {"jp-c1": {"title": "plain"}}


def test_outgoing_names_each_note_a_push_would_send_and_no_other(store: Store) -> None:
    repo, meta = store.place.repo, refs.NOTES_META
    store.notes.set_meta("jp-c1", {"title": "one"}, "t1")
    sent = str(repo.lookup_reference(meta).target)  # what the remote has
    store.notes.set_meta("jp-c2", {"title": "two"}, "t2")
    mine = str(repo.lookup_reference(meta).target)
    assert [(c, json.loads(t)["v"]) for c, t in store.notes.outgoing(mine, [sent])] == [
        ("jp-c2", "two")
    ]
    assert {c for c, _ in store.notes.outgoing(mine, [])} == {"jp-c1", "jp-c2"}, "a first push: all"
    assert store.notes.outgoing(mine, [mine]) == []
    kept = store.notes.outgoing(mine, [], keep=lambda text: '"two"' in text)
    assert [c for c, _ in kept] == ["jp-c2"], "keep: the others left out"
    # a merge with another machine's notes: what came from its side is that side's
    texts = notes.read_all(repo, meta)
    anchor3 = "ab" * 20  # no anchor blob here: named by the annotated id
    side_tree = notes.write_tree(repo, {**notes.read_all(repo, sent), anchor3: "three\n"})
    side = repo.create_commit(
        None, signature(), signature(), "side", side_tree, [pygit2.Oid(hex=sent)]
    )
    both = notes.write_tree(repo, {**texts, anchor3: "three\n"})
    merge = repo.create_commit(
        None, signature(), signature(), "merge", both, [pygit2.Oid(hex=mine), side]
    )
    assert [c for c, _ in store.notes.outgoing(str(merge), [str(side)])] == ["jp-c2"]
    assert sorted(c for c, _ in store.notes.outgoing(str(merge), [sent])) == [anchor3, "jp-c2"]
    assert store.notes.outgoing(str(merge), [str(merge), "0" * 40]) == []


def _loose(path: Path) -> set[str]:
    """The loose objects of the store at ``path``."""
    found = path.glob("objects/[0-9a-f][0-9a-f]/*")
    return {f"{p.parent.name}{p.name}" for p in found}


def _many_notes(store: Store, count: int, first: int = 0) -> str:
    """Notes on ``count`` anchors (and the anchors) in one commit; its id."""
    targets = {store.notes.anchor(f"jp-c{n}"): f"note {n}\n" for n in range(first, first + count)}
    anchors = [ids.anchor_bytes(f"jp-c{n}") for n in range(first, first + count)]
    when = pygit2.Signature("t", "t@example.invalid", 1_780_000_000, 0)  # the same ids
    notes.update(store.repo, refs.NOTES_SOURCE, lambda _: targets, when, "many", also=anchors)
    tip = store.refs.target(refs.NOTES_SOURCE)
    assert tip is not None
    return tip


def test_a_write_of_many_notes_is_one_pack_of_the_same_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``PACK_FROM`` notes a write's objects go into one pack, not a loose file
    each; the commit (so its tree and every note) has the id loose writes give it,
    a later write on top of it too, and no ``.keep`` stays once the ref moved."""
    count = 3 * notes.PACK_FROM
    packed_path, loose_path = tmp_path / "packed.git", tmp_path / "loose.git"
    init_bare(packed_path)
    init_bare(loose_path)
    packed, loose = Store(packed_path), Store(loose_path)
    before = _loose(packed_path)
    first = _many_notes(packed, count)
    assert _loose(packed_path) == before, "nothing written loose"
    assert not list(packed_path.glob("objects/pack/*.keep"))
    assert len(list(packed_path.glob("objects/pack/*.pack"))) == 1
    second = _many_notes(packed, count, first=count // 2)  # half of them again, on top
    monkeypatch.setattr(notes, "PACK_FROM", 10 * count)  # the same writes, loose
    assert _many_notes(loose, count) == first
    assert _many_notes(loose, count, first=count // 2) == second
    fresh = Store(packed_path)
    assert fresh.notes.note(refs.NOTES_SOURCE, "jp-c1") == "note 1\n"
    assert len(notes.read_all(fresh.repo, refs.NOTES_SOURCE)) == count + count // 2
    assert git(packed_path, "fsck", "--strict", "--no-dangling", "--no-progress") == ""
    assert not list(packed_path.glob("objects/pack/*.keep"))


def test_a_write_of_few_notes_stays_loose(store: Store, path: Path) -> None:
    """A title set by hand is a few objects: loose, no pack for git's gc to count."""
    _many_notes(store, 2)
    assert not list(path.glob("objects/pack/*.pack"))


def _packs_holding(path: Path, oid: str) -> int:
    """How many of the store's packs hold ``oid``."""
    folder = path / "objects" / "pack"
    shown = [
        subprocess.run(
            ["git", "show-index"], input=idx.read_bytes(), capture_output=True, check=True
        )
        for idx in folder.glob("*.idx")
    ]
    return sum(oid.encode() in done.stdout for done in shown)


def test_titles_of_conversations_just_created_do_not_write_their_anchors_again(
    store: Store, path: Path
) -> None:
    cids = [f"jp-c17800000{n:05d}" for n in range(40)]
    with store.log.batch():
        for cid in cids:
            store.log.create(cid, [start(cid)], None, "import", packed=True)
    store.notes.set_metas({cid: {"title": cid} for cid in cids}, "titles", anchored=cids[1:])
    for cid in cids:
        assert store.notes.meta(cid)["title"] == cid
        git(path, "cat-file", "-e", store.notes.anchor(cid))
    assert [_packs_holding(path, store.notes.anchor(cid)) for cid in cids[:2]] == [2, 1]


def test_a_title_writes_its_anchor_again_where_it_is_gone(store: Store, path: Path) -> None:
    store.notes.set_meta("jp-c1", {"title": "T"}, "title")  # no conversation: no anchor before
    git(path, "cat-file", "-e", store.notes.anchor("jp-c1"))
