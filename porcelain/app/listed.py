"""The rows of `ls` from the cache's ordered listing: a limited listing reads what it shows.

``describe.listing`` makes a row from a tip's summary and the notes; this
module keeps those rows in the cache (``store.local.listing``) under the
refs' fingerprint (``store.refs.state``, no parse of ``packed-refs``) and the
notes' commits.  When either moved, the rows are brought up to date first:
with the notes unchanged, only the rows whose ref moved, appeared or went are
made again; with the notes moved (a title, a pin, a label), every row.  The
cache is never trusted over git: a ref moved by plain git or a pull changes
the fingerprint, and a store whose refs have no cheap fingerprint (a reftable,
a worktree) lists from git every time.  When only loose refs moved since the
rows were made (``packed-refs`` untouched: a write, a pull, plain git's
``update-ref``), only those refs are read, not every ref.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gitstore import Listed, Located, Store
from porcelain.app import describe
from porcelain.app.describe import SUMMARY_VERSION, listing
from porcelain.domain.idprefix import unique_length

Rank = Callable[[dict[str, Any]], float]  # where a row sorts (`lsview.rank`)

LISTING_VERSION = 1  # a new one when a row's fields or its order change
AGENT = 1  # an imported session's subagent stream or rewind branch (shown by --all)
REVIEW = 2  # a compaction review (left out by --no-reviews)
MOVED_MOST = 2000  # refs moved past which one listing of them all is cheaper than a read each


def _key(store: Store) -> str:
    """What a row depends on besides its own ref: the notes' commits and the versions."""
    own = store.notes.refs
    meta, source = store.refs.target(own.meta), store.refs.target(own.source)
    return f"{LISTING_VERSION}/{SUMMARY_VERSION} {meta} {source}"


def flags(row: dict[str, Any]) -> int:
    """The bits of a row that some listings leave out."""
    origin = row.get("imported_from") or {}
    agent = AGENT if origin.get("agent") or origin.get("branch") else 0
    return agent | (REVIEW if row.get("source_id") is not None else 0)


def _listed(loc: Located, row: dict[str, Any], rank: Rank) -> Listed:
    # a row whose objects are missing (a partial fetch) is made again next time
    again = "missing" in str(row.get("unreadable") or "")
    return Listed(
        loc.cid,
        "" if again else loc.tip,
        loc.archived,
        bool(row.get("pinned")),
        flags(row),
        rank(row),
        {**row, "active": False},
    )


def fresh(store: Store, rank: Rank) -> bool:
    """Bring the kept rows up to date with git; False when they cannot be (then list
    from git)."""
    refs = store.refs.state()
    if refs is None:
        return False
    key = _key(store)
    kept = store.local.listing.state()
    if kept == (refs, key):
        return True
    whole = kept is None or kept[1] != key
    moved = None if kept is None or whole else store.refs.moved_since(kept[0], refs)
    if moved is not None and len(moved) <= MOVED_MOST:  # only loose refs moved: read those
        found = [(cid, store.refs.locate(cid)) for cid in moved]
        changed = [loc for _, loc in found if loc is not None]
        gone = [cid for cid, loc in found if loc is None]
    else:
        located = store.refs.list(archived=None)
        known = {} if whole else store.local.listing.known()
        changed = [loc for loc in located if known.get(loc.cid) != (loc.tip, loc.archived)]
        present = {loc.cid for loc in located}
        gone = [cid for cid in known if cid not in present]
    by_id = {loc.cid: loc for loc in changed}
    rows = listing(store, changed, None) if changed else []
    put = [_listed(by_id[row["id"]], row, rank) for row in rows]
    if any(not x.tip for x in put):
        refs = ""  # not the refs' state: the next listing looks again
    return store.local.listing.update(refs, key, put, gone, whole=whole)


def recent(
    store: Store,
    rank: Rank,
    archived: Sequence[bool],
    hide: int,
    limit: int | None,
    active: str | None,
) -> tuple[list[dict[str, Any]], int] | None:
    """The last ``limit`` rows of the listing (``active`` last, as `ls` orders them),
    of those ``archived`` as asked and with no bit of ``hide``, and how many there are;
    None when the kept rows cannot answer (then list from git)."""
    if not fresh(store, rank):
        return None
    kept = store.local.listing
    got = kept.last(archived, hide, limit, active)
    mine = kept.row(active, archived, hide) if active else {}
    if got is None or mine is None:
        kept.forget()  # a damaged row: every row is made again next time
        return None
    rows, total = got
    if mine:
        if limit is not None and len(rows) >= limit:
            rows = rows[1:]
        rows.append(mine)
    for row in rows:
        row["active"] = row.get("id") == active
    if not all(isinstance(row.get("id"), str) for row in rows):
        kept.forget()
        return None
    return rows, total


def newest(
    store: Store,
    rank: Rank,
    which: tuple[Sequence[bool], int],
    page: tuple[int, int],
    active: str | None,
) -> tuple[list[dict[str, Any]], int] | None:
    """One page of the listing, the newest activity first (`jp serve`'s order):
    ``which`` is (archived as asked, the bits to hide), ``page`` is (its size, its
    offset); and how many rows there are.  None: the kept rows cannot answer."""
    if not fresh(store, rank):
        return None
    kept = store.local.listing
    got = kept.newest(which[0], which[1], page[0], page[1])
    if got is None or not all(isinstance(row.get("id"), str) for row in got[0]):
        kept.forget()  # a damaged row: every row is made again next time
        return None
    for row in got[0]:
        row["active"] = row["id"] == active
    return got


def shortest(store: Store, rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Each shown id's shortest unique prefix among every conversation's id."""
    out = {}
    for row in rows:
        before, after = store.local.listing.neighbours(row["id"])
        out[row["id"]] = unique_length(row["id"], before, after)
    return out


def titles(store: Store, start: str = "") -> list[tuple[str, str]]:
    """``describe.titles`` (what completion offers) of the ids that begin with
    ``start``, from the kept rows when they are up to date (no notes read, only
    those rows); else as ``describe`` makes them, which reads no chain, where
    making the rows would."""
    refs = store.refs.state()
    if refs is None or store.local.listing.state() != (refs, _key(store)):
        return [(cid, title) for cid, title in describe.titles(store) if cid.startswith(start)]
    every = store.local.listing.ids(start)
    live = [(cid, title) for cid, archived, title in reversed(every) if not archived]
    gone = [(cid, "[archived] " + title) for cid, archived, title in reversed(every) if archived]
    return live + gone
