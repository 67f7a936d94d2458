"""A pull's fetch, top to bottom: what moved on the remote comes into the
remote-tracking copies (``refs/jp-remotes/<remote>/...``) and is checked
before anything acts on it; one bad ref never stops the others.

1. The remote's change journal (``gitstore.sync.journal``) comes first, alone
   (protocol v2 asks for that one name).  A journal that is not one (anyone who
   can push can point ``refs/jp/journal`` at a blob) is set aside.
2. When the journal may be trusted (``journalstate.reconcile_due``: the
   remote is big enough and a reconcile is not due) and it moved, exactly the
   refs it names are fetched; when it did not move and no refused ref waits to
   be checked again, nothing is (``journalstate.nothing_to_pull``: the one rule,
   which ``pull_quick`` applies from files before any of this loads).
3. Otherwise everything is fetched (a reconcile): one ``git fetch`` of every
   synced namespace with git's object checks on (``fetch.fsckObjects``), a
   first pull through ``firstclone``.  If it fails for anything but the remote
   being out of reach, the remote's refs are listed, names jp cannot hold are
   refused, and the rest are fetched in halves until each bad ref stands alone
   and is refused with git's reason.  What moved without a journal entry
   (plain git, an older jp) is named in one warning.
4. ``inbound.screen`` checks every copy that came; what fails is refused, by name.
5. The journal as fetched becomes the copy the next pull starts from.

A pull killed anywhere walks the same entries again.  Refs are listed with
``git for-each-ref`` (or read as files): libgit2's own listing stops without a
word at a ref nested about 100 levels deep.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from gitstore.boundary import Limits
from gitstore.errors import EnvironmentFault, SyncError, environment_fault
from gitstore.git import pack as gitpack
from gitstore.git.refs import files as refread
from gitstore.git.refs import quarantine
from gitstore.sync import beside, firstclone, inbound, journal, journalstate, remotes
from gitstore.sync import lock as synclock
from gitstore.sync.here import Here
from gitstore.sync.inbound import JOURNAL, Inbound, Refusal, name_problem
from gitstore.sync.plan import Outcome
from gitstore.sync.transport import GitCli, Transport

Progress = Callable[[str, int, int], None]
CHUNK = 1000  # explicit refspecs per fetch when fetching ref by ref
SYNCED_SPACES = ("conversations/", "archive/", "notes/")
PACK_COPIES_AT = 100  # loose copies a fetch left from which they are packed
SCOPED_MAX = 2000  # conversations read by name; past that one listing of them all is cheaper
SPACES = ("conversations/", "archive/conversations/")  # a conversation's names under refs/


@dataclass
class Fetched:
    """What one fetch brought, and what the pull says of the journal."""

    inbound: Inbound
    scope: set[str] | None = None  # the copies it brought, after ``refs/`` (None: all)
    notes: list[Outcome] = field(default_factory=list)  # journal set aside, unread, drift
    aside: str | None = None  # the remote's journal set aside: the lease of the push over it


def run(
    here: Here,
    transport: Transport,
    remote: str,
    limits: Limits,
    progress: Progress,
    full: bool = False,
    journal_from: int = journalstate.JOURNAL_FROM,
) -> Fetched:
    """Fetch what moved on ``remote`` (the journal's names; ``full``, or when the
    journal cannot say: everything), then check every copy that came."""
    progress("fetching", 0, 0)
    gitdir, repo = here.place.gitdir, here.place.repo
    tracking = remotes.tracking_prefix(remote)
    said: list[Outcome] = []
    since = journal_tip(repo, tracking)  # the journal as the last pull finished with it
    usable = since is not None and journalstate.reconcile_due(gitdir, remote, journal_from) is None
    fetch_journal(transport, remote, gitdir)  # before anything else is fetched or listed
    aside = _set_aside(repo, transport, tracking, said)
    if not full and usable:
        scope = _fetch_named(here, transport, remote, limits, progress, since, said)
        if scope is not None:
            _pack_copies(gitdir, tracking, transport)
            progress("checking", 0, len(scope))
            checked = inbound.screen(here, transport, remote, limits, [], scope)
            _accept(here, transport, remote, checked, reconciled=False)
            return Fetched(checked, scope, said, aside)
    before = copies(gitdir, tracking, transport)
    refused = fetch_all(transport, remote, gitdir)
    _pack_copies(gitdir, tracking, transport)
    unnamed = _drift(repo, gitdir, tracking, transport, before, since)
    if unnamed:
        detail = _drift_line(remote, unnamed)
        said.append(Outcome(journal.REMOTE_REF, "drift", kind="warning", detail=detail))
    progress("checking", 0, 0)
    checked = inbound.screen(here, transport, remote, limits, refused)
    _accept(here, transport, remote, checked, reconciled=True)
    return Fetched(checked, None, said, aside)


def journal_tip(repo: pygit2.Repository, tracking: str, name: str = journal.COPY) -> str | None:
    """The remote's journal as the last pull finished with it (``name``
    ``journal.INCOMING``: as just fetched); None: none."""
    ref = repo.references.get(tracking + name)
    return None if ref is None else str(ref.target)


def _warning(detail: str) -> Outcome:
    return Outcome(journal.REMOTE_REF, "skipped", kind="warning", detail=detail)


# -- 1. the journal ---------------------------------------------------------------------


def fetch_journal(transport: Transport, remote: str, gitdir: Path) -> None:
    """Bring the remote's journal into ``jp/incoming`` (and nothing else); a fault
    of this machine (a full disk) is raised as one, like any fetch's."""
    tracking = remotes.tracking_prefix(remote)
    incoming, copy = tracking + journal.INCOMING, tracking + journal.COPY
    # a glob: a remote without a journal is no error (and prunes the copy); the
    # copy is offered as what this side has
    specs, tips = [f"+{journal.REMOTE_REF}*:{incoming}*"], [copy + "*"]
    with _attempt(gitdir):
        _narrow(transport, remote, gitdir, specs, tips)


def _set_aside(
    repo: pygit2.Repository, transport: Transport, tracking: str, said: list[Outcome]
) -> str | None:
    """The journal as just fetched, checked before anything reads it: one that is not
    a journal entry at all is set aside (its copy goes, so the pull lists everything
    and nothing builds on it) and named in one warning.  Its tip, returned, is the
    lease of the push that replaces it (``push.send``); None when it is usable."""
    tip = journal_tip(repo, tracking, journal.INCOMING)
    if tip is None:
        return None
    why = journal.problem(repo, tip)
    if why is None:
        return None
    transport.delete_refs([tracking + journal.INCOMING])
    said.append(
        _warning(
            f"{why}; set aside: every ref was fetched, and a push from here starts a new journal"
        )
    )
    return tip


# -- 2. what the journal names -----------------------------------------------------------


def _fetch_named(
    here: Here,
    transport: Transport,
    remote: str,
    limits: Limits,
    progress: Progress,
    since: str | None,
    said: list[Outcome],
) -> set[str] | None:
    """The refs the journal names since ``since``, fetched; the copies to check, or
    None when the journal cannot say (the caller fetches everything)."""
    gitdir, repo = here.place.gitdir, here.place.repo
    tracking = remotes.tracking_prefix(remote)
    now = journal_tip(repo, tracking, journal.INCOMING)
    if now is None:
        return None  # the remote lost its journal, or it was set aside
    # refused against another size limit: fetched and checked again, as a full pull does
    recheck = {
        ref
        for ref, e in quarantine.recorded(gitdir, remote).items()
        if e.stage == "check" and e.limit != limits.max_event_bytes
    }
    if journalstate.nothing_to_pull(since, now, bool(recheck)):
        return set()
    names = set(recheck)
    if now != since:
        named, why = journal.read(repo, now, since)
        if named is None:
            if why:
                said.append(_warning(f"{why}; every ref was fetched instead"))
            return None
        names |= named
    if not names:
        return set()
    progress("fetching", 0, len(names))
    return _fetch_moved(transport, remote, gitdir, names)


def _fetch_moved(
    transport: Transport, remote: str, gitdir: Path, names: set[str]
) -> set[str] | None:
    """Fetch the refs ``names`` (remote names) and no other; the copies that
    changed or were named (after ``refs/``), or None when that fetch failed (the
    caller reconciles: a full fetch finds the ref that broke it)."""
    tracking = remotes.tracking_prefix(remote)
    specs, globs = [], []
    for name in sorted(names):  # a ref that is gone prunes its copy; a missing one is no error
        rest = name[len("refs/") :]
        specs.append(f"+{name}*:{tracking}{rest}*")
        globs.append(f"{tracking}{rest}*")
    before = {r.name: r.oid for r in transport.list_refs(globs)} if globs else {}
    tips = [*before, tracking + journal.COPY + "*"]
    try:
        with _attempt(gitdir):
            for start in range(0, len(specs), CHUNK):
                _narrow(transport, remote, gitdir, specs[start : start + CHUNK], tips)
    except SyncError:
        return None
    after = {r.name: r.oid for r in transport.list_refs(globs)} if globs else {}
    changed = {n for n in set(before) | set(after) if before.get(n) != after.get(n)}
    scope = {n[len(tracking) :] for n in changed}
    return scope | {n[len("refs/") :] for n in names}


# -- 3. everything (a reconcile) ---------------------------------------------------------


def fetch_all(transport: Transport, remote: str, gitdir: Path) -> list[Refusal]:
    """Bring every ref of the remote into the copies; the refs that could not come.

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
    try:
        with _attempt(gitdir):
            transport.fetch(remote, specs)
        return []
    except SyncError as exc:
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
    copied = [r for r in transport.list_refs([tracking]) if not _journal_copy(r.name, tracking)]
    # copies whose names jp cannot hold could block the fetch of good names
    transport.delete_refs([r.name for r in copied if name_problem(r.name[len(tracking) :])])
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
        try:
            with _attempt(gitdir):
                specs = [f"+{n}:{tracking}{n[len('refs/') :]}" for n in part]
                transport.fetch(remote, specs, False)
            arrived.update(part)
        except SyncError as exc:
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


@contextmanager
def _attempt(gitdir: Path) -> Iterator[None]:
    """A fetch that may fail: what a refused pack left goes (git keeps its temporary
    file, which holds nothing we keep), and a failure of this machine (a full disk)
    fails the pull (the next one fetches again) instead of being remembered as the
    remote's fault; any other ``SyncError`` is the caller's."""
    before = set(gitpack.folder(gitdir).glob("tmp_pack_*"))
    try:
        yield
    except SyncError as exc:
        for path in set(gitpack.folder(gitdir).glob("tmp_pack_*")) - before:
            with suppress(OSError):
                path.unlink()
        fault = local_fault(exc.reason, gitdir)
        if fault is not None:
            raise fault from None
        raise


def _narrow(
    transport: Transport, remote: str, gitdir: Path, specs: list[str], tips: list[str]
) -> None:
    """A fetch of a few refs (forced, pruned, ``tips`` offered as had): beside the
    store when it can be (``beside``: the cost of what it brings), else in it."""
    if not beside.fetch(transport, remote, gitdir, specs, tips):
        transport.fetch(remote, specs, True, tips)


def fetch_reason(text: str) -> str:
    if "fsck" in text or "index-pack" in text or "unpack" in text:
        return f"git's object checks refused what it holds ({text})"
    return f"git could not fetch it ({text})"


def _pack_copies(gitdir: Path, tracking: str, transport: Transport) -> None:
    """Pack refs when a fetch left many loose copies (a first pull): every later
    listing reads one file instead of thousands."""
    folder = gitdir / (tracking + "conversations")
    loose = 0
    try:
        with os.scandir(folder) as entries:
            for _ in entries:
                loose += 1
                if loose >= PACK_COPIES_AT:
                    transport.pack_refs()
                    return
    except OSError:
        return


def _drift(
    repo: pygit2.Repository,
    gitdir: Path,
    tracking: str,
    transport: Transport,
    before: dict[str, str],
    since: str | None,
) -> set[str]:
    """After a reconcile: the remote refs whose copies it moved that no journal entry
    since ``since`` (the copy the last pull finished with) named: moves of plain git,
    an older jp.  Empty when the journal cannot tell (none here or there, rewritten,
    refused)."""
    incoming = journal_tip(repo, tracking, journal.INCOMING)
    if since is None or incoming is None:
        return set()
    after = copies(gitdir, tracking, transport)
    moved = {n for n in before.keys() | after.keys() if before.get(n) != after.get(n)}
    if not moved:
        return set()
    named: set[str] | None = set()
    if incoming != since:
        named = journal.read(repo, incoming, since)[0]
    if named is None:
        return set()
    return {"refs/" + n[len(tracking) :] for n in moved} - named


def _drift_line(remote: str, unnamed: set[str], shown: int = 3) -> str:
    """``_drift`` in one line."""
    listed = sorted(unnamed)
    names = ", ".join(listed[:shown]) + (
        f" and {len(listed) - shown} more" if len(listed) > shown else ""
    )
    n = len(listed)
    return (
        f"{n} ref{'s' if n != 1 else ''} moved on {remote} without a journal entry "
        f"(plain git or an older jp): {names}; "
        "this reconcile fetched and checked them"
    )


# -- 5. where the next pull starts -------------------------------------------------------


def _accept(
    here: Here, transport: Transport, remote: str, checked: Inbound, reconciled: bool
) -> None:
    """The pull is done: the journal as fetched is where the next one starts (a
    pull killed before this point walks the same entries again)."""
    gitdir, repo = here.place.gitdir, here.place.repo
    tracking = remotes.tracking_prefix(remote)
    tip = journal_tip(repo, tracking, journal.INCOMING)
    if tip is None:
        transport.delete_refs([tracking + journal.COPY])
    else:
        values: dict[str, str | None] = {}  # the copy moves first, then the incoming goes
        if tip != journal_tip(repo, tracking):
            values[tracking + journal.COPY] = tip
        values[tracking + journal.INCOMING] = None
        if not isinstance(transport, GitCli) or not beside.write_copies(transport, gitdir, values):
            for name, value in values.items():
                remotes.set_copy(repo, name, value)
    found = len(checked.conversations) if reconciled else None
    journal.record_pull(gitdir, remote, reconciled, found)


# -- the copies a fetch of what moved left alone (a push compares them) ----------------------


def complete(
    gitdir: Path,
    tracking: str,
    transport: Transport,
    scope: set[str],
    checked: Inbound,
    cids: set[str] | None = None,
) -> bool:
    """After a fetch of ``scope``: every other copy into ``checked`` too, as it was
    accepted before.  The conversations' copies are read as names and ids only
    (``_listed``: no object is looked up for each of 100,000), or with ``cids``
    only theirs, each found by name; the few notes copies with their type.
    Whether ``checked`` holds only some of the copies (``cids``)."""
    notes = tracking + "notes/"
    listed = _named(gitdir, tracking, cids) if cids is not None else None
    for name, oid in (
        listed if listed is not None else _listed(gitdir, tracking, transport)
    ).items():
        rest = name[len(tracking) :]
        if name.startswith(notes) or rest in scope or rest.startswith(JOURNAL):
            continue
        if name_problem(rest) is None:
            checked.conversations.setdefault(rest, oid)
    for row in transport.list_refs([notes]):
        rest = row.name[len(tracking) :]
        if rest in scope or name_problem(rest) is not None:
            continue
        if row.kind == "commit":
            checked.notes.setdefault(rest[len("notes/") :], row.oid)
    return listed is not None


def _named(gitdir: Path, tracking: str, cids: set[str]) -> dict[str, str] | None:
    """The fetched copies of ``cids``' conversations, each found by name (None: too
    many to look up one by one, or a store git must list)."""
    plain = refread.plain_gitdir(gitdir)
    if plain is None or len(cids) > SCOPED_MAX:
        return None
    names = [tracking + space + c for c in sorted(cids) for space in SPACES]
    return refread.matching_refs(plain, names) if names else {}


def _listed(gitdir: Path, tracking: str, transport: Transport) -> dict[str, str]:
    """Every fetched copy of the remote's refs, name -> id, read as files where the
    store allows it."""
    plain = refread.plain_gitdir(gitdir)
    if plain is not None:
        return refread.list_refs(plain, [tracking])
    return {r.name: r.oid for r in transport.list_refs([tracking])}


def copies(gitdir: Path, tracking: str, transport: Transport) -> dict[str, str]:
    """The fetched copies of the remote's refs (not the journal's own), by name."""
    own = tracking + JOURNAL
    return {
        n: oid for n, oid in _listed(gitdir, tracking, transport).items() if not n.startswith(own)
    }
