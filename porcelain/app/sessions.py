"""Importing other tools' sessions (Claude Code, Codex) into conversations, and back.

One conversation per session file, found again on the next import by the
tool and the file's path relative to the tool's root:

- a file seen for the first time is a new conversation (a subagent stream's
  is forked from its session's conversation);
- the same records again write nothing;
- a file that grew appends the events of its new records (the mapping of a
  record never depends on later ones, so these are the events a one-shot
  import of the longer file gives);
- a file whose earlier records changed is imported as a fork of the old
  conversation at the last record both share: both versions are kept, and the
  next import follows the new one.

Each conversation is written whole or not at all (objects first, then its
ref), so an import killed at any point leaves no half-imported session, and
the next one completes it.

The position an import reached in each file (the bytes read, their SHA-1,
the records they held) is kept in the store's cache for the conversation's
tip: a file whose bytes up to there are unchanged is not parsed again when
nothing was added, and its stored events are not read back when something
was (the cost is reading and hashing the file).  Without it (a new cache, a
conversation that moved since) the stored records are compared instead.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from gitstore import CONVERSATION_TYPES, Event, Kind, Limits, Store, parse_time
from porcelain.app import session_sidefiles as sidefiles
from porcelain.app.describe import SUMMARY_VERSION, summaries
from porcelain.domain.importsummary import BLOCK, prefix_sha1
from porcelain.domain.sessionfiles import Found, open_session
from porcelain.domain.sessionident import session_cid
from porcelain.errors import UserError
from porcelain.jpformat.sessionlines import (
    SessionLines,
    Skipped,
    TooManyRecords,
    line_limit,
    scan,
)

if TYPE_CHECKING:
    from gitstore import Located
    from porcelain.jpformat.claude_code import Mapped

REASON = "jp conversation import"
LOCK = "session-import"  # <gitdir>/jp/locks/session-import.lock
WAIT_SECONDS = 300.0
WROTE = ("imported", "updated", "forked", "diverged")


class ImportBusy(UserError):
    def __init__(self) -> None:
        super().__init__(
            "another jp is importing sessions into this store and did not finish in 5 minutes",
            "see it with `jp doctor`, then run the import again",
        )


POSITION = "session-position/1/"  # + tool/path: the cache entry of a file's position


@dataclass
class FileOutcome:
    found: Found
    action: str  # imported | updated | forked | unchanged | empty | unreadable
    cid: str | None = None
    records: int = 0
    new_records: int = 0
    skipped: list[Skipped] = field(default_factory=list)  # the first few, named
    more_skipped: int = 0  # skipped lines past those named
    pending: bool = False
    error: str | None = None
    branches: int = 0  # rewind branches this import made conversations of (one more each)
    size: int | None = None  # the file's size when it was opened
    position: dict[str, Any] | None = None  # where this import left the file (size, sha1...)
    tip: str | None = None  # the conversation's commit that position is kept for
    notes: list[str] = field(default_factory=list)  # files beside it that were left out
    stored: int | None = None  # records the conversation holds, when more than the file's


@dataclass
class _Known:
    """The conversations earlier imports made, by (tool, path) and by main session."""

    by_path: dict[tuple[str, str], str] = field(default_factory=dict)
    by_session: dict[tuple[str, str], str] = field(default_factory=dict)
    forks: dict[str, dict[int, str]] = field(default_factory=dict)  # main -> first record -> id
    # (tool, session id) -> the conversation of jp's own that export gave it to
    given: dict[tuple[str, str], str] = field(default_factory=dict)

    def add(self, tool: str, path: str, session: str | None, agent: str | None, cid: str) -> None:
        self.by_path[(tool, path)] = cid
        if session and not agent:
            self.by_session[(tool, session)] = cid


KNOWN = "session-known"  # the cache entry of what earlier imports made, and for which refs
_KEPT = f"1/{SUMMARY_VERSION}"  # its layout, and the summaries' it was made from

# one conversation as ``known_imports`` keeps it: [id, tip, imported_from, replaces,
# whether it is a conversation's own start (not a fork's chain)]
_Entry = list[Any]


def known_imports(store: Store) -> _Known:
    """What earlier imports made, read from the cache entry kept for the refs as
    they are now; when they moved, only the conversations whose tip moved are
    summarized again (not every summary of the store, growing with it)."""
    state = store.refs.state()
    digest = hashlib.sha1(state.encode()).hexdigest() if state is not None else None
    kept = store.local.value(KNOWN, _KEPT)
    earlier = kept.get("entries") if isinstance(kept, dict) else None
    if not isinstance(earlier, list) or not all(map(_whole, earlier)):  # none, or damaged
        earlier = []
    elif digest is not None and kept.get("refs") == digest:
        return _known_from(earlier)
    entries = _entries(store, earlier)
    if digest is not None:
        store.local.keep_value(KNOWN, _KEPT, {"refs": digest, "entries": entries})
    return _known_from(entries)


def _entries(store: Store, kept: list[Any]) -> list[_Entry]:
    """Every conversation's entry; those of an unmoved tip taken from ``kept``."""
    earlier = {(entry[0], entry[1]): entry for entry in kept}
    located = store.refs.list(archived=None)
    moved = [loc for loc in located if (loc.cid, loc.tip) not in earlier]
    facts = summaries(store, moved) if moved else {}
    out = []
    for loc in located:
        entry = earlier.get((loc.cid, loc.tip))
        if entry is None:
            s = facts[loc.tip]
            own = s.get("start_id") == loc.cid
            entry = [loc.cid, loc.tip, s.get("imported_from"), s.get("replaces"), own]
        out.append(entry)
    return out


def _whole(entry: Any) -> bool:
    """Whether a kept entry has the shape ``_entries`` gives it."""
    return (
        isinstance(entry, list)
        and len(entry) == 5
        and isinstance(entry[0], str)
        and isinstance(entry[1], str)
        and (entry[2] is None or isinstance(entry[2], dict))
    )


def _known_from(entries: list[_Entry]) -> _Known:
    rows = [e for e in entries if e[4]]
    replaced = {e[3] for e in rows if e[3]}
    known = _Known()
    for cid, _, origin, _, _ in sorted(rows, key=lambda e: str(e[0])):
        if not origin:  # a fork of a session, or jp's own: export gives it a session id
            # lazy: the id jp's own conversations take in a tool's files
            from porcelain.jpformat.giveback import given_session

            for tool in ("claude-code", "codex"):
                known.given[(tool, given_session(cid))] = cid
        if not origin or cid in replaced or not origin.get("path"):
            continue
        if origin.get("branch"):  # a rewind branch of the session ``of``
            branch = origin["branch"]
            known.forks.setdefault(branch["of"], {})[branch["record"] - 1] = cid
            continue
        known.add(origin["tool"], origin["path"], origin.get("session"), origin.get("agent"), cid)
    return known


def _mapped(tool: str, records: list[dict[str, Any]]) -> Mapped:
    # lazy: an unchanged file (the frequent case: a hook's import) is never mapped
    from porcelain.jpformat import claude_code, codex

    if tool == codex.TOOL:
        found = codex.map_records(records)
        return claude_code.Mapped(found.groups, found.session, None)
    return claude_code.map_records(records)


def import_files(
    store: Store,
    tool: str,
    files: Sequence[Found],
    limits: Limits,
    progress: Callable[[FileOutcome], None] | None = None,
    redact: bool = False,
) -> list[FileOutcome]:
    """Import each file in turn (sessions before their subagents).  One import of
    sessions at a time per store (two hooks firing together would both create the
    same new session): a second one waits for the first.  ``redact``
    (``redaction.on_import``): each file's records are redacted as they are read,
    before they are mapped, compared with the stored ones or written."""
    out = []
    with store.refs.hold_named(LOCK, WAIT_SECONDS, ImportBusy()):
        known = known_imports(store)
        # the new sessions go into one set of packs, their refs created together
        with store.log.batch() as batch:
            for found in files:
                outcome = _import_one(store, tool, found, limits, known, redact)
                out.append(outcome)
                if progress:
                    progress(outcome)
        taken = []
        for outcome in out:  # an id another writer took meanwhile: created under a fresh one
            if outcome.cid in batch.renamed:
                taken.append((outcome, outcome.cid))
                outcome.cid = batch.renamed[outcome.cid]
        for outcome, wanted in taken:
            _taken_by_the_session(store, tool, outcome, wanted, limits, out)
    if any(o.action in WROTE for o in out):
        store.local.maintain()  # a pack per new conversation: git gc --auto when past its limit
    return out


def _taken_by_the_session(
    store: Store,
    tool: str,
    outcome: FileOutcome,
    wanted: str,
    limits: Limits,
    out: list[FileOutcome],
) -> None:
    """A session's id that another writer (a `jp pull`) took between this import's
    look and its write, with the same session: the conversation just made under a fresh
    id is a second one of the session, so it is taken back and the file imported again
    as a re-import of the one that is there (behind, equal or ahead)."""
    # lazy: only after a creation lost its id
    from porcelain.jpformat.giveback import origin_of

    made, there = outcome.cid, store.refs.locate(wanted)
    if made is None or there is None or store.refs.locate(made) is None:
        return
    mine = origin_of(store.log.load(made).events) or {}
    theirs = origin_of(store.log.load(wanted).events) or {}
    keys = ("format", "session", "agent")
    if any(mine.get(k) != theirs.get(k) for k in keys) or theirs.get("branch"):
        return
    store.refs.delete(made, f"{REASON}: {made} is {wanted}, which a pull brought meanwhile")
    again = _import_one(store, tool, outcome.found, limits, known_imports(store))
    out[next(i for i, o in enumerate(out) if o is outcome)] = again


def _import_one(
    store: Store, tool: str, found: Found, limits: Limits, known: _Known, redact: bool = False
) -> FileOutcome:
    max_line = line_limit(limits.max_event_bytes)
    cid = known.by_path.get((tool, found.rel))
    where = store.refs.locate(cid) if cid else None
    try:  # read a line at a time: what is held is one session's records, never its bytes
        with open_session(found.path) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limits.max_file_bytes:
                over = f"{size:,} bytes, over the {limits.max_file_bytes:,} a session file may hold"
                return FileOutcome(found, "unreadable", error=over)
            position = (
                _position(store, tool, found.rel, where.tip, handle, max_line) if where else None
            )
            if where and position:
                pending = _nothing_after(handle)
                if pending is not None:
                    return _unchanged(found, where, position, pending, size)
            handle.seek(0)
            lines = scan(handle, max_line)
    except OSError as exc:
        return FileOutcome(found, "unreadable", error=exc.strerror or str(exc))
    except TooManyRecords as exc:
        return FileOutcome(found, "unreadable", error=str(exc))
    seen = position["lines"] if position else 0
    outcome = FileOutcome(
        found,
        "empty",
        records=len(lines.records),
        skipped=[s for s in lines.skipped if s.line > seen],
        more_skipped=lines.skipped_total - len(lines.skipped),
        pending=lines.pending,
        size=size,
    )
    if not lines.records:
        return outcome
    if redact:  # before the mapping: the same file always redacts the same way, so a
        # re-import compares the stored records with these, finds them equal, writes nothing
        from porcelain.app.redaction import redacted_import  # lazy: the scanner, when asked

        lines.records = redacted_import(lines.records)[0]
    mapped = _mapped(tool, lines.records)
    groups, session, agent = mapped.groups, mapped.session, mapped.agent
    if agent is None and found.agent:
        agent = Path(found.rel).stem.removeprefix("agent-")
    session = session or _session_from_path(found)
    imported = _imported(tool, session, agent, found.rel)
    side: list[tuple[str, bytes]] = []
    if tool == "claude-code" and found.agent:  # agent-X.meta.json beside agent-X.jsonl
        side, outcome.notes = sidefiles.beside(found.path)
    if redact and side:
        side = redacted_import([], side)[1]
    forks = known.forks.get(cid, {}) if cid else {}
    if mapped.forks or forks:
        # lazy: with the mappers, only for a file that changed
        from porcelain.app.session_branches import import_branched

        parent = known.by_session.get((tool, session)) if agent else None
        known_records = _vouched(position)
        with store.log.unbatched():  # its branches start on the commits it writes
            outcome.action, outcome.cid, outcome.new_records, made = import_branched(
                store, cid, mapped, lines.records, imported, parent, forks, known_records
            )
        before = forks if outcome.action != "forked" else {}
        outcome.branches = len(set(made.values()) - set(before.values()))
        known.forks[outcome.cid] = made
    elif cid is None and (same := _same_session(store, known, imported, groups)):
        with store.log.unbatched():  # it may be one this import created: read it back
            _update(store, same, lines, groups, imported, outcome, None)
    elif cid is None and not agent and (mine := known.given.get((tool, session))):
        _update(store, mine, lines, groups, imported, outcome, None)
    elif cid is None:
        parent = known.by_session.get((tool, session)) if agent else None
        last = groups[-1][-1]["timestamp"]
        extra = sidefiles.new_events(side, {}, last)
        outcome.cid = _create(store, groups, imported, parent, extra)
        outcome.action, outcome.new_records = "imported", len(groups)
        side = []
    else:
        known_records = _vouched(position)
        _update(store, cid, lines, groups, imported, outcome, known_records)
    assert outcome.cid is not None
    if side:
        _keep_side_files(store, outcome, side)
    known.add(tool, found.rel, session, agent, outcome.cid)
    made = known.forks.get(outcome.cid, {})
    _keep_position(store, tool, found.rel, outcome, made, lines, max_line)
    return outcome


def _same_session(
    store: Store, known: _Known, imported: dict[str, Any], groups: list[list[Event]]
) -> str | None:
    """The conversation that already holds this session (the same tool, session id and
    agent) though its file is at another path: imported from another folder, pulled from
    another machine, or created while this import ran.  One session is one conversation,
    so the file is a re-import of it, never a second conversation under a fresh id."""
    tool, session, agent = imported["format"], imported["session"], imported["agent"]
    if not agent and (found := known.by_session.get((tool, session))):
        return found
    wanted = session_cid(tool, session, agent, _first_time(_flat(groups)))
    if wanted is None or not store.refs.exists(wanted):
        return None
    # lazy: with the mappers, only for a file whose session is stored under another path
    from porcelain.jpformat.giveback import origin_of

    origin = origin_of(store.log.load(wanted).events) or {}
    same = (origin.get("format"), origin.get("session"), origin.get("agent")) == (
        tool,
        session,
        agent,
    )
    return wanted if same and not origin.get("branch") else None


def _vouched(position: dict[str, Any] | None) -> int | None:
    """The records a kept position says the conversation holds as the file's start
    (None: none kept, or the conversation holds more than the file, which was behind)."""
    if position is None:
        return None
    records = position["records"]
    return records if position.get("stored", records) == records else None


def _unchanged(
    found: Found, where: Located, position: dict[str, Any], pending: bool, size: int
) -> FileOutcome:
    records = position["records"]
    return FileOutcome(
        found,
        "unchanged",
        where.cid,
        records,
        pending=pending,
        size=size,
        position=position,
        tip=where.tip,
    )


def _position(
    store: Store, tool: str, rel: str, tip: str, handle: BinaryIO, max_line: int
) -> dict[str, Any] | None:
    """The position recorded for this file at ``tip``, if the file still starts with it
    (``handle`` is left after those bytes)."""
    found = store.local.value(POSITION + f"{tool}/{rel}", tip)
    if not isinstance(found, dict) or found.get("max_line") != max_line:
        return None
    size = found.get("size")
    if not isinstance(size, int) or not isinstance(found.get("records"), int):
        return None
    if prefix_sha1(handle, size) != found.get("sha1"):
        return None
    if not _branches_stayed(store, found.get("forks", {})):
        return None
    return found if isinstance(found.get("lines"), int) else None


def _nothing_after(handle: BinaryIO) -> bool | None:
    """After the recorded position: None when a whole line follows (the file grew),
    else whether a line is being written there."""
    pending = False
    while block := handle.read(BLOCK):
        if b"\n" in block:
            return None
        pending = pending or bool(block.strip())
    return pending


def _branches_stayed(store: Store, forks: Any) -> bool:
    """Whether each rewind branch a position names is still at the tip it names."""
    if not isinstance(forks, dict):
        return False
    for cid, tip in forks.items():
        where = store.refs.locate(cid) if isinstance(cid, str) else None
        if where is None or where.tip != tip:
            return False
    return True


def _keep_position(
    store: Store,
    tool: str,
    rel: str,
    outcome: FileOutcome,
    forks: dict[int, str],
    lines: SessionLines,
    max_line: int,
) -> None:
    where = store.refs.locate(outcome.cid) if outcome.cid else None
    if where is None:
        return
    value: dict[str, Any] = {
        "size": lines.size,
        "sha1": lines.sha1,
        "records": len(lines.records),
        "lines": lines.newlines,
        "max_line": max_line,
    }
    if outcome.stored is not None:  # the file is behind its conversation
        value["stored"] = outcome.stored
    if forks:  # a rewound session: the position holds while none of its branches moved
        value["forks"] = {c: t.tip for c in forks.values() if (t := store.refs.locate(c))}
    store.local.keep_value(POSITION + f"{tool}/{rel}", where.tip, value)
    outcome.position, outcome.tip = value, where.tip


def _session_from_path(found: Found) -> str:
    rel = Path(found.rel)
    return rel.parent.parent.name if found.agent and rel.parent.name == "subagents" else rel.stem


def _imported(tool: str, session: str, agent: str | None, rel: str) -> dict[str, Any]:
    return {"format": tool, "session": session, "agent": agent, "path": rel}


def _flat(groups: Sequence[list[Event]]) -> list[Event]:
    return [e for g in groups for e in g]


def _keep_side_files(store: Store, outcome: FileOutcome, side: list[tuple[str, bytes]]) -> None:
    """Add the files beside a stream whose bytes are not the ones its conversation keeps."""
    assert outcome.cid is not None
    where = store.refs.require(outcome.cid)
    events, _ = store.log.read_chain(where.tip)
    new = sidefiles.new_events(side, sidefiles.kept(events), events[-1]["timestamp"])
    if new:
        store.log.append(outcome.cid, new, where.tip, f"{REASON} {outcome.cid}")
        if outcome.action == "unchanged":
            outcome.action = "updated"


def _create(
    store: Store,
    groups: list[list[Event]],
    imported: dict[str, Any],
    parent: str | None,
    extra: Sequence[Event] = (),
) -> str:
    # lazy: only a file that changed writes
    from porcelain.app.lifecycle import publish, start_event

    events = _flat(groups)
    fork = None
    if parent is not None:
        point = _point_before(store, parent, _first_time(events))
        fork = {"conversation_id": parent, "commit": point} if point else None

    def chain(cid: str) -> list[Event]:
        start = start_event(cid, imported=imported, forked_from=fork)
        start["timestamp"] = events[0]["timestamp"]
        return [start, *events, *extra]

    wanted = session_cid(
        imported["format"], imported["session"], imported["agent"], _first_time(events)
    )
    return publish(store, chain, None, REASON, cid=wanted, packed=True)


def _point_before(store: Store, parent: str, moment: str) -> str | None:
    """The commit of ``parent``'s last event dated at or before ``moment`` (its first
    when none is): where a subagent stream starts in its session, the same on every
    machine whatever more of the session each one has imported."""
    where = store.refs.locate(parent)
    if where is None:
        return None
    events, commits = store.log.read_chain(where.tip)
    try:
        limit = parse_time(moment)
        point = commits[0]
        for event, commit in zip(events, commits, strict=True):
            if parse_time(str(event["timestamp"])) > limit:
                break
            point = commit
    except (ValueError, KeyError):
        return where.tip
    return point


def _first_time(events: Sequence[Event]) -> str:
    """The time of the first event dated by its record (records before the first
    dated one take the epoch)."""
    # lazy: loaded with the mappers, by a file that changed
    from porcelain.jpformat.sessionmap import EPOCH

    stamps = [str(e["timestamp"]) for e in events]
    return next((t for t in stamps if not t.startswith(EPOCH[:10])), stamps[0])


def _update(
    store: Store,
    cid: str,
    lines: SessionLines,
    groups: list[list[Event]],
    imported: dict[str, Any],
    outcome: FileOutcome,
    known_records: int | None,
) -> None:
    """Bring ``cid`` up to the file: nothing for a file that is behind or equal, an
    append for one that went on, a fork for one that went on from a point before jp
    turns were added (the tool never saw them), a fork for one whose records contradict
    the stored ones.  With ``known_records`` (the recorded position vouches for the
    file's start) the stored events are not read back."""
    # lazy: only a file that changed writes
    from porcelain.jpformat.sessionmap import records_of

    where = store.refs.require(cid)
    outcome.cid = cid
    if known_records is not None and known_records <= len(groups):
        _append(store, cid, where.tip, groups[known_records:], outcome)
        return
    events, commits = store.log.read_chain(where.tip)
    if _against_given(store, cid, events, commits, lines, groups, imported, outcome):
        return
    stored = records_of(events)
    carriers = [i for i, e in enumerate(events) if _carries(e)]
    if stored == lines.records[: len(stored)]:
        last = carriers[len(stored) - 1] + len(groups[len(stored) - 1]) - 1 if stored else 0
        new = groups[len(stored) :]
        if new and any(_jp_turn(e) for e in events[last + 1 :]):
            base = commits[min(last, len(commits) - 1)]
            shared = stored[-1] if stored else None
            _fork_off(store, cid, base, events, new, imported, outcome, "continues", shared)
            outcome.new_records = len(new)
            return
        _append(store, cid, where.tip, new, outcome)
        return
    if lines.records == stored[: len(lines.records)]:  # behind its conversation
        outcome.action, outcome.stored = "unchanged", len(stored)
        return
    same = 0
    while same < min(len(stored), len(lines.records)) and stored[same] == lines.records[same]:
        same += 1
    base = commits[carriers[same] - 1] if same < len(carriers) else commits[-1]
    shared = stored[same - 1] if same else None
    _fork_off(store, cid, base, events, groups[same:], imported, outcome, "changed", shared)
    outcome.new_records = len(groups) - same


def _against_given(
    store: Store,
    cid: str,
    events: list[Event],
    commits: list[str],
    lines: SessionLines,
    groups: list[list[Event]],
    imported: dict[str, Any],
    outcome: FileOutcome,
) -> bool:
    """Compare the file with the records ``export`` writes for ``cid``, jp's turns
    included (False: it holds no jp turns, the kept records decide).  The file is behind
    or equal (nothing), went on after them (an append: the tool resumed an export), or
    went on from a point before them (the tool's branch)."""
    # lazy: only a file that changed
    from porcelain.jpformat import giveback

    cwd = giveback.file_cwd(imported["format"], lines.records)
    pieces = giveback.plan(imported["format"], cid, events, cwd, lines.max_line)[1]
    if not any(p.jp for p in pieces):
        return False
    given = [p.record for p in pieces]
    found = lines.records
    if found == given[: len(found)]:
        outcome.action = "unchanged"
        outcome.stored = len(given) if len(given) > len(found) else None
        return True
    if given == found[: len(given)]:
        _append(store, cid, commits[-1], groups[len(given) :], outcome)
        return True
    same = 0
    while same < min(len(given), len(found)) and given[same] == found[same]:
        same += 1
    if same and all(p.jp for p in pieces[same:]):  # the tool went on beside jp's turns
        base = commits[min(pieces[same - 1].end, len(commits) - 1)]
        shared = given[same - 1]
        _fork_off(store, cid, base, events, groups[same:], imported, outcome, "continues", shared)
        outcome.new_records = len(groups) - same
        return True
    return False


def _fork_off(
    store: Store,
    cid: str,
    base: str,
    events: Sequence[Event],
    groups: Sequence[list[Event]],
    imported: dict[str, Any],
    outcome: FileOutcome,
    why: str,
    shared: dict[str, Any] | None,
) -> None:
    """The tool's records from ``base`` on, as a fork of ``cid`` that the next import
    follows (``imported.replaces``; ``why``: ``changed`` for a file whose records
    changed, ``continues`` for one that went on beside jp's turns).  Its id is made
    from the divergence (``shared``: the last record both hold; the first of the
    fork), so two machines that see the same one make the same branch."""
    # lazy: only a file that changed writes
    from porcelain.app.lifecycle import publish, start_event
    from porcelain.domain.sessionident import branch_cid
    from porcelain.jpformat.giveback import carried

    origin = {"conversation_id": cid, "commit": base}
    rest = _flat(groups)
    first = carried(rest[0]) if rest else None
    wanted = branch_cid(
        str(imported["format"]),
        str(imported["session"]),
        imported.get("agent"),
        shared,
        first,
        str(rest[0]["timestamp"]) if rest else str(events[-1]["timestamp"]),
    )
    facts = {**imported, "replaces": cid, "because": why}

    def chain(new: str) -> list[Event]:
        start = start_event(new, imported=facts, forked_from=origin)
        start["timestamp"] = rest[0]["timestamp"] if rest else events[-1]["timestamp"]
        return [start, *rest]

    label = "changed file" if why == "changed" else "tool went on beside jp's turns"
    outcome.cid = publish(
        store, chain, base, f"{REASON} ({label}) {cid} ->", cid=wanted, packed=True
    )
    outcome.action = "forked" if why == "changed" else "diverged"


def _jp_turn(event: Event) -> bool:
    """An event of a turn jp added (a prompt, an answer, a tool call); called only on
    the events after the last record's."""
    return event.get("type") in CONVERSATION_TYPES and not _carries(event)


def _append(store: Store, cid: str, tip: str, new: list[list[Event]], outcome: FileOutcome) -> None:
    outcome.action = "updated" if new else "unchanged"
    outcome.new_records = len(new)
    if new:
        store.log.append(cid, _flat(new), tip, f"{REASON} {cid}")


def _carries(event: Event) -> bool:
    # lazy: loaded with the mappers, by a file that changed
    from porcelain.jpformat.sessionmap import RECORD_TYPE, SOURCE_KEY

    if event.get("type") == RECORD_TYPE:
        return True
    meta = event.get("metadata")
    return (
        isinstance(meta, dict)
        and SOURCE_KEY in meta
        and event.get("type") != Kind.CONVERSATION_START
    )
