"""A pack of whole objects written without libgit2 (``gitstore/git/pack.py``) is one
git itself reads, checks and indexes byte for byte the same."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pygit2
import pytest

from gitstore.git import pack as gitpack


def _objects(repo: pygit2.Repository) -> list[tuple[int, bytes]]:
    """A commit, its tree, blobs of sizes around every header-byte boundary, a tag."""
    blobs = [repo.create_blob(os.urandom(n)) for n in (0, 1, 15, 16, 2047)]
    blobs.append(repo.create_blob(os.urandom(300_000)))  # incompressible, 3 size bytes
    builder = repo.TreeBuilder()
    for n, oid in enumerate(blobs):
        builder.insert(f"f{n}", oid, pygit2.enums.FileMode.BLOB)
    tree = builder.write()
    sig = pygit2.Signature("T", "t@example.invalid", 1_700_000_000, 0)
    commit = repo.create_commit(None, sig, sig, "a message\n", tree, [])
    tag = repo.create_tag("v1", commit, pygit2.enums.ObjectType.COMMIT, sig, "a tag\n")
    out = []
    for oid in [commit, tree, *blobs, tag]:
        kind, data = repo.odb.read(oid)
        out.append((int(kind), bytes(data)))
    return out


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "src.git"), bare=True)


def test_git_reads_every_object_of_the_pack_and_indexes_it_the_same(
    repo: pygit2.Repository, tmp_path: Path
) -> None:
    objects = _objects(repo)
    pack = tmp_path / "out.pack"
    written = gitpack.PackFile(pack)
    for kind, data in objects:
        written.add(kind, data)
    written.finish()

    verified = _git("verify-pack", "-v", str(pack.with_suffix(".idx"))).stdout
    assert f"non delta: {len(objects)} objects" in verified, verified
    # git's own index of the same pack, byte for byte
    again = tmp_path / "again.pack"
    shutil.copy(pack, again)
    _git("index-pack", str(again))
    assert again.with_suffix(".idx").read_bytes() == pack.with_suffix(".idx").read_bytes()

    # a repository that has only this pack reads each object as it was
    only = pygit2.init_repository(str(tmp_path / "only.git"), bare=True)
    shutil.copy(pack, Path(only.path) / "objects" / "pack" / pack.name)
    shutil.copy(pack.with_suffix(".idx"), Path(only.path) / "objects" / "pack")
    for kind, data in objects:
        name = gitpack.object_id(kind, data).hex()
        assert only.odb.read(name)[0] == kind and bytes(only.odb.read(name)[1]) == data
    _git("--git-dir", only.path, "fsck", "--strict", "--no-dangling")


def test_what_a_pack_cannot_hold_whole_is_refused(tmp_path: Path) -> None:
    written = gitpack.PackFile(tmp_path / "p.pack")
    with pytest.raises(ValueError, match="type"):
        written.add(6, b"a delta is not a whole object")
    assert written.count == 0
    written.file.close()


def test_object_names_are_gits(repo: pygit2.Repository) -> None:
    for kind, data in _objects(repo):
        assert gitpack.object_id(kind, data).hex() == str(
            repo.odb.write(pygit2.enums.ObjectType(kind), data)
        )


def test_a_bulk_write_of_what_an_earlier_one_wrote_gets_a_pack_of_its_own(tmp_path: Path) -> None:
    """An import written again (after a killed one, or of the same attachments) makes
    the same pack: it is published under a name of its own, so git's repack deleting
    the earlier one, unreachable, leaves the new one whole."""
    from gitstore.store import packwrite

    repo = pygit2.init_repository(str(tmp_path / "b.git"), bare=True)
    gitdir = Path(repo.path)
    blobs = [b"an attachment\n", os.urandom(5000)]
    (first,) = packwrite.write_blobs(gitdir, blobs)
    packwrite.release()
    (second,) = packwrite.write_blobs(gitdir, blobs)
    assert first != second
    packs = gitdir / "objects" / "pack"
    assert (packs / second).with_suffix(".keep").exists()
    (packs / first).with_suffix(".idx").unlink()  # git's repack, which listed the first
    (packs / first).unlink()
    fresh = pygit2.Odb(str(gitdir / "objects"))
    assert all(pygit2.Oid(hex=gitpack.object_id(3, b).hex()) in fresh for b in blobs)
    packwrite.release()
    _git("--git-dir", str(gitdir), "fsck", "--strict", "--no-dangling")


@pytest.mark.parametrize("twice", [False, True])
def test_a_streamed_pack_is_indexed_as_git_indexes_it(
    repo: pygit2.Repository, tmp_path: Path, twice: bool
) -> None:
    objects = _objects(repo)
    if twice:  # the same event twice: its blob and tree written again
        objects += objects[1:3]
    written = gitpack.PackFile(tmp_path / "streamed.pack")
    names = [written.add(kind, data) for kind, data in objects]
    name = written.finish()
    pack = tmp_path / "streamed.pack"
    assert name == pack.read_bytes()[-20:].hex()
    again = tmp_path / "again.pack"
    shutil.copy(pack, again)
    _git("index-pack", str(again))
    assert again.with_suffix(".idx").read_bytes() == pack.with_suffix(".idx").read_bytes()
    # a repository that has only this pack checks it whole and reads each object
    store = tmp_path / "only.git"
    _git("init", "-q", "--bare", str(store))
    for suffix in (".pack", ".idx"):
        shutil.copy(pack.with_suffix(suffix), store / "objects" / "pack" / f"pack-{name}{suffix}")
    _git("--git-dir", str(store), "fsck", "--full", "--strict")
    listed = _git("--git-dir", str(store), "cat-file", "--batch-all-objects", "--batch-check")
    assert {n.hex() for n in names} == {line.split()[0] for line in listed.stdout.splitlines()}


def test_an_offset_past_two_gibibytes_goes_into_the_wide_table() -> None:
    names = [bytes([n]) * 20 for n in range(3)]
    index = gitpack._index(names, [1, 2, 3], [12, 2**31, 2**33], b"\0" * 20)
    small_at = 8 + 256 * 4 + 3 * 24
    small = [
        int.from_bytes(index[small_at + 4 * n : small_at + 4 * n + 4], "big") for n in range(3)
    ]
    assert small == [12, 0x80000000, 0x80000001]
    wide = index[small_at + 12 : small_at + 28]
    assert [int.from_bytes(wide[:8], "big"), int.from_bytes(wide[8:], "big")] == [2**31, 2**33]


@pytest.mark.parametrize("size", [10, 600, 70_000])  # stored, deflated, past one stored block
def test_an_events_three_objects_added_at_once_are_the_pack_three_adds_write(
    tmp_path: Path, size: int
) -> None:
    """``add_event`` (an import's every event) writes the bytes and index that three
    ``add`` calls write, and git checks the pack whole."""
    from gitstore.git import objects

    sig = (b"user", b"u@example.invalid", 1_700_000_000, 0)
    events = []
    parents: list[str] = []
    for n in range(3):
        blob = b'{\n "n": %d, "text": "%s"\n}\n' % (n, b"x" * size)
        tree = b"100644 event.json\0" + objects.object_id(objects.BLOB, blob)
        tree_id = objects.object_id(objects.TREE, tree).hex()
        commit = objects.commit_data(tree_id, parents, sig, sig, f"event {n}\n")
        parents = [objects.object_id(objects.COMMIT, commit).hex()]
        events.append((blob, tree, commit))
    one, three = gitpack.PackFile(tmp_path / "one.pack"), gitpack.PackFile(tmp_path / "three.pack")
    for blob, tree, commit in events:
        name = one.add_event(blob, tree, commit)
        three.add(objects.BLOB, blob)
        three.add(objects.TREE, tree)
        assert name == three.add(objects.COMMIT, commit)
    assert one.finish() == three.finish()
    for suffix in (".pack", ".idx"):
        assert (tmp_path / f"one{suffix}").read_bytes() == (
            tmp_path / f"three{suffix}"
        ).read_bytes()
    store = tmp_path / "only.git"
    _git("init", "-q", "--bare", str(store))
    for suffix in (".pack", ".idx"):
        shutil.copy(tmp_path / f"one{suffix}", store / "objects" / "pack" / f"pack-x{suffix}")
    _git("--git-dir", str(store), "fsck", "--full", "--strict")


def test_a_streamed_packs_index_is_the_same_whether_its_offsets_are_narrow_or_not(
    repo: pygit2.Repository, tmp_path: Path
) -> None:
    """The index of a pack past 2 GiB is made entry by entry (``_index``), of any other
    from the records' columns at once: for the same records, the same bytes."""
    written = gitpack.PackFile(tmp_path / "p.pack")
    for kind, data in _objects(repo) * 2:  # every object twice: ties broken by offset
        written.add(kind, data)
    records, count = bytes(written._records), written.count
    written.finish()
    digest = b"\1" * 20
    narrow = gitpack._sorted_index(bytearray(records), count, True, digest)
    assert narrow == gitpack._sorted_index(bytearray(records), count, False, digest)
