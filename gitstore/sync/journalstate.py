"""When a pull from a remote reconciles, and when it has nothing to do.

The store's count of journal pulls since the last reconcile, and how many
conversations that reconcile found, are kept in ``jp/journal/<remote>.json`` (a
count only: lost, the next pull reconciles).  ``reconcile_due`` and
``nothing_to_pull`` are the rules, written once: the pull's fetch
(``gitstore.sync.fetch``) applies them to the journal it just fetched, and
``pull_quick`` to the remote's files before anything heavy loads.

Kept apart from the journal itself so that a look at it loads no libgit2.
"""

from __future__ import annotations

from pathlib import Path

from gitstore.errors import EnvironmentFault
from gitstore.fs import atomic

RECONCILE_EVERY = 50  # journal pulls between two reconciles
JOURNAL_FROM = 1000  # conversations on the remote before a pull trusts the journal


def reconcile_due(gitdir: Path, remote: str, journal_from: int = JOURNAL_FROM) -> str | None:
    """Why a pull from ``remote`` lists and fetches every ref instead of what the
    journal names (None: the journal may be trusted)."""
    if refs_at_reconcile(gitdir, remote) < journal_from:
        return "a small remote: every pull reconciles"
    if pulls_since_reconcile(gitdir, remote) >= RECONCILE_EVERY:
        return "a reconcile is due"
    return None


def nothing_to_pull(copy: str | None, journal: str | None, recheck: bool) -> bool:
    """Whether a journal pull (one ``reconcile_due`` allows) has nothing to fetch,
    check or move: the remote's ``journal`` is still the ``copy`` the last pull
    finished with, and no refused ref waits to be checked again (``recheck``)."""
    return copy is not None and journal == copy and not recheck


def _state_path(gitdir: Path, remote: str) -> Path:
    return gitdir / "jp" / "journal" / f"{remote}.json"


def _state(gitdir: Path, remote: str) -> dict[str, object]:
    return atomic.read_json(_state_path(gitdir, remote))


def _count(data: dict[str, object], key: str, missing: int) -> int:
    value = data.get(key)
    return value if isinstance(value, int) and value >= 0 else missing


def pulls_since_reconcile(gitdir: Path, remote: str) -> int:
    return _count(_state(gitdir, remote), "pulls", RECONCILE_EVERY)


def refs_at_reconcile(gitdir: Path, remote: str) -> int:
    """How many conversations the last reconcile found on the remote (0: unknown)."""
    return _count(_state(gitdir, remote), "refs", 0)


def record_pull(gitdir: Path, remote: str, reconciled: bool, refs: int | None = None) -> bool:
    """Count this pull (a reconcile starts the count again and says, in ``refs``,
    how many conversations it found); False when the count could not be written."""
    data = _state(gitdir, remote)
    count = 0 if reconciled else _count(data, "pulls", RECONCILE_EVERY) + 1
    found = refs if refs is not None else _count(data, "refs", 0)
    return _write(gitdir, remote, count, found)


def record_refs(gitdir: Path, remote: str, refs: int) -> None:
    """After a push: the remote holds ``refs`` conversations now (a push fetched
    them all, or the journal's names, and its own refs went in atomically), so a
    store that made a remote big by pushing to it trusts its journal from then on."""
    data = _state(gitdir, remote)
    if _count(data, "refs", 0) == refs:
        return
    _write(gitdir, remote, _count(data, "pulls", RECONCILE_EVERY), refs)


def _write(gitdir: Path, remote: str, pulls: int, refs: int) -> bool:
    """The counts, or False when they could not be written: only counts, so the next
    pull reconciles sooner or later."""
    try:
        atomic.write_json(_state_path(gitdir, remote), {"pulls": pulls, "refs": refs})
    except (OSError, EnvironmentFault):
        return False
    return True
