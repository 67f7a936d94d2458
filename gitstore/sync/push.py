"""Push: pull first, then send only what the remote can take as it is.

After the pull every local conversation contains the remote's copy, so each
ref sent is a creation or a fast-forward (never forced).  Moving a
conversation between live and archived deletes the remote's ref of the other
state, and only with a lease on the tip we checked.  When the remote moved
since the fetch (another machine pushed), git rejects those refs; we pull
again and retry, a bounded number of times.
"""

from __future__ import annotations

from collections.abc import Callable

from gitstore.errors import RefBusy
from gitstore.fs import retry
from gitstore.git import refs
from gitstore.git.command import RefResult
from gitstore.git.refs import bulk
from gitstore.git.refs import files as refread
from gitstore.git.refs.transaction import RefUpdate
from gitstore.git.refs.update import update_refs
from gitstore.sync import beside, fetch, journal, remotes
from gitstore.sync.created import BULK_AT
from gitstore.sync.fetch import SPACES
from gitstore.sync.inbound import Refusal
from gitstore.sync.plan import Action, PushStep, RemoteUpdate, plan_push, reduce
from gitstore.sync.pull import Outcome, Syncer, Tips
from gitstore.sync.sending import Sending

RETRIES = 3

# asked of each conversation and notes ref a push would send: (id, or the notes ref's
# name here; the tip to send; the tips the remote has of it) -> why it is held back,
# or None to send it (porcelain's secret scan)
Hold = Callable[[str, str, frozenset[str]], str | None]


def plan(syncer: Syncer, hold: Hold | None = None) -> list[PushStep | Outcome]:
    """Every conversation and notes ref to send, as last fetched; an ``Outcome``
    for one whose copy on the remote was refused (nothing is sent over it), or
    that ``hold`` keeps back (``held``)."""
    moved = _differing(syncer.sending())
    syncer.complete(moved)
    sending = syncer.sending()  # as complete left it
    remote = syncer.remote_tips(moved)
    local = syncer.local_tips(moved)
    refusals = _Refusals(sending)
    steps: list[PushStep | Outcome] = []
    for cid in sorted(local):
        now, there = local[cid], remote.get(cid, Tips())
        if now.broken:
            continue
        live, archived = refs.LIVE_PREFIX + cid, refs.ARCHIVE_PREFIX + cid  # ids listed valid
        refused = refusals.over((live, archived))
        if refused is not None:
            steps.append(refused)
            continue
        side = reduce(now.live, now.archived, syncer.compare)
        step = plan_push(cid, side, there.live, there.archived, syncer.compare, live, archived)
        if step.action is not Action.NONE:
            steps.append(_asked(hold, step, (there.live, there.archived), "conversation"))
    steps += _plan_notes(sending, refusals, hold)
    return steps


def _asked(
    hold: Hold | None, step: PushStep, theirs: tuple[str | None, ...], kind: str
) -> PushStep | Outcome:
    """``step``, or the ``held`` outcome (its reason as the detail) of the first tip
    it would send that ``hold`` keeps back; ``theirs``: the remote's tips of it."""
    if hold is None or step.action is Action.BLOCKED:
        return step
    known = frozenset(t for t in theirs if t)
    for u in step.updates:
        why = hold(step.cid, u.new, known) if u.new is not None and u.new not in known else None
        if why:
            return Outcome(step.cid, "held", kind=kind, direction="push", detail=why)
    return step


def _differing(sending: Sending) -> set[str] | None:
    """The conversations whose refs here differ from the copies of the remote's, told
    from the runs of ``packed-refs`` and the loose refs (``refread.differing``: what differs
    costs, not the store), with those whose copy the pull refused; None when that
    cannot tell (an unsorted ``packed-refs``, refs that are not files): every one
    is planned then."""
    plain = refread.plain_gitdir(sending.place.gitdir)
    if plain is None:
        return None
    found: set[str] = set()
    for mine, copies in ((refs.LIVE_PREFIX, "conversations/"),
                         (refs.ARCHIVE_PREFIX, "archive/conversations/")):  # fmt: skip
        named = refread.differing(plain, mine, sending.tracking + copies)
        if named is None:
            return None
        found |= {n for n in named if "/" not in n}
    refused = (r.ref[len("refs/") :] for r in sending.inbound.refused)
    found |= {n.rsplit("/", 1)[1] for n in refused if n.startswith(SPACES)}
    return found


class _Refusals:
    """The pull's refusals, by the name refused and by every folder above it: each
    ref planned is looked up once, not compared with every refusal."""

    def __init__(self, sending: Sending) -> None:
        self.remote = sending.remote
        self.by_name: dict[str, Refusal] = {}
        self.below: dict[str, Refusal] = {}  # a folder -> the first refusal under it
        for r in sending.inbound.refused:
            self.by_name.setdefault(r.ref, r)
            parts = r.ref.split("/")
            for end in range(1, len(parts)):
                self.below.setdefault("/".join(parts[:end]), r)

    def over(self, names: tuple[str, ...]) -> Outcome | None:
        """Nothing is sent over a copy the pull refused, nor under a refused ref's
        folder (``refs/notes/meta/x`` on the remote leaves no room for ``refs/notes/meta``)."""
        if not self.by_name:
            return None
        for name in names:
            found = self.by_name.get(name) or self.below.get(name)
            if found is None:
                continue
            detail = f"{self.remote}'s copy was refused: {found.reason}"
            if found.ref != name:
                detail = f"{self.remote} has {found.ref}, which leaves no room for it"
            kind = "notes" if name.startswith("refs/notes/") else "conversation"
            cid = name if kind == "notes" else name.rsplit("/", 1)[1]
            return Outcome(cid, "refused", kind=kind, direction="push", detail=detail)
        return None


def _plan_notes(
    sending: Sending, refusals: _Refusals, hold: Hold | None
) -> list[PushStep | Outcome]:
    """Each notes ref to send, asked of ``hold`` by its name here."""
    repo = sending.place.repo
    fetched = sending.inbound.notes
    local = {row.name: row for row in sending.transport.list_refs(["refs/notes/"])}
    out: list[PushStep | Outcome] = []
    for ref, there in sending.notes.synced():  # jp's notes refs, by name
        row = local.get(ref)
        if row is None or row.kind != "commit":
            continue  # none here, or not a commit (the pull named it)
        tip = row.oid
        refused = refusals.over((there,))
        if refused is not None:
            out.append(refused)
            continue
        theirs = fetched.get(there.removeprefix("refs/notes/"))
        if theirs == tip:
            continue
        if theirs is None:
            step = PushStep(ref, Action.CREATED, (RemoteUpdate(there, tip),))
            out.append(_asked(hold, step, (theirs,), "notes"))
            continue
        base = repo.merge_base(tip, theirs)
        if base is not None and str(base) == theirs:
            step = PushStep(ref, Action.FAST_FORWARDED, (RemoteUpdate(there, tip),))
            out.append(_asked(hold, step, (theirs,), "notes"))
        else:
            out.append(PushStep(ref, Action.BLOCKED))
    return out


def _track(sending: Sending, results: list[RefResult], sent: dict[str, RemoteUpdate]) -> None:
    """Record on the remote-tracking copies what the remote accepted: many new ones
    at once straight into ``packed-refs`` (``refs.bulk``, as a pull's creations),
    the rest one by one."""
    copies: dict[str, str | None] = {}
    tracking = sending.tracking  # the remote's name checked once, not once a ref
    for result in results:
        update = sent.get(result.ref)
        if not result.ok or update is None or not result.ref.startswith("refs/"):
            continue
        copies[tracking + result.ref[len("refs/") :]] = update.new
    new = {name: oid for name, oid in copies.items() if oid is not None}
    gitdir = sending.place.gitdir
    message = f"jp push {sending.remote}"
    if len(new) >= BULK_AT and refread.plain_gitdir(gitdir) is not None:
        creations = [RefUpdate(name, None, oid) for name, oid in new.items()]
        try:
            for name in update_refs(sending.place, creations, message, atomic=False, reflog=False):
                del copies[name]  # created (the others existed: moved one by one)
        except (bulk.NoHardLinks, RefBusy):
            pass
    # the rest at once, as a pull writes its own (``beside.write_copies``: one ``git
    # update-ref`` in a big store, where libgit2 would parse all of packed-refs first)
    transport = sending.transport
    if not copies or (
        transport.repo is not None
        and beside.write_copies(transport, gitdir, dict(sorted(copies.items())))
    ):
        return
    for name, oid in copies.items():  # a lock held them (git's gc): waited out one by one
        remotes.set_copy(sending.place.repo, name, oid, message)


def _outcome(step: PushStep, results: dict[str, RefResult]) -> Outcome:
    kind = "notes" if step.cid.startswith("refs/notes/") else "conversation"
    if step.action is Action.BLOCKED:
        return Outcome(
            step.cid,
            "blocked",
            kind=kind,
            direction="push",
            detail="the remote has changes this store has not integrated",
        )
    failed = [results[u.ref] for u in step.updates if u.ref in results and not results[u.ref].ok]
    if failed:
        return Outcome(step.cid, "rejected", kind=kind, direction="push", detail=failed[0].summary)
    return Outcome(step.cid, step.action.value, kind=kind, direction="push")


def push(
    syncer: Syncer, retries: int = RETRIES, full: bool = False, hold: Hold | None = None
) -> list[Outcome]:
    """Pull (``full``: a reconcile), then send; on a lost race pull again and
    resend what was rejected.  ``hold`` may keep conversations back (outcome
    ``held``, its reason as the detail); the rest is sent."""
    with syncer.exclusive():
        return list(dict.fromkeys(_push(syncer, retries, full, hold)))  # each pull names its refusals


def _push(syncer: Syncer, retries: int, full: bool, hold: Hold | None) -> list[Outcome]:
    outcomes: list[Outcome] = []
    sent: set[str] = set()  # every ref this push moved, for the journal
    by_ref: dict[str, RefResult] = {}
    for attempt in retry.tries(retries + 1):
        # a lost race: the remote moved beyond what its journal says (plain git,
        # or an old jp), so the retry lists it all
        outcomes += syncer.pull(full=full or attempt > 0)
        planned = plan(syncer, hold)
        sending = syncer.sending()
        held = [s for s in planned if isinstance(s, Outcome)]
        steps = [s for s in planned if isinstance(s, PushStep)]
        outcomes += held
        updates = [u for s in steps for u in s.updates]
        if not updates:
            # refs went, entry not; or the journal was set aside: replaced even so
            again = journal.REMOTE_REF in by_ref or sending.aside is not None
            if again:
                send(sending, [], sent)
            outcomes += [_outcome(s, {}) for s in steps]
            return outcomes
        syncer.progress("pushing", 0, len(updates))
        sent |= {u.ref for u in updates}
        by_ref = {r.ref: r for r in send(sending, updates, sent)}
        done = [_outcome(s, by_ref) for s in steps]
        raced = any(r.lost_race for r in by_ref.values())
        if not raced or attempt == retries:
            return outcomes + done
        outcomes += [o for o in done if o.action not in ("rejected", "blocked")]
    return outcomes


def send(sending: Sending, updates: list[RemoteUpdate], names: set[str]) -> list[RefResult]:
    """Push ``updates`` with a journal entry naming ``names`` (the refs they move),
    in one atomic push (``git push --atomic``: an entry without its refs, or refs
    without their entry, would each mislead a reader); the fetched copies follow
    what the remote accepted."""
    repo = sending.place.repo
    parent = fetch.journal_tip(repo, sending.tracking)  # as the last pull finished with it
    entry = journal.stamp(repo, parent, names, sending.signature)
    # a journal the pull set aside is replaced by this entry, a new chain, if unmoved
    lease = parent if parent is not None else sending.aside
    stamped = [*updates, RemoteUpdate(journal.REMOTE_REF, entry, lease)]
    results = sending.transport.push(sending.remote, stamped)
    _track(sending, results, {u.ref: u for u in stamped})
    if results and all(r.ok for r in results):
        _count_remote(sending, stamped)
    return [r for r in results if r.ref != journal.REMOTE_REF] + [
        r for r in results if r.ref == journal.REMOTE_REF and not r.ok
    ]


def _count_remote(sending: Sending, sent: list[RemoteUpdate]) -> None:
    """How many conversations the remote holds after this push went in whole: what
    was fetched (every copy, after ``plan``) with what it created or deleted; when
    only the copies of what moved were read, the count the store kept, moved by
    what this push created or deleted."""
    names = set(sending.inbound.conversations)
    before = len(names)
    for u in sent:
        rest = u.ref[len("refs/") :]
        if rest.startswith(("conversations/", "archive/")):
            if u.new is None:
                names.discard(rest)
            else:
                names.add(rest)
    gitdir = sending.place.gitdir
    count = len(names)
    if sending.partial:
        count = journal.refs_at_reconcile(gitdir, sending.remote) + count - before
    journal.record_refs(gitdir, sending.remote, max(count, 0))
