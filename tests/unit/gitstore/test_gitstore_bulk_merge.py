"""The new ``packed-refs`` a bulk creation writes (``gitstore.git.refs.bulk``): new names
go into a sorted file as runs between its records, with the same result as reading
and sorting every record, and without taking the file apart."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import tracemalloc
from pathlib import Path

import pytest

from gitstore.git.refs import bulk


def oid(seed: object) -> str:
    return hashlib.sha1(str(seed).encode()).hexdigest()


def packed(names: list[str], rng: random.Random, header: bytes) -> bytes:
    """A sorted ``packed-refs`` of ``names``; some records peeled (an annotated tag)."""
    lines = [header] if header else []
    for name in sorted(names, key=str.encode):
        lines.append(f"{oid(name)} {name}\n".encode())
        if rng.random() < 0.2:
            lines.append(f"^{oid(name + '^')}\n".encode())
    return b"".join(lines)


HEADERS = [
    b"# pack-refs with: peeled fully-peeled sorted \n",
    b"# pack-refs with: peeled sorted \n",
    b"# pack-refs with: sorted \n",
]
POOL = [
    f"refs/{space}/{leaf}"
    for space in ("archive/conversations", "conversations", "jp-remotes/origin/conversations",
                  "notes/meta", "tags")
    for leaf in ("a", "b", "jp-c1", "jp-c10", "jp-c2", "jp-c20", "z", "~")
]  # fmt: skip


def test_runs_between_records_give_what_sorting_every_record_gives() -> None:
    rng = random.Random(7)
    for case in range(600):
        old_names = rng.sample(POOL, rng.randrange(0, len(POOL)))
        header = rng.choice(HEADERS)
        old = packed(old_names, rng, header) if old_names or rng.random() < 0.5 else b""
        new = {n: oid((case, n)) for n in rng.sample(POOL, rng.randrange(0, 12))}
        want_header, _ = bulk._header(old)
        expected = bulk._merged_whole(want_header, old, new)
        got = bulk._merged(old, new)
        assert b"".join(got[0]) == b"".join(expected[0]), (old, new)
        assert sorted(got[1]) == sorted(expected[1])
        assert set(got[1]) == set(new) - set(old_names)


def test_many_names_near_each_other_or_far_apart_go_where_sorting_puts_them() -> None:
    """The gap of each next name is looked for near the last one first (``NEAR``), then
    further: names a few records apart, runs of them, and far apart."""
    rng = random.Random(11)
    every = [f"refs/conversations/jp-c{n:011d}" for n in range(3000)]
    for spread in (1, 5, 400):
        new_names = every[rng.randrange(spread) :: spread][:300]
        old_names = rng.sample([n for n in every if n not in set(new_names)], 1500)
        old = packed(old_names, rng, HEADERS[0])
        new = {n: oid(n) for n in new_names}
        got = bulk._merged(old, new)
        assert b"".join(got[0]) == b"".join(bulk._merged_whole(HEADERS[0], old, new)[0])
        assert sorted(got[1]) == sorted(new_names)


def test_an_unsorted_file_is_read_whole_and_comes_out_sorted() -> None:
    old = f"{oid(2)} refs/tags/z\n{oid(1)} refs/tags/a\n".encode()  # no header: unsorted
    pieces, added = bulk._merged(old, {"refs/tags/m": oid(3)})
    data = b"".join(pieces)
    assert added == ["refs/tags/m"]
    names = [line.split(b" ")[1] for line in data.splitlines()[1:]]
    assert names == [b"refs/tags/a", b"refs/tags/m", b"refs/tags/z"]


def test_a_first_pull_of_many_is_merged_without_taking_the_file_apart() -> None:
    """20,000 copies packed, 20,000 conversations created: the merge holds the new
    records and views of the old file, not a record object per line nor a copy of it."""
    rng = random.Random(3)
    copies = [f"refs/jp-remotes/origin/conversations/jp-c{n}" for n in range(20_000)]
    old = packed(copies, rng, HEADERS[0])
    new = {f"refs/conversations/jp-c{n}": oid(n) for n in range(20_000)}
    tracemalloc.start()
    try:
        pieces, added = bulk._merged(old, new)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    data = b"".join(pieces)
    assert len(added) == 20_000 and data.count(b"\n") == old.count(b"\n") + 20_000
    assert data.startswith(HEADERS[0]) and data.index(b"refs/conversations/jp-c0\n")
    new_bytes = len(data) - len(old)
    # taken apart: 5.8x the file; each new record a bytes object, joined twice: 7.4x
    assert peak < 2 * new_bytes, f"peak {peak} for {new_bytes} new bytes"


def test_the_pieces_are_written_in_order_whatever_their_sizes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Short pieces go out joined, a long one alone: the file is the pieces in order."""
    monkeypatch.setattr(bulk, "WRITE_MOST", 1000)
    rng = random.Random(11)
    pieces: bulk.Pieces = []
    for _ in range(400):
        piece = rng.randbytes(rng.choice([0, 1, 80, 999, 1000, 1003, 5000]))
        pieces.append(memoryview(piece) if rng.random() < 0.5 else piece)
    (tmp_path / "packed-refs.lock").write_bytes(b"")
    fd = os.open(tmp_path / "packed-refs.lock", os.O_WRONLY)
    try:
        bulk._replace(tmp_path, fd, pieces)
    finally:
        os.close(fd)
    assert (tmp_path / "packed-refs").read_bytes() == b"".join(pieces)


@pytest.mark.parametrize("searched", ["a search each", "one pass"])
def test_a_drop_takes_out_exactly_its_records_and_loose_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, searched: str
) -> None:
    """``drop`` (a transaction's deletions, a remote's copies): each dropped name's
    record and peeled line leave ``packed-refs``, every other byte stays; its loose
    file goes too, and so do the lock and the writer's files.  The same whether the
    records are found by a search each (a few names) or by one pass (many)."""
    if searched == "one pass":
        monkeypatch.setattr(bulk, "SEARCHED_MOST", 0)
    rng = random.Random(11)
    gitdir = tmp_path / "store.git"
    for case in range(200):
        shutil.rmtree(gitdir, ignore_errors=True)
        (gitdir / "refs").mkdir(parents=True)
        names = rng.sample(POOL, rng.randrange(0, len(POOL)))
        old = packed(names, rng, rng.choice([*HEADERS, b""]))
        (gitdir / "packed-refs").write_bytes(old)
        loose = rng.sample(POOL, 3)
        for name in loose:
            (gitdir / name).parent.mkdir(parents=True, exist_ok=True)
            (gitdir / name).write_text(oid((case, name)) + "\n")
        gone = set(rng.sample(POOL, rng.randrange(0, 6)))
        bulk.drop(gitdir, sorted(gone), wait=0)
        kept = [r for r in records(old) if r.split(b" ")[1].split(b"\n")[0].decode() not in gone]
        assert (gitdir / "packed-refs").read_bytes() == b"".join(kept), (old, gone)
        assert {n for n in loose if (gitdir / n).exists()} == set(loose) - gone
        assert not (gitdir / "packed-refs.lock").exists()
        assert not list((gitdir / "jp" / "ops").iterdir())


def records(data: bytes) -> list[bytes]:
    """The header, then each record with its peeled line, as bytes."""
    out: list[bytes] = []
    for line in data.splitlines(keepends=True):
        if line.startswith(b"^"):
            out[-1] += line
        else:
            out.append(line)
    return out
