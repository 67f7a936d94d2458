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
never travels.  It is moved by compare-and-swap like an append; two
processes that record at once each retry on top of the other.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore.errors import ConcurrentUpdate, LockedRef, environment_fault
from gitstore.fs import diskfault, flock
from gitstore.oplog.model import SYMBOLIC, Op, printable

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

REF = "refs/jp/oplog"
FILE = "op.json"
KEEP = 64  # parents of one commit that keeps tips reachable
RETRIES = 60


def _op_of(repo: pygit2.Repository, commit: pygit2.Commit) -> Op | None:
    """The operation a commit records, or None when it is not an operation commit."""
    try:
        entry = commit.tree[FILE]
    except KeyError:
        return None
    blob = repo[entry.id]
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


def entries(repo: pygit2.Repository) -> Iterator[tuple[pygit2.Commit, Op]]:
    """Every operation commit and its operation, newest first."""
    ref = _tip(repo)
    if ref is None:
        return
    try:
        commit: pygit2.Commit | None = ref.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return
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
    parent = _commit_at(repo, str(commit.parent_ids[0]))
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


def _commits_of(repo: pygit2.Repository, op: Op) -> list[pygit2.Oid]:
    """The commits ``op`` moved refs from or to, that exist (in a stable order)."""
    seen: set[str] = set()
    out: list[pygit2.Oid] = []
    for move in op.moves:
        for value in (move.old, move.new):
            if value is None or value.startswith(SYMBOLIC) or value in seen:
                continue
            seen.add(value)
            found = _commit_at(repo, value)
            if found is not None:
                out.append(found.id)
    return out


def _keepers(
    repo: pygit2.Repository, oids: list[pygit2.Oid], signature: pygit2.Signature
) -> list[pygit2.Oid]:
    """At most ``KEEP`` parents that keep every commit of ``oids`` reachable."""
    if len(oids) <= KEEP:
        return oids
    empty = repo.TreeBuilder().write()
    level = oids
    while len(level) > KEEP:
        level = [
            repo.create_commit(
                None, signature, signature, f"jp op: keeps {len(chunk)} commits", empty, chunk
            )
            for chunk in (level[i : i + KEEP] for i in range(0, len(level), KEEP))
        ]
    return level


def _commit(
    repo: pygit2.Repository,
    op: Op,
    prev: pygit2.Oid | None,
    kept: list[pygit2.Oid],
    signature: pygit2.Signature,
) -> pygit2.Oid:
    blob = repo.create_blob(json.dumps(op.to_json(), sort_keys=True).encode())
    builder = repo.TreeBuilder()
    builder.insert(FILE, blob, pygit2.GIT_FILEMODE_BLOB)
    tree = builder.write()
    parents = ([prev] if prev is not None else []) + kept
    subject = printable(op.command).splitlines()[0][:200] if op.command.strip() else "jp"
    message = f"jp op {op.id}: {subject}\n"
    oid: pygit2.Oid = repo.create_commit(None, signature, signature, message, tree, parents)
    return oid


def write(repo: pygit2.Repository, op: Op, signature: pygit2.Signature) -> str:
    """Add ``op`` as the newest operation; returns its commit id."""
    kept = _keepers(repo, _commits_of(repo, op), signature)
    for attempt in range(RETRIES):
        ref = _tip(repo)
        prev: pygit2.Commit | None = None
        if ref is not None:
            try:
                prev = ref.peel(pygit2.Commit)
            except (KeyError, ValueError, pygit2.GitError):
                prev = None
        before = _op_of(repo, prev) if prev is not None else None
        op.since = (before.since or before.time) if before is not None else op.time
        oid = _commit(repo, op, prev.id if before is not None and prev else None, kept, signature)
        try:
            if ref is None:
                repo.create_reference_direct(REF, oid, False, message=f"jp op {op.id}")
            else:
                ref.set_target(oid, f"jp op {op.id}")  # compare-and-swap, as an append
            return str(oid)
        except (pygit2.AlreadyExistsError, pygit2.GitError, OSError) as exc:
            fault = environment_fault(exc, str(Path(repo.path) / REF))
            if fault is not None:
                raise fault from None
            diskfault.check_written(repo, Path(repo.path), str(oid))
            lock = Path(repo.path) / f"{REF}.lock"
            age = flock.ref_lock_age(lock)
            if age is not None and age >= flock.REF_LOCK_STALE:
                raise LockedRef(REF, str(lock), age) from None
            time.sleep(random.uniform(0, 0.002 * (1 + attempt)))
    raise ConcurrentUpdate(REF)


def oldest_time(repo: pygit2.Repository) -> float | None:
    """When the oldest operation in the log was recorded (from the newest one alone)."""
    for _, op in entries(repo):
        return op.since or op.time
    return None


def trim(repo: pygit2.Repository, gitdir: Path, cutoff: float) -> int:
    """Drop the operations recorded before ``cutoff``; returns how many went.

    The operations kept are written again on a new first-parent chain (their
    content and kept commits unchanged), then the ref moves by
    compare-and-swap: a writer that recorded meanwhile wins, and the trim
    waits for another day.
    """
    ref = _tip(repo)
    if ref is None:
        return 0
    chain = list(entries(repo))
    keep = [(c, op) for c, op in chain if op.time >= cutoff]
    if len(keep) == len(chain):
        return 0
    since = keep[-1][1].time if keep else 0.0
    prev: pygit2.Oid | None = None
    for commit, op in reversed(keep):
        kept = list(commit.parent_ids)
        if kept and _previous(repo, commit) is not None:
            kept = kept[1:]
        op.since = since
        # stamped with the operation's own time (the store's clock), not the machine's now
        signature = pygit2.Signature("jp", "jp@localhost", int(op.time), 0)
        prev = _commit(repo, op, prev, kept, signature)
    try:
        if prev is None:
            repo.references.delete(REF)
        else:
            ref.set_target(prev, "jp op: trim the log")
    except (pygit2.GitError, OSError, KeyError):
        return 0
    # the ref's own reflog would keep the dropped operations (and their tips) for months
    (gitdir / "logs" / REF).unlink(missing_ok=True)
    return len(chain) - len(keep)
