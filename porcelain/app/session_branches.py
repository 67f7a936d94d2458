"""A Claude Code session that was rewound: one conversation per branch.

Branch 0 (the session's first line of records) is the session's conversation,
found again by its path.  Each `/rewind` branch (``jpformat/rewind.py``) is a
conversation forked from its parent branch's at the record the rewind went
back to: it shares that history, and its start event's ``imported.rewind``
names the session's conversation (``of``) and the branch's first record
(``record``, 1-based in the file).  The events of a branch's records note each
record's place in the file, so `export` puts the file back together whole and
in order (``session_records``).

Branches are written in order (a fork needs its parent's commit at the fork
point), each whole or not at all.  An import killed between two leaves the
earlier ones written; the next import compares each branch's stored records
with the file's (``stored_counts``) and writes the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gitstore import Event, Kind, Store
from porcelain.app.lifecycle import publish, start_event
from porcelain.domain.sessionident import branch_cid, session_cid
from porcelain.jpformat.claude_code import Mapped
from porcelain.jpformat.giveback import carried
from porcelain.jpformat.rewind import Fork
from porcelain.jpformat.sessionmap import indexed_records, records_of

REASON = "jp conversation import"


def members(mapped: Mapped) -> list[list[int]]:
    """The record indexes of each branch, in file order."""
    out: list[list[int]] = [[] for _ in range(len(mapped.forks) + 1)]
    for index, branch in enumerate(mapped.branch_of or [0] * len(mapped.groups)):
        out[branch].append(index)
    return out


def own_events(events: Sequence[Event]) -> Sequence[Event]:
    """A chain's events after its last start (a fork's own, without the shared history)."""
    starts = [i for i, e in enumerate(events) if e.get("type") == Kind.CONVERSATION_START]
    return events[starts[-1] + 1 :] if starts else events


def _stored(store: Store, cid: str, main: bool) -> list[dict[str, Any]]:
    events, _ = store.log.read_chain(store.refs.require(cid).tip)
    return records_of(events if main else own_events(events))


def counts_at(mapped: Mapped, known: int) -> list[int]:
    """How many records of each branch the first ``known`` records hold."""
    return [sum(1 for i in idx if i < known) for idx in members(mapped)]


def stored_counts(
    store: Store, main: str, forks: dict[int, str], mapped: Mapped, records: list[dict[str, Any]]
) -> list[int] | None:
    """How many records of each branch are stored already (``forks``: the branch
    conversations by their first record); None when a stored branch is not the
    start of the file's (the file changed)."""
    branches = members(mapped)
    number = {fork.first: n + 1 for n, fork in enumerate(mapped.forks)}
    if any(first not in number for first in forks):
        return None
    counts = [0] * len(branches)
    owners = {0: main, **{number[first]: cid for first, cid in forks.items()}}
    for branch, cid in owners.items():
        stored = _stored(store, cid, branch == 0)
        wanted = [records[i] for i in branches[branch][: len(stored)]]
        if stored != wanted:
            return None
        counts[branch] = len(stored)
    return counts


def write_branches(
    store: Store,
    mapped: Mapped,
    records: list[dict[str, Any]],
    imported: dict[str, Any],
    owners: list[str | None],
    counts: list[int],
) -> int:
    """Write each branch's records past ``counts`` (appended to its conversation in
    ``owners``, or as a new fork); ``owners`` is filled in.  Returns the records written."""
    written = 0
    for branch, indexes in enumerate(members(mapped)):
        new = indexes[counts[branch] :]
        if not new:
            continue
        events = [e for i in new for e in mapped.groups[i]]
        cid = owners[branch]
        if cid is None:
            fork = mapped.forks[branch - 1]
            main, parent = owners[0], owners[fork.parent]
            assert main is not None and parent is not None  # written before, in order
            rewind = {"of": main, "record": fork.first + 1}
            owners[branch] = _fork(
                store, parent, fork, mapped, records, {**imported, "rewind": rewind}, events
            )
        else:
            store.log.append(cid, events, store.refs.require(cid).tip, f"{REASON} {cid}")
        written += len(new)
    return written


def _fork(
    store: Store,
    parent: str,
    fork: Fork,
    mapped: Mapped,
    records: list[dict[str, Any]],
    imported: dict[str, Any],
    events: list[Event],
) -> str:
    """A branch's conversation, forked from ``parent``'s at the commit of the last
    event of the record the rewind went back to."""
    chain, commits = store.log.read_chain(store.refs.require(parent).tip)
    target, size = records[fork.at], len(mapped.groups[fork.at])
    point = commits[-1]
    for pos in range(len(chain) - 1, -1, -1):
        found = indexed_records(chain[pos : pos + 1])
        if found and found[0][1] == target:
            point = commits[min(pos + size - 1, len(commits) - 1)]
            break
    origin = {"conversation_id": parent, "commit": point}

    def start(cid: str) -> list[Event]:
        first = start_event(cid, imported=imported, forked_from=origin)
        first["timestamp"] = events[0]["timestamp"]
        return [first, *events]

    wanted = branch_cid(  # the same branch on every machine that imports the rewind
        str(imported.get("format")),
        str(imported.get("session")),
        imported.get("agent"),
        target,
        carried(events[0]) if events else None,
        str(events[0]["timestamp"]) if events else "",
    )
    return publish(
        store, start, point, f"{REASON} (rewind) {parent} ->", cid=wanted, packed=True
    )


def import_branched(
    store: Store,
    cid: str | None,
    mapped: Mapped,
    records: list[dict[str, Any]],
    imported: dict[str, Any],
    parent: str | None,
    forks: dict[int, str],
    known_records: int | None,
) -> tuple[str, str, int, dict[int, str]]:
    """Import a file with rewind branches (or whose conversation has some):
    ``(action, the session's conversation, records written, its branches by first
    record)``.  ``cid``: the conversation an earlier import made (None: a new file);
    ``parent``: a subagent stream's session; ``known_records``: the records the
    recorded position vouches for."""
    counts: list[int] | None = None
    if cid is not None:
        if known_records is not None and all(
            f.first in forks for f in _before(mapped, known_records)
        ):
            counts = counts_at(mapped, known_records)
        else:
            counts = stored_counts(store, cid, forks, mapped, records)
    if cid is not None and counts is not None:
        owners: list[str | None] = [cid, *(forks.get(f.first) for f in mapped.forks)]
        written = write_branches(store, mapped, records, imported, owners, counts)
        action = "updated" if written else "unchanged"
    else:  # a new file, or a changed one: every branch anew (the old ones stay as they are)
        main = _main(store, mapped, imported, parent, cid)
        owners = [main, *(None for _ in mapped.forks)]
        first = len(members(mapped)[0])
        written = first + write_branches(
            store, mapped, records, imported, owners, [first, *(0 for _ in mapped.forks)]
        )
        action = "imported" if cid is None else "forked"
    main_cid = owners[0]
    assert main_cid is not None
    made = {f.first: c for f, c in zip(mapped.forks, owners[1:], strict=True) if c}
    return action, main_cid, written, made


def _before(mapped: Mapped, known: int) -> list[Fork]:
    return [f for f in mapped.forks if f.first < known]


def _main(
    store: Store, mapped: Mapped, imported: dict[str, Any], parent: str | None, old: str | None
) -> str:
    """The session's conversation for branch 0: a subagent's forked from its session
    (``parent``), a changed file's naming the one it replaces (``old``)."""
    events = [e for i in members(mapped)[0] for e in mapped.groups[i]]
    fork = None
    if old is not None:
        imported = {**imported, "replaces": old}
        parent = old
    if parent is not None:
        where = store.refs.locate(parent)
        fork = {"conversation_id": parent, "commit": where.tip} if where else None

    def chain(new: str) -> list[Event]:
        start = start_event(new, imported=imported, forked_from=fork)
        start["timestamp"] = events[0]["timestamp"] if events else start["timestamp"]
        return [start, *events]

    wanted = None
    if old is None and events:  # the session's own id, as on every machine (sessionident.py)
        dated = [e["timestamp"] for e in events if not e["timestamp"].startswith("1970-01-01")]
        wanted = session_cid(
            imported["format"],
            imported["session"],
            imported.get("agent"),
            dated[0] if dated else events[0]["timestamp"],
        )
    return publish(store, chain, None, REASON, cid=wanted, packed=True)


class BrokenBranches(ValueError):
    """Stored rewind branches whose record places do not fit together."""


def session_records(
    main_events: Sequence[Event], branches: Sequence[Sequence[Event]]
) -> list[dict[str, Any]]:
    """The session file's records, in order: the main conversation's, with each
    branch conversation's own records put back at the places they note."""
    main = records_of(main_events)
    placed: dict[int, dict[str, Any]] = {}
    for events in branches:
        for index, record in indexed_records(own_events(events)):
            if not isinstance(index, int) or isinstance(index, bool) or index in placed:
                raise BrokenBranches("a rewind branch's record has no place of its own")
            placed[index] = record
    total = len(main) + len(placed)
    if any(index < 0 or index >= total for index in placed):
        raise BrokenBranches("a rewind branch's record is placed outside the session")
    rest = iter(main)
    return [placed[i] if i in placed else next(rest) for i in range(total)]
