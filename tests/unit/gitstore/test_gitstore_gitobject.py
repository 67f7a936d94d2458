"""Trees and commits made without libgit2 (``gitstore/fs/objects.py``) are the bytes
libgit2 writes for the same objects; a notes or operation-log write then leaves its
objects in the kept pack alone, and git checks the store clean."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from gitstore.git import objects, refs
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


def test_notes_and_operations_with_keeper_commits_read_back_whole(store: Store, path: Path) -> None:
    """Notes and operations written with ``gitobject``'s bytes (libgit2's ordinary
    object writes): an operation whose tips need keeper commits, a note on an anchor;
    every one reads back, and git checks the store clean."""
    tips = store.log.write_commits([start(f"jp-c{n}", n) for n in range(oplog.KEEP + 3)], None)
    for n in range(3):
        with store.ops.operation(f"jp title {n}"):
            store.notes.set_meta("jp-c1", {"title": f"title {n}"}, f"title {n}")
    store.notes.set_note(refs.NOTES_SOURCE, "jp-c9", "jp-c1\n", "a source note")
    assert store.repo.get(store.notes.anchor("jp-c9")) is not None  # the note hangs on it
    with store.ops.operation("jp many"):
        for n, tip in enumerate(tips):
            store.log.create(f"jp-c{n}", [], tip, "create")
    assert store.notes.meta("jp-c1")["title"] == "title 2"
    assert len(oplog.ops(store.repo)) == 4
    assert len(oplog.ops(store.repo)[0].moves) == len(tips)
    repo = pygit2.Repository(str(path))
    _git(repo, "fsck", "--strict", "--no-dangling")  # every object the refs name is there


def test_loose_objects_written_without_libgit2_read_back_through_git(
    repo: pygit2.Repository,
) -> None:
    """``write_loose`` writes what libgit2 and git read; ``CatFile`` reads what they
    wrote (alone or many in one exchange), says a missing object is missing, and
    ``peeled`` follows a tag to its commit."""
    gitdir = Path(repo.path)
    blob = objects.write_loose(gitdir, objects.BLOB, b"a note\n")
    assert blob == repo.create_blob(b"a note\n").raw
    assert _git(repo, "cat-file", "blob", blob.hex()) == "a note\n"
    tree = repo.TreeBuilder()
    tree.insert("n", pygit2.Oid(raw=blob), BLOB)
    who = pygit2.Signature("a", "a@b", 0, 0)
    commit = repo.create_commit(None, who, who, "m", tree.write(), [])
    tag = repo.create_tag("t", commit, pygit2.enums.ObjectType.COMMIT, who, "t")
    read = objects.CatFile(gitdir)
    try:
        assert read(blob.hex()) == (objects.BLOB, b"a note\n")
        read.fetch([str(commit), "0" * 40, str(tag)])
        found = objects.peeled(read, str(tag))
        assert found is not None and found[0] == str(commit)
        assert objects.commit_tree(found[1]) == str(repo[commit].tree_id)
        with pytest.raises(KeyError):
            read("0" * 40)
        with pytest.raises(ValueError):
            read("HEAD")  # an object id only, never a revision to resolve
    finally:
        read.close()
    assert _git(repo, "fsck", "--strict") == ""
