"""Checks of the git objects a remote sent, with the rules of ``gitstore.boundary``.

A conversation ref must point at a commit, and from it down to the first
commit this store already has, every commit must be one event: at most one
parent (the previous event), a tree holding ``event.json`` and nothing else,
a blob within the size limit that is a valid event.  A notes ref must point
at a commit whose tree is a notes tree; the notes it adds are checked line
by line and what does not parse is dropped (never fatal).

Object sizes are read from headers before any content is loaded, so an
oversized blob is refused without being read into memory.

``screen`` runs these checks on every remote-tracking copy a fetch left
(``gitstore.sync.fetch``): names, what each ref points at, each
conversation's chain down to what this store already has.  A refused copy is
deleted, so neither pull nor push ever acts on it; a chain that is a commit
but not a valid one is kept under ``refs/jp/quarantine/``
(``gitstore.git.refs.quarantine``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from gitstore import boundary
from gitstore.errors import Refused
from gitstore.git import refs
from gitstore.git.refs import quarantine
from gitstore.sync.remotespecs import tracking_prefix

if TYPE_CHECKING:
    import pygit2

    from gitstore.sync.here import Here
    from gitstore.sync.transport import Transport
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

_KINDS = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}  # git's object type numbers
_NOTE = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_PART = re.compile(r"[0-9a-f]{2}")
BATCH = 64  # commits checked between two questions to the cache
KEEP_ROWS = 32 * 1024 * 1024  # event text kept per chain to fill the cache afterwards
Row = tuple[str, str | None, str]
DEFER_CACHE_AT = 100  # copies checked at once from which their events are not cached
JOURNAL = "jp/"  # the journal's copies, among the others but never screened as refs


def kind_of(repo: pygit2.Repository, oid: str | pygit2.Oid) -> tuple[str, int]:
    """An object's type and size, from its header (``missing`` if absent)."""
    try:
        kind, size = repo.odb.read_header(oid)
    except (KeyError, ValueError, pygit2.GitError):
        return "missing", 0
    return _KINDS.get(int(kind), "missing"), int(size)


class Remembered(Protocol):
    """What remembers the events this store already read or wrote (``store.log``)."""

    def known(self, commits: Sequence[str]) -> set[str]: ...


class Known:
    """Commits that need no check: this store's tips, what this run accepted,
    and what the cache holds (events this store already read or wrote)."""

    def __init__(self, cache: Remembered | None, tips: Iterable[str]) -> None:
        self.cache = cache
        self.ids = set(tips)

    def first_cached(self, oids: list[str]) -> int | None:
        if self.cache is None or not oids:
            return None
        found = self.cache.known(oids)
        return next((i for i, oid in enumerate(oids) if oid in found), None)


@dataclass
class ChainCheck:
    reason: str | None = None  # None: accepted
    keep: bool = False  # refused but worth keeping aside (quarantine)
    rows: list[Row] = field(default_factory=list)  # accepted events, for the cache


def check_chain(
    repo: pygit2.Repository,
    tip: str,
    known: Known,
    limits: boundary.Limits,
    kind: str | None = None,
) -> ChainCheck:
    """Whether the chain ending at ``tip`` may come in (down to a known commit);
    ``kind``: the tip's type, when the caller's listing read it already."""
    kind = kind or kind_of(repo, tip)[0]
    if kind != "commit":
        return ChainCheck(f"points at a {kind}, not a commit" if kind != "missing" else "missing")
    rows: list[Row] = []
    pending: list[str] = []
    kept = 0
    oid: str | None = tip
    while oid is not None and oid not in known.ids:
        try:
            row = _check_commit(repo, oid, limits)
        except KeyError:  # git's fetch checks connectivity; libgit2's may not
            return ChainCheck(f"commit {oid[:12]}: an object of it is missing")
        except _Bad as bad:
            return ChainCheck(f"commit {oid[:12]}: {bad.reason}", keep=bad.keep)
        kept += len(row[2])
        rows.append(row)
        pending.append(oid)
        oid = row[1]
        # the cache is asked early (a chain usually meets it at once), then every BATCH
        if (
            oid is not None
            and oid not in known.ids
            and (len(rows) in (1, 8) or len(pending) >= BATCH)
        ):
            if known.first_cached([*pending, oid]) is not None:
                break  # what lies below is in this store already
            pending = []
    known.ids.update(r[0] for r in rows)
    return ChainCheck(rows=rows if kept <= KEEP_ROWS else [])


class _Bad(Exception):
    def __init__(self, reason: str, keep: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.keep = keep


_HEAD = re.compile(
    rb"tree ([0-9a-f]{40}|[0-9a-f]{64})\n(?:parent ([0-9a-f]{40}|[0-9a-f]{64})\n)?"
    rb"author [^\n]*\ncommitter [^\n]*\n"
)
_ENTRY = re.compile(rb"10[0-7]{4} event\.json\x00")  # a file: libgit2 reads any 10xxxx so


def read_plain(odb: pygit2.Odb, oid: str) -> tuple[str | None, bytes] | None:
    """``oid`` read quickly, as a plain event commit (its parent and its blob's raw id) (one object database read for
    the commit, one for the tree, no libgit2 objects): a commit that starts with its
    tree, at most one parent, an author and a committer; a tree of exactly one file
    entry, ``event.json``.  Nothing is taken on trust: anything else is None, and the
    slow reading (``_check_read``) refuses it in its own words or accepts what is
    merely unusual (a second parent line)."""
    try:
        kind, raw = odb.read(oid)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    head = _HEAD.match(raw) if _KINDS.get(int(kind)) == "commit" else None
    if head is None:
        return None
    tree, parent = head.group(1), head.group(2)
    try:
        kind, entries = odb.read(tree.decode("ascii"))
    except (KeyError, ValueError, pygit2.GitError):
        return None
    width = len(tree) // 2  # the raw id's bytes: 20 (SHA-1) or 32 (SHA-256)
    entry = _ENTRY.match(entries)
    if _KINDS.get(int(kind)) != "tree" or entry is None or len(entries) != entry.end() + width:
        return None
    return (parent.decode("ascii") if parent is not None else None), entries[-width:]


def _check_commit(repo: pygit2.Repository, oid: str, limits: boundary.Limits) -> Row:
    plain = read_plain(repo.odb, oid)
    if plain is None:  # not the plain shape: the slow reading says why, or accepts it
        return _check_read(repo, oid, limits)
    kind, size = kind_of(repo, plain[1].hex())
    if kind != "blob":
        return _check_read(repo, oid, limits)
    return oid, plain[0], _event_text(repo, plain[1].hex(), size, limits)


def _event_text(
    repo: pygit2.Repository, blob: str, size: int, limits: boundary.Limits, is_blob: bool = True
) -> str:
    """The checked text of an event's blob of ``size`` bytes (raises ``_Bad``); an
    object that is not a blob reads as nothing, which is not an event."""
    if size > limits.max_event_bytes:  # refused, not kept: nothing holds on to its blob
        raise _Bad("event.json is " + boundary.over_limit(size, limits), keep=False)
    data = bytes(repo.odb.read(blob)[1]) if is_blob else b""
    try:
        boundary.event_from_bytes(data, limits)
    except Refused as exc:
        raise _Bad(f"event.json: {exc.reason}") from None
    return data.decode("utf-8")


def _check_read(repo: pygit2.Repository, oid: str, limits: boundary.Limits) -> Row:
    found = repo[oid]
    if found.type_str != "commit":
        raise _Bad(f"is a {found.type_str}, not a commit", keep=False)
    commit = found.peel(pygit2.Commit)
    parents = [str(p) for p in commit.parent_ids]
    if len(parents) > 1:
        raise _Bad(f"has {len(parents)} parents; an event has one (the previous event)")
    entries = list(commit.tree)
    names = sorted(e.name or "" for e in entries)
    if names != ["event.json"]:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        raise _Bad(
            f"its tree must hold event.json and nothing else (it holds: {shown or 'nothing'})"
        )
    entry = entries[0]
    modes = (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)
    if entry.type_str != "blob" or entry.filemode not in modes:
        raise _Bad("event.json is not a file")
    kind, size = kind_of(repo, entry.id)
    if kind == "missing":
        raise KeyError(str(entry.id))
    text = _event_text(repo, str(entry.id), size, limits, kind == "blob")
    return oid, parents[0] if parents else None, text


# -- notes -------------------------------------------------------------------------------------


@dataclass
class NotesCheck:
    """The notes a remote notes tree adds or changes, as they may come in."""

    texts: dict[str, str] = field(default_factory=dict)  # annotated hex id -> checked text
    problems: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.problems


def check_notes(
    repo: pygit2.Repository,
    kind: str,
    theirs: pygit2.Tree,
    ours: pygit2.Tree | None,
    limits: boundary.Limits,
    names: Callable[[], Mapping[str, str]] | None = None,
) -> NotesCheck:
    """The notes of ``theirs`` that ``ours`` lacks, checked (``kind``: meta, source, other;
    ``names``: annotated id -> the conversation it is the anchor of, asked for only to
    name a note in a problem).

    Subtrees identical to ours are not entered.  Entries that are not notes,
    folders nested deeper than any fan-out, a note stored twice, notes over
    the size limit and lines that do not parse are problems: the caller
    writes a cleaned tree rather than taking the remote's as it is.
    """
    out = NotesCheck()
    blobs: dict[str, pygit2.Oid] = {}
    stack: list[tuple[pygit2.Tree, pygit2.Tree | None, str, int]] = [(theirs, ours, "", 0)]
    while stack:
        node, mine, prefix, depth = stack.pop()
        for entry in node:
            name = entry.name or ""
            path = prefix + name
            same = _entry(mine, name)
            if same is not None and same.id == entry.id:
                continue
            if entry.type_str == "tree" and _PART.fullmatch(name):
                sub = repo[entry.id]
                if depth + 1 >= boundary.NOTES_MAX_DEPTH:
                    out.problems.append(
                        f"a folder nested deeper than any notes layout ({prefix}...)"
                    )
                elif isinstance(sub, pygit2.Tree):
                    below = repo[same.id] if same is not None and same.type_str == "tree" else None
                    stack.append(
                        (sub, below if isinstance(below, pygit2.Tree) else None, path, depth + 1)
                    )
            elif entry.type_str == "blob" and _NOTE.fullmatch(path):
                if path in blobs:
                    out.problems.append(f"the note on {path[:12]} is stored twice (merged)")
                blobs.setdefault(path, entry.id)
            else:
                out.problems.append(f"{path[:60]} is not a note")
    for target, oid in sorted(blobs.items()):
        text = _note_text(repo, kind, target, names, oid, limits, out.problems)
        if text is not None:
            out.texts[target] = text
    return out


def _entry(tree: pygit2.Tree | None, name: str) -> pygit2.Object | None:
    if tree is None:
        return None
    try:
        return tree[name]
    except KeyError:
        return None


def _note_text(
    repo: pygit2.Repository,
    kind: str,
    target: str,
    names: Callable[[], Mapping[str, str]] | None,
    oid: pygit2.Oid,
    limits: boundary.Limits,
    problems: list[str],
) -> str | None:
    def problem(what: str) -> None:  # the note's conversation is looked up only here
        named = names().get(target) if names is not None else None
        problems.append(f"the note on {named or target[:12]}{what}")

    kind_read, size = kind_of(repo, oid)
    if size > limits.max_event_bytes:
        problem(f" is {boundary.over_limit(size, limits)}")
        return None
    if kind_read == "missing":  # git's fetch checks connectivity; libgit2's may not
        problem(" is missing")
        return None
    data = bytes(repo.odb.read(oid)[1]) if kind_read == "blob" else b""
    if kind == "meta":
        cleaned, dropped = boundary.clean_meta(data)
        if dropped:
            problem(f": dropped {dropped} line(s) that do not parse")
        return cleaned or None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        problem(" is not UTF-8 text")
        return None
    if kind == "source" and boundary.source_id(text) is None:
        problem(" does not name a conversation")
        return None
    return text


# -- the copies a fetch left -------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """A remote ref that did not come in, and why."""

    ref: str  # as the remote names it: refs/conversations/jp-c1
    reason: str
    kept: str | None = None  # the quarantine ref holding its tip
    tip: str = ""  # what the remote's ref pointed at
    stage: str = "check"  # refused by git as it fetched ("fetch") or by jp's checks


@dataclass
class Inbound:
    """The remote's refs as they may be used: the copies that passed, by the part of
    their name after ``refs/`` (``conversations/jp-c1``, ``notes/meta``), and what was refused."""

    conversations: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    refused: list[Refusal] = field(default_factory=list)


def name_problem(rest: str) -> str | None:
    """Why ``refs/<rest>`` is not a name jp holds (None when it is)."""
    if rest.startswith("notes/"):
        return boundary.notes_name(rest)
    named = boundary.conversation_name(rest)
    return named if isinstance(named, str) else None


def screen(
    here: Here,
    transport: Transport,
    remote: str,
    limits: boundary.Limits,
    refused: list[Refusal],
    scope: set[str] | None = None,
) -> Inbound:
    """Check every remote-tracking copy (with ``scope``: only those, by the part of
    their name after ``refs/``); delete the refused ones, quarantine some."""
    tracking, held = tracking_prefix(remote), quarantine.prefix(remote)
    # one listing: the copies, this store's conversations (known good) and its quarantine
    rows = transport.list_refs(_screened(tracking, held, scope))
    if scope is not None:
        rows = [
            r for r in rows if not r.name.startswith(tracking) or r.name[len(tracking) :] in scope
        ]
    local = [r.oid for r in rows if r.name.startswith((refs.LIVE_PREFIX, refs.ARCHIVE_PREFIX))]
    existing = {r.name: r.oid for r in rows if r.name.startswith(held)}
    previous = quarantine.recorded(here.place.gitdir, remote)
    known = Known(here.log, local)
    # copies that did not move since they were accepted: one question to the cache
    known.ids |= here.log.known([r.oid for r in rows if r.name.startswith(tracking)])
    out = Inbound(refused=list(refused))
    # a bulk (a first pull) leaves its events to be cached when first read: the cache
    # is derived, and the chains the check accepts are this store's tips afterwards
    copies = sum(1 for r in rows if r.name.startswith(tracking))
    cache = copies < DEFER_CACHE_AT
    dropped: list[str] = []
    record: dict[str, quarantine.Entry] = {}
    if scope is not None:  # what earlier pulls refused, outside what moved: still refused
        record = {ref: e for ref, e in previous.items() if ref[len("refs/") :] not in scope}
        out.refused += [
            Refusal(ref, e.reason, _kept(remote, ref, e), e.tip) for ref, e in record.items()
        ]
    for row in rows:
        if not row.name.startswith(tracking) or row.name[len(tracking) :].startswith(JOURNAL):
            continue
        rest = row.name[len(tracking) :]
        ref = "refs/" + rest
        why = name_problem(rest)
        keep = False
        if why is None and rest.startswith("notes/"):
            if row.kind == "commit":
                out.notes[rest[len("notes/") :]] = row.oid
                continue
            why = f"points at a {row.kind}, not a commit"
        elif why is None:
            seen = previous.get(ref)
            if seen is not None and (seen.tip, seen.limit) == (row.oid, limits.max_event_bytes):
                why, keep = seen.reason, seen.kept  # refused before: the same answer
            else:
                check = check_chain(here.place.repo, row.oid, known, limits, row.kind)
                if check.reason is None:
                    out.conversations[rest] = row.oid
                    if cache:
                        here.log.remember(check.rows)
                    continue
                why, keep = check.reason, check.keep
        dropped.append(row.name)
        record[ref] = quarantine.Entry(row.oid, why, keep, limits.max_event_bytes)
        out.refused.append(
            Refusal(ref, why, quarantine.quarantine_ref(remote, ref) if keep else None, row.oid)
        )
    transport.delete_refs(dropped)
    for r in refused:  # the fetch's refusals are remembered too: not downloaded again
        if r.tip and r.stage == "fetch":
            record[r.ref] = quarantine.Entry(r.tip, r.reason, False, 0, "fetch")
    quarantine.replace(here.place, remote, existing, record)
    return out


def _kept(remote: str, ref: str, entry: quarantine.Entry) -> str | None:
    return quarantine.quarantine_ref(remote, ref) if entry.kept else None


def _screened(tracking: str, held: str, scope: set[str] | None) -> list[str]:
    """What ``screen`` lists: everything, or only the copies in ``scope`` and the
    local refs of their conversations."""
    if scope is None:
        return [tracking, held, refs.LIVE_PREFIX, refs.ARCHIVE_PREFIX]
    names = [held]
    for rest in sorted(scope):
        names.append(tracking + rest)
        named = boundary.conversation_name(rest)
        if not isinstance(named, str):
            names += [refs.live(named[0]), refs.archived(named[0])]
    return names
