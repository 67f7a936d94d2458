"""The operation log in git: one commit per operation under ``refs/jp/oplog``.

Each operation is a commit whose tree holds ``op.json`` (``opmodel.Op``).
Its first parent is the operation before it; its other parents are every
commit the operation moved a ref from or to, so git's gc never prunes a tip
that an operation can restore, however the refs moved since (a deleted
conversation's chain, a notes commit replaced by another).  When an
operation moved many refs, those commits hang from "keeper" commits of at
most ``KEEP`` parents each (empty tree), so no commit has thousands of
parents.  ``git log refs/jp/oplog`` reads as the list of commands.

The ref lives under ``refs/jp/``: the sync refspecs name only
``refs/conversations``, ``refs/archive`` and ``refs/notes``, so the log
never travels.  A record enters the store as a note does (``intake.land``):
moved by compare-and-swap like an append; two processes that record at once
each retry on top of the other.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore import faults, intake
from gitstore.errors import GitStoreError
from gitstore.fs.place import Place
from gitstore.git import objects, pruned
from gitstore.git.refs.transaction import RefUpdate
from gitstore.oplog.model import SYMBOLIC, Op, printable

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

REF = "refs/jp/oplog"
FILE = "op.json"
# beside it, the operation's ``since`` alone: the next operation reads that, not an
# ``op.json`` that may list the 200,000 refs a first pull moved
SINCE = "since"
KEEP = 64  # parents of one commit that keeps tips reachable


def _op_of(repo: pygit2.Repository, commit: pygit2.Commit) -> Op | None:
    """The operation a commit records, or None when it is not an operation commit.
    An object of it that is missing (git's prune beside its writer) is read again
    for a moment, then named (``pruned.reread``)."""
    return pruned.reread(partial(_read_op, repo, commit), Path(repo.path), REF)


def _read_op(repo: pygit2.Repository, commit: pygit2.Commit) -> Op | None:
    try:
        entry = pruned.tree_of(commit)[FILE]
    except KeyError:
        return None
    blob = pruned.get(repo, entry.id)
    if not isinstance(blob, pygit2.Blob):
        return None
    try:
        return Op.from_json(json.loads(bytes(blob.data)))
    except (ValueError, KeyError, TypeError):
        return None


def _tip(repo: pygit2.Repository) -> pygit2.Reference | None:
    try:
        return repo.lookup_reference(REF)
    except (KeyError, pygit2.InvalidSpecError):
        return None


def _tip_commit(repo: pygit2.Repository, ref: pygit2.Reference) -> pygit2.Commit | None:
    """The commit ``ref`` names: None when it names no commit, ``pruned.Gone`` when
    that commit is missing (read again for a moment, then named: ``pruned.reread``)."""

    def peel() -> pygit2.Commit | None:
        try:
            found: pygit2.Commit = ref.peel(pygit2.Commit)
        except KeyError:
            raise pruned.Gone(str(ref.target)) from None
        except (ValueError, pygit2.GitError):
            return None
        return found

    return pruned.reread(peel, Path(repo.path), REF)


def entries(repo: pygit2.Repository) -> Iterator[tuple[pygit2.Commit, Op]]:
    """Every operation commit and its operation, newest first."""
    ref = _tip(repo)
    if ref is None:
        return
    commit = _tip_commit(repo, ref)
    while commit is not None:
        op = _op_of(repo, commit)
        if op is None:
            return
        yield commit, op
        commit = _previous(repo, commit)


def _previous(repo: pygit2.Repository, commit: pygit2.Commit) -> pygit2.Commit | None:
    """The operation before ``commit``: its first parent, if that is an operation."""
    if not commit.parent_ids:
        return None
    first = str(commit.parent_ids[0])

    def parent_commit() -> pygit2.Commit | None:
        if first in repo.odb:
            return _commit_at(repo, first)
        raise pruned.Gone(first)  # every parent is kept reachable: a prune beside its writer

    parent = pruned.reread(parent_commit, Path(repo.path), REF)
    if parent is not None and _op_of(repo, parent) is not None:
        return parent
    return None


def _commit_at(repo: pygit2.Repository, oid: str) -> pygit2.Commit | None:
    """The commit ``oid`` names, or None (absent, or another kind of object)."""
    try:
        obj = repo.get(oid)
    except (ValueError, pygit2.GitError):
        return None
    if obj is None or obj.type != pygit2.GIT_OBJECT_COMMIT:
        return None
    found: pygit2.Commit = obj.peel(pygit2.Commit)
    return found


def ops(repo: pygit2.Repository, limit: int | None = None) -> list[Op]:
    """The log, newest first (``limit`` operations at most)."""
    out: list[Op] = []
    for _, op in entries(repo):
        if limit is not None and len(out) >= limit:
            break
        out.append(op)
    return out


def has(repo: pygit2.Repository, op_id: str, depth: int = 500) -> bool:
    """Whether one of the newest ``depth`` operations has id ``op_id``."""
    return any(op.id == op_id for op in ops(repo, depth))


def _commits_of(kind: Callable[[str], int | None], op: Op) -> list[str]:
    """The commits ``op`` moved refs from or to, that exist (in a stable order)."""
    seen: set[str] = set()
    out: list[str] = []
    for move in op.moves:
        for value in (move.old, move.new):
            if value is None or value.startswith(SYMBOLIC) or value in seen:
                continue
            seen.add(value)
            if kind(value) == objects.COMMIT:
                out.append(value)
    return out


def _header_kind(repo: pygit2.Repository) -> Callable[[str], int | None]:
    """An object's kind from its header, by libgit2: a pull's record names 100,000
    commits, and parsing each took 0.7 s and 40 MiB of libgit2's cache."""

    def kind(oid: str) -> int | None:
        try:
            found, _ = repo.odb.read_header(oid)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return int(found)

    return kind


def _read_kind(read: objects.Read) -> Callable[[str], int | None]:
    def kind(oid: str) -> int | None:
        try:
            return read(oid)[0]
        except (KeyError, ValueError):
            return None

    return kind


def _keepers(oids: list[str], person: objects.Who, put: objects.Put) -> list[str]:
    """At most ``KEEP`` parents that keep every commit of ``oids`` reachable (the
    commits and the tree made for that given to ``put``)."""
    if len(oids) <= KEEP:
        return oids
    empty = put(objects.TREE, b"").hex()
    level = oids
    while len(level) > KEEP:
        level = [
            put(
                objects.COMMIT,
                objects.commit_data(
                    empty, chunk, person, person, f"jp op: keeps {len(chunk)} commits"
                ),
            ).hex()
            for chunk in (level[i : i + KEEP] for i in range(0, len(level), KEEP))
        ]
    return level


def _commit(
    op: Op, prev: str | None, kept: list[str], person: objects.Who, put: objects.Put
) -> bytes:
    """``op``'s commit on ``prev``, each of its objects given to ``put``; its raw id."""
    builder = objects.TreeEdit()
    blob = put(objects.BLOB, json.dumps(op.to_json(), sort_keys=True).encode())
    builder.insert(FILE, blob, objects.BLOB_MODE)
    since = put(objects.BLOB, repr(float(op.since or op.time)).encode())
    builder.insert(SINCE, since, objects.BLOB_MODE)
    tree = put(objects.TREE, builder.data())
    parents = ([prev] if prev is not None else []) + kept
    subject = printable(op.command).splitlines()[0][:200] if op.command.strip() else "jp"
    message = f"jp op {op.id}: {subject}\n"
    return put(objects.COMMIT, objects.commit_data(tree.hex(), parents, person, person, message))


def write(
    where: Place | pygit2.Repository,
    op: Op,
    signature: pygit2.Signature | objects.Who,
    held: objects.CatFile | None = None,
) -> tuple[str, Op]:
    """Add ``op`` as the newest operation; returns its commit id and ``op`` as
    recorded (its ``since``: when the log's oldest operation was).

    It enters the store as a note does (``intake.land``): its objects written
    loose, the ref moved by compare-and-swap, made again on top of another
    process that recorded first; a ``git gc --prune=now`` beside the write is met
    as ``gitstore/git/pruned.py`` says (written again once, then named).  The
    log is read as ``objects.reading`` says: without libgit2 in a process that
    has not loaded it.
    """
    place = where if isinstance(where, Place) else Place.of(where)
    person = objects.person(signature)
    written = pruned.Written(place.gitdir)
    read, tip, cat = objects.reading(place, REF, held)
    kind = _header_kind(place.repo) if cat is None else _read_kind(read)
    if cat is not None:  # the commits it moved refs between: read in one exchange
        cat.fetch(v for m in op.moves for v in (m.old, m.new) if v and not v.startswith(SYMBOLIC))
    kept: list[str] | None = None
    recorded = op

    def attempt() -> tuple[str | None, str, pruned.Written]:
        nonlocal kept, recorded
        if kept is None:  # the commits it keeps reachable: made once, on the first try
            kept = _keepers(_commits_of(kind, op), person, written.put)
        ref = tip()  # the log's commit as read, and ``op``'s on top of it
        prev = objects.peeled(partial(_get, read), ref)
        since = _since_in(read, prev[1]) if prev is not None else None
        recorded = op._replace(since=op.time if since is None else since)
        previous = prev[0] if since is not None and prev is not None else None
        oid = _commit(recorded, previous, kept, person, written.put)
        faults.point("oplog:objects-written")
        return ref, oid.hex(), written

    try:
        oid = intake.land(place, REF, attempt, f"jp op {op.id}")
    finally:
        if cat is not None:
            cat.done()
    assert oid is not None, "an operation always makes a commit"
    return oid, recorded


def _since_in(read: objects.Read, commit: bytes) -> float | None:
    """When the oldest operation the log held at the commit of bytes ``commit`` was
    recorded: its ``since`` file, or (written by an older jp, or unreadable) its
    whole operation; None when it records no operation."""
    tree_id = objects.commit_tree(commit)
    kind, raw = _get(read, tree_id) if tree_id is not None else (0, b"")
    tree = objects.TreeEdit(raw) if kind == objects.TREE else objects.TreeEdit()

    def blob(name: str) -> bytes | None:
        entry = tree.get(name)
        found = _get(read, entry[1].hex()) if entry is not None else None
        return found[1] if found is not None and found[0] == objects.BLOB else None

    try:
        since = float(blob(SINCE) or b"")
    except ValueError:
        since = 0.0
    if since > 0.0:
        return since
    try:
        op = Op.from_json(json.loads(blob(FILE) or b""))
    except (ValueError, KeyError, TypeError):
        return None
    return op.since or op.time


def _get(read: objects.Read, oid: str) -> tuple[int, bytes]:
    """``read(oid)``, raising ``pruned.Gone`` when it is missing."""
    try:
        return read(oid)
    except KeyError:
        raise pruned.Gone(oid) from None


def oldest_time(repo: pygit2.Repository) -> float | None:
    """When the oldest operation in the log was recorded (from the newest one alone)."""
    for _, op in entries(repo):
        return op.since or op.time
    return None


def trim(place: Place, cutoff: float) -> int:
    """Drop the operations recorded before ``cutoff``; returns how many went.

    The operations kept are written again on a new first-parent chain (their
    content and kept commits unchanged), then the ref moves by
    compare-and-swap: a writer that recorded meanwhile wins, and the trim
    waits for another day.
    """
    repo, gitdir = place.repo, place.gitdir
    ref = _tip(repo)
    if ref is None:
        return 0
    chain = list(entries(repo))
    staying = [(c, op) for c, op in chain if op.time >= cutoff]
    if len(staying) == len(chain):
        return 0
    since = staying[-1][1].time if staying else 0.0
    prev: str | None = None
    written = pruned.Written(gitdir)
    try:
        for commit, op in reversed(staying):
            kept = [str(p) for p in commit.parent_ids]
            if kept and _previous(repo, commit) is not None:
                kept = kept[1:]
            # stamped with the operation's own time (the store's clock), not the machine's now
            person: objects.Who = (b"jp", b"jp@localhost", int(op.time), 0)
            prev = _commit(op._replace(since=since), prev, kept, person, written.put).hex()
        moved = RefUpdate(REF, str(ref.target), prev)
        intake.move(place, [moved], "jp op: trim the log", wait=0)  # compare-and-swap
    except (pygit2.GitError, OSError, KeyError, GitStoreError):
        return 0  # another day (git's prune took what was written: the old log stays)
    written.settle()
    # the ref's own reflog would keep the dropped operations (and their tips) for months
    (gitdir / "logs" / REF).unlink(missing_ok=True)
    return len(chain) - len(staying)
