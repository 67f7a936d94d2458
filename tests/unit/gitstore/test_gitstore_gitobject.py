"""Trees and commits made without libgit2 (``gitstore/fs/objects.py``) are the bytes
libgit2 writes for the same objects; a notes or operation-log write then leaves its
objects in the kept pack alone, and git checks the store clean."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from gitstore.fs import keep, shelters
from gitstore.git import objects, refs
from gitstore.git import pack as gitpack
from gitstore.oplog import log as oplog
from gitstore.store.core import Store
from tests.unit.gitstore.builders import start

BLOB, TREE, EXEC, LINK = (
    pygit2.enums.FileMode.BLOB,
    pygit2.enums.FileMode.TREE,
    pygit2.enums.FileMode.BLOB_EXECUTABLE,
    pygit2.enums.FileMode.LINK,
)


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "o.git"), bare=True)


def _git(repo: pygit2.Repository, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", repo.path, *args], capture_output=True, text=True, check=True
    ).stdout


def _entries(repo: pygit2.Repository) -> list[tuple[str, pygit2.Oid, int]]:
    """Names that sort differently as a tree and as a file (``a`` against ``a-b``,
    ``a.b``, ``a0``), every mode libgit2 writes, and a name past ASCII."""
    blob = repo.create_blob(b"x\n")
    sub = repo.TreeBuilder()
    sub.insert("inner", blob, BLOB)
    tree = sub.write()
    return [
        ("a-b", blob, BLOB),
        ("a", tree, TREE),
        ("a.b", blob, EXEC),
        ("a0", blob, LINK),
        ("ab", tree, TREE),
        ("ab-", blob, BLOB),
        ("é", blob, BLOB),
        ("Z", blob, BLOB),
    ]


def test_a_tree_is_the_bytes_libgit2_writes(repo: pygit2.Repository) -> None:
    builder, edit = repo.TreeBuilder(), objects.TreeEdit()
    for name, oid, mode in _entries(repo):
        builder.insert(name, oid, mode)
        edit.insert(name, oid.raw, int(mode))
    theirs = builder.write()
    assert edit.data() == repo[theirs].read_raw()
    assert objects.object_id(objects.TREE, edit.data()).hex() == str(theirs)
    assert objects.TreeEdit().data() == b"" and repo[repo.TreeBuilder().write()].read_raw() == b""


def test_an_edited_tree_is_the_bytes_libgit2_writes(repo: pygit2.Repository) -> None:
    builder = repo.TreeBuilder()
    for name, oid, mode in _entries(repo):
        builder.insert(name, oid, mode)
    base = repo[builder.write()]
    assert isinstance(base, pygit2.Tree)
    ours, theirs = objects.TreeEdit(base.read_raw()), repo.TreeBuilder(base)
    new = repo.create_blob(b"new\n")
    ours.remove("not there")  # as libgit2's, but without its error
    for edit in (ours, theirs):
        edit.remove("a")
    ours.insert("a", new.raw, int(BLOB))  # a folder becomes a file: it sorts elsewhere
    theirs.insert("a", new, BLOB)
    ours.insert("ab", new.raw, int(BLOB))
    theirs.insert("ab", new, BLOB)
    assert ours.data() == repo[theirs.write()].read_raw()
    assert ours.get("ab") == (int(BLOB), new.raw) and ours.get("zz") is None
    blobs = dict(ours.blobs())
    assert sorted(blobs) == sorted(["a", "a-b", "a.b", "a0", "ab", "ab-", "é", "Z"])
    assert blobs["a"] == new.raw


def test_a_zero_padded_mode_is_written_as_libgit2_writes_it(repo: pygit2.Repository) -> None:
    blob = repo.create_blob(b"x\n")
    sub = repo.TreeBuilder().write()
    raw = b"040000 d\0" + sub.raw + b"0100644 f\0" + blob.raw
    odd = repo.odb.write(pygit2.enums.ObjectType.TREE, raw)
    tree = repo[odd]
    assert isinstance(tree, pygit2.Tree)
    assert objects.TreeEdit(raw).data() == repo[repo.TreeBuilder(tree).write()].read_raw()


@pytest.mark.parametrize(
    "raw", [b"100644 f\0short", b"100644 f", b"junk", b"100644 f\0" + b"\1" * 20 + b"x"]
)
def test_bytes_that_are_no_tree_are_refused(raw: bytes) -> None:
    with pytest.raises(ValueError):
        objects.TreeEdit(raw)


@pytest.mark.parametrize("offset", [0, 330, -480, -30])
@pytest.mark.parametrize("message", ["jp: a note\n", "no newline", "lines\n\nof text\n"])
def test_a_commit_is_the_bytes_libgit2_writes(
    repo: pygit2.Repository, offset: int, message: str
) -> None:
    tree = repo.TreeBuilder().write()
    sig = pygit2.Signature("Zoë Q", "zoe@example.invalid", 1_700_000_123, offset)
    first = repo.create_commit(None, sig, sig, "first\n", tree, [])
    second = repo.create_commit(None, sig, sig, "second\n", tree, [first])
    other = pygit2.Signature("jp", "jp@localhost", 1_600_000_000, 0)
    for parents in ([], [first], [first, second]):
        theirs = repo.create_commit(None, sig, other, message, tree, parents)
        ours = objects.commit_data(
            str(tree),
            [str(p) for p in parents],
            objects.person(sig),
            objects.person(other),
            message,
        )
        assert ours == repo[theirs].read_raw()


def test_notes_and_operations_leave_nothing_loose(store: Store, path: Path) -> None:
    """Their objects go into the kept pack alone (no loose copy to deflate, write and
    read back): every one is there after the release, past a fold, with an operation
    whose tips need keeper commits; git checks the store clean."""
    objects = path / "objects"
    tips = store.log.write_commits([start(f"jp-c{n}", n) for n in range(oplog.KEEP + 3)], None)
    before = set(objects.glob("??/*"))
    for n in range(shelters.FOLD_AT + 3):
        with store.ops.operation(f"jp title {n}"):
            store.notes.set_meta("jp-c1", {"title": f"title {n}"}, f"title {n}")
    store.notes.set_note(refs.NOTES_SOURCE, "jp-c9", "jp-c1\n", "a source note")
    assert set(objects.glob("??/*")) == before, "a note, its anchor or an operation went loose"
    assert store.repo.get(store.notes.anchor("jp-c9")) is not None  # the note hangs on it
    with store.ops.operation("jp many"):
        for n, tip in enumerate(tips):
            store.log.create(f"jp-c{n}", [], tip, "create")
    made = set(objects.glob("??/*")) - before
    repo = pygit2.Repository(str(path))
    kinds = {repo[f"{p.parent.name}{p.name}"].type_str for p in made}
    assert kinds <= {"blob"}, "a notes or op-log tree or commit was written loose"
    assert not list((objects / "pack").glob("*.keep"))
    assert store.notes.meta("jp-c1")["title"] == f"title {shelters.FOLD_AT + 2}"
    assert len(oplog.ops(store.repo)) == shelters.FOLD_AT + 4
    assert len(oplog.ops(store.repo)[0].moves) == len(tips)
    _git(repo, "fsck", "--strict", "--no-dangling")  # every object the refs name is there


def test_a_fold_copies_whole_entries_into_a_pack_git_reads(repo: pygit2.Repository) -> None:
    """Released shelter packs fold by copying their entries (no delta search, nothing
    deflated again): git verifies the folded pack, and it holds every object."""
    names: list[str] = []
    for n in range(shelters.FOLD_AT + 1):
        kept = keep.Kept(repo)
        names.append(str(kept.stage(objects.BLOB, b"blob %d\n" % n)))
        kept.shelter()
        kept.release()
    packs = sorted((Path(repo.path) / "objects" / "pack").glob("pack-*.idx"))
    assert len(packs) == 1, packs
    verified = _git(repo, "verify-pack", "-v", str(packs[0]))
    assert f"non delta: {shelters.FOLD_AT + 1} objects" in verified
    entries = gitpack.whole_entries(
        packs[0].with_suffix(".pack").read_bytes(), packs[0].read_bytes()
    )
    assert sorted(name.hex() for name, _ in entries) == sorted(names)
