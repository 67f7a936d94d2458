"""Fetching from a remote so that nothing it holds breaks this store, and one bad
ref never stops the others.

1. One ``git fetch`` of every synced namespace into the remote-tracking copies
   (``refs/jp-remotes/<remote>/...``), with git's own object checks on
   (``fetch.fsckObjects``): a malformed object never lands.
2. If that fetch fails for anything but the remote being out of reach (git's
   checks refused an object, a name that cannot be stored here...), the
   remote's refs are listed (``git ls-remote``), names jp cannot hold are
   refused, and the rest are fetched in halves until each bad ref stands
   alone and is refused with git's reason; all the others arrive.
3. ``screen`` checks every copy (``gitstore.inbound``): names, what each ref
   points at, each conversation's chain down to what this store already has.
   A refused copy is deleted, so neither pull nor push ever acts on it; a
   chain that is a commit but not a valid one is kept under
   ``refs/jp/quarantine/`` (``gitstore.quarantine``).

Refs are listed with ``git for-each-ref`` (or read as files): libgit2's own
listing stops without a word at a ref nested about 100 levels deep.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gitstore import boundary
from gitstore.errors import EnvironmentFault, SyncError, environment_fault
from gitstore.git import refs
from gitstore.git.refs import quarantine
from gitstore.sync import beside, firstclone, journal, remotes
from gitstore.sync import lock as synclock
from gitstore.sync.here import Here
from gitstore.sync.inbound import Known, check_chain
from gitstore.sync.transport import Transport

CHUNK = 1000  # explicit refspecs per fetch when fetching ref by ref
SYNCED_SPACES = ("conversations/", "archive/", "notes/")
DEFER_CACHE_AT = 100  # copies checked at once from which their events are not cached
JOURNAL = "jp/"  # the journal's copies, among the others but never screened as refs


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

    def refusal(self, ref: str) -> Refusal | None:
        return next((r for r in self.refused if r.ref == ref), None)


def name_problem(rest: str) -> str | None:
    """Why ``refs/<rest>`` is not a name jp holds (None when it is)."""
    if rest.startswith("notes/"):
        return boundary.notes_name(rest)
    named = boundary.conversation_name(rest)
    return named if isinstance(named, str) else None


def fetch(transport: Transport, remote: str, gitdir: Path) -> list[Refusal]:
    """Bring the remote's refs into the copies; the refs that could not come.

    When the last pull found refs whose objects git refused, the refs are
    fetched one by one from the start, leaving out those still at the refused
    tip (so a bad pack is not downloaded again at every pull).
    """
    bad = {
        r: e
        for r, e in quarantine.recorded(gitdir, remote).items()
        if e.stage == "fetch" and local_fault(e.reason, gitdir) is None  # retry what failed here
    }
    if bad:
        return _ref_by_ref(transport, remote, gitdir, None, bad)
    firstclone.clear(gitdir, remote)  # what a killed first pull left
    if firstclone.fetch(transport, remote, gitdir):
        return []
    specs = remotes.fetch_refspecs(remote)
    before = _tmp_packs(gitdir)
    try:
        transport.fetch(remote, specs)
        return []
    except SyncError as exc:
        _clear_tmp_packs(gitdir, before)
        _raise_local(exc, gitdir)
        namespace = remotes.tracking_prefix(remote).rstrip("/")
        if ".lock" in exc.reason and synclock.clear_stale(gitdir, namespace):
            try:  # a git killed with an earlier jp left lock files on the copies
                transport.fetch(remote, specs)
                return []
            except SyncError as again:
                exc = again
        return _ref_by_ref(transport, remote, gitdir, exc, {})


def _ref_by_ref(
    transport: Transport,
    remote: str,
    gitdir: Path,
    first: SyncError | None,
    bad: dict[str, quarantine.Entry],
) -> list[Refusal]:
    try:
        heads = transport.ls_remote(remote)
    except SyncError:
        if first is None:
            raise
        raise first from None  # out of reach: the fetch's own message says why
    tracking = remotes.tracking_prefix(remote)
    refused: list[Refusal] = []
    wanted: list[str] = []
    for name, oid in sorted(heads.items()):
        rest = name[len("refs/") :]
        if not rest.startswith(SYNCED_SPACES):
            continue
        why = name_problem(rest)
        if why is None and name in bad and bad[name].tip == oid:
            why = bad[name].reason
        if why is not None:
            refused.append(Refusal(name, why, tip=oid, stage="fetch"))
        else:
            wanted.append(name)
    copies = [r for r in transport.list_refs([tracking]) if not _journal_copy(r.name, tracking)]
    # copies whose names jp cannot hold could block the fetch of good names
    transport.delete_refs([r.name for r in copies if name_problem(r.name[len(tracking) :])])
    arrived = _halves(transport, remote, gitdir, wanted, heads, refused)
    gone = [
        r.name
        for r in transport.list_refs([tracking])
        if "refs/" + r.name[len(tracking) :] not in arrived and not _journal_copy(r.name, tracking)
    ]
    transport.delete_refs(gone)
    return refused


def _journal_copy(name: str, tracking: str) -> bool:
    return name[len(tracking) :].startswith(JOURNAL)


def _halves(
    transport: Transport,
    remote: str,
    gitdir: Path,
    wanted: list[str],
    heads: dict[str, str],
    refused: list[Refusal],
) -> set[str]:
    """Fetch ``wanted`` in parts, halving a part that fails until a bad ref stands alone."""
    tracking = remotes.tracking_prefix(remote)
    arrived: set[str] = set()
    queue = [wanted[i : i + CHUNK] for i in range(0, len(wanted), CHUNK)]
    while queue:
        part = queue.pop()
        before = _tmp_packs(gitdir)
        try:
            transport.fetch(remote, [f"+{n}:{tracking}{n[len('refs/') :]}" for n in part], False)
            arrived.update(part)
        except SyncError as exc:
            _clear_tmp_packs(gitdir, before)
            _raise_local(exc, gitdir)
            if len(part) == 1:
                _raise_unreachable(transport, remote, exc)
                why = fetch_reason(exc.reason)
                refused.append(Refusal(part[0], why, tip=heads[part[0]], stage="fetch"))
            else:
                queue += [part[: len(part) // 2], part[len(part) // 2 :]]
    return arrived


def _raise_unreachable(transport: Transport, remote: str, exc: SyncError) -> None:
    """A ref that will not come alone is refused, and remembered, only if the remote
    still answers: a server that went away or dropped the connection meanwhile fails
    the pull (the next one fetches again) instead of having its refs refused."""
    try:
        transport.ls_remote(remote)
    except SyncError:
        raise exc from None


LOCAL_FAULTS = ("no-space", "read-only", "io")  # what this machine refused, not the remote


def local_fault(text: str, gitdir: Path) -> EnvironmentFault | None:
    """The fault of this machine a fetch's error names (a full disk while the pack
    arrived, a read-only store), or None: only what the remote sent is refused."""
    fault = environment_fault(RuntimeError(text), str(gitdir))
    return fault if fault is not None and fault.kind in LOCAL_FAULTS else None


def _raise_local(exc: SyncError, gitdir: Path) -> None:
    """A fetch that failed because of this machine fails the pull (the next one
    fetches again), instead of being remembered as the remote's fault."""
    fault = local_fault(exc.reason, gitdir)
    if fault is not None:
        raise fault from None


def fetch_reason(text: str) -> str:
    if "fsck" in text or "index-pack" in text or "unpack" in text:
        return f"git's object checks refused what it holds ({text})"
    return f"git could not fetch it ({text})"


def _tmp_packs(gitdir: Path) -> set[Path]:
    return set((gitdir / "objects" / "pack").glob("tmp_pack_*"))


def _clear_tmp_packs(gitdir: Path, before: set[Path]) -> None:
    """What a refused pack left (git keeps its temporary file): it holds nothing we keep."""
    for path in _tmp_packs(gitdir) - before:
        try:
            path.unlink()
        except OSError:
            continue


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
    tracking, held = remotes.tracking_prefix(remote), quarantine.prefix(remote)
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


# -- fetching what the journal names ---------------------------------------------------


def fetch_journal(transport: Transport, remote: str, gitdir: Path) -> None:
    """Bring the remote's journal into its copy (and nothing else: protocol v2 asks
    the remote for that name alone); a fault of this machine (a full disk) is
    raised as one, like any fetch's."""
    tracking = remotes.tracking_prefix(remote)
    incoming, copy = tracking + journal.INCOMING, tracking + journal.COPY
    # offered as what this side has: the copy (a glob, so a missing one is no error)
    # a glob: a remote without a journal is no error (and prunes the copy)
    specs, tips = [f"+{journal.REMOTE_REF}*:{incoming}*"], [copy + "*"]
    try:
        if not beside.fetch(transport, remote, gitdir, specs, tips):  # the journal's cost
            transport.fetch(remote, specs, True, tips)
    except SyncError as exc:
        _raise_local(exc, gitdir)
        raise


def moved_specs(remote: str, names: set[str]) -> tuple[list[str], list[str]]:
    """Refspecs that fetch exactly ``names`` (a remote ref that is gone prunes its
    copy, and a missing one is no error: each name ends in ``*``), and the copies
    they write, as ``git for-each-ref`` patterns."""
    tracking = remotes.tracking_prefix(remote)
    specs, copies = [], []
    for name in sorted(names):
        rest = name[len("refs/") :]
        specs.append(f"+{name}*:{tracking}{rest}*")
        copies.append(f"{tracking}{rest}*")
    return specs, copies


def fetch_moved(
    transport: Transport, remote: str, gitdir: Path, names: set[str]
) -> set[str] | None:
    """Fetch the refs ``names`` (remote names) and no other; the copies that
    changed or were named (by the part after ``refs/``), or None when that fetch
    failed (the caller reconciles: a full fetch finds the ref that broke it)."""
    tracking = remotes.tracking_prefix(remote)
    specs, copies = moved_specs(remote, names)
    before = {r.name: r.oid for r in transport.list_refs(copies)} if copies else {}
    tips = [*before, tracking + journal.COPY + "*"]
    packs = _tmp_packs(gitdir)
    try:
        for start in range(0, len(specs), CHUNK):
            chunk = specs[start : start + CHUNK]
            if not beside.fetch(transport, remote, gitdir, chunk, tips):  # the change alone
                transport.fetch(remote, chunk, True, tips)
    except SyncError as exc:
        _clear_tmp_packs(gitdir, packs)
        _raise_local(exc, gitdir)
        return None
    after = {r.name: r.oid for r in transport.list_refs(copies)} if copies else {}
    changed = {n for n in set(before) | set(after) if before.get(n) != after.get(n)}
    scope = {n[len(tracking) :] for n in changed}
    return scope | {n[len("refs/") :] for n in names}
