"""Multi-ref updates that a crash cannot leave half-done for long.

libgit2's ref transaction is atomic against other writers (every ref is
locked first) but not against a crash between its lock-file renames.  So an
update of several refs first writes an intent journal
(``<gitdir>/jp/ops/<id>.json``: every ref with its expected old and new
value), then runs the transaction, then deletes the journal.  ``repair``
(run when a store is opened) finishes whatever a journal describes: refs
still at their old value are moved forward, so the operation completes.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

import pygit2

from gitstore.errors import ConcurrentUpdate

SYMBOLIC = "symbolic:"


@dataclass(frozen=True)
class RefUpdate:
    """Move ``name`` from ``old`` to ``new`` (None = absent).

    Values are commit ids, or ``symbolic:<refname>`` for a symbolic ref.
    ``old`` of ``"*"`` means "whatever it is now" (used for JP_HEAD).
    """

    name: str
    old: str | None
    new: str | None


def current(repo: pygit2.Repository, name: str) -> str | None:
    try:
        ref = repo.lookup_reference(name)
    except (KeyError, pygit2.InvalidSpecError):
        return None
    if ref.type == pygit2.enums.ReferenceType.SYMBOLIC:
        return SYMBOLIC + str(ref.target)
    return str(ref.target)


def _journal_dir(gitdir: Path) -> Path:
    return gitdir / "jp" / "ops"


def _write_journal(gitdir: Path, updates: list[RefUpdate], message: str) -> Path:
    folder = _journal_dir(gitdir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{uuid.uuid4().hex}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"message": message, "updates": [asdict(u) for u in updates]}))
    os.replace(tmp, path)
    return path


def _run(repo: pygit2.Repository, updates: list[RefUpdate], message: str, check: bool) -> None:
    with repo.transaction() as txn:
        for u in updates:
            txn.lock_ref(u.name)
        for u in updates:
            now = current(repo, u.name)
            if check and u.old != "*" and now != u.old:
                raise ConcurrentUpdate(u.name)
            if not check and now == u.new:
                continue
            if u.new is None:
                if now is not None:
                    txn.remove(u.name)
            elif u.new.startswith(SYMBOLIC):
                txn.set_symbolic_target(u.name, u.new[len(SYMBOLIC) :], message=message)
            else:
                txn.set_target(u.name, pygit2.Oid(hex=u.new), message=message)


def apply(repo: pygit2.Repository, gitdir: Path, updates: list[RefUpdate], message: str) -> None:
    """All of ``updates`` or none of them; a crash midway is finished by ``repair``."""
    journal = _write_journal(gitdir, updates, message)
    try:
        _run(repo, updates, message, check=True)
    except ConcurrentUpdate:
        journal.unlink(missing_ok=True)
        raise
    except (pygit2.GitError, OSError) as exc:
        journal.unlink(missing_ok=True)
        raise ConcurrentUpdate(str(exc)) from None
    journal.unlink(missing_ok=True)


def repair(repo: pygit2.Repository, gitdir: Path) -> int:
    """Finish every operation a crash interrupted.  Returns how many were found."""
    folder = _journal_dir(gitdir)
    if not folder.is_dir():
        return 0
    found = 0
    for path in sorted(folder.glob("*.json")):
        found += 1
        try:
            data = json.loads(path.read_text())
            updates = [RefUpdate(**u) for u in data["updates"]]
        except (ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)
            continue
        states = [current(repo, u.name) for u in updates]
        moved = [s == u.new for s, u in zip(states, updates, strict=True)]
        untouched = [s == u.old or u.old == "*" for s, u in zip(states, updates, strict=True)]
        if all(moved) or (all(untouched) and not any(moved)):
            # nothing started (the writer died before the transaction) or all done
            path.unlink(missing_ok=True)
            continue
        try:
            _run(repo, updates, data.get("message", "jp repair"), check=False)
        except (pygit2.GitError, OSError, ConcurrentUpdate):
            continue
        path.unlink(missing_ok=True)
    return found
