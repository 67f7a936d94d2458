"""Pull: fetch a remote's conversations and notes, then integrate them.

Fetching (``gitstore.sync.fetch``) copies the remote's ``refs/conversations/*``,
``refs/archive/*`` and jp's notes refs (``refs/notes/meta``, ``refs/notes/source``;
never other notes) to ``refs/jp-remotes/<remote>/...`` (forced: they are copies)
and checks them.  Integrating merges the notes into the store's own names
(``notes.pull_notes``), decides per conversation id (``plan``) and moves local
refs by compare-and-swap, in batches (one transaction each, one lock file per
ref held open) that fall back to one step at a time when something moved
meanwhile; a fork moves the local continuation to a fresh id, and a
conversation a query is writing is left alone and reported ``busy``.  Every
step can be rerun, so an interrupted pull is completed by the next one.
``JP_HEAD``, caches, locks and the store's ``jp/`` folder never travel.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

from gitstore import ids
from gitstore.boundary import Limits, conversation_name
from gitstore.errors import ConcurrentUpdate, ConversationBusy
from gitstore.git import refs
from gitstore.git.command import STALL_SECONDS
from gitstore.git.refs import quarantine, transaction
from gitstore.git.refs.transaction import SYMBOLIC, RefUpdate
from gitstore.store.core import Store
from gitstore.sync import created as bulkpull
from gitstore.sync import fetch, journal, remotes
from gitstore.sync import lock as synclock
from gitstore.sync import notes as syncnotes
from gitstore.sync.fetch import SCOPED_MAX, SPACES
from gitstore.sync.here import Here
from gitstore.sync.inbound import Inbound
from gitstore.sync.plan import (
    Action,
    Comparison,
    Outcome,
    PullStep,
    Side,
    Tips,
    archived_by_meta,
    plan_pull,
    reduce,
    repo_parent,
)
from gitstore.sync.plan import compare as compare_tips
from gitstore.sync.sending import Sending
from gitstore.sync.transport import Transport, choose

if TYPE_CHECKING:
    import pygit2

__all__ = ["Outcome", "Syncer", "Tips", "open_sync"]

Progress = Callable[[str, int, int], None]
BATCH = 200  # conversations moved per transaction (each holds its lock file open)
_BUSY = "in use by another jp process"
_CHANGED = "changed during the pull"


class Syncer:
    """A pull from one remote into this store (and the pull a push starts with):
    ``fetch`` (module ``fetch``), then ``integrate``; ``pull`` does both under the
    remote's sync lock."""

    def __init__(
        self,
        here: Here,
        remote: str,
        transport: Transport,
        progress: Progress | None = None,
        limits: Limits | None = None,
        journal_from: int = journal.JOURNAL_FROM,
    ) -> None:
        self.here = here
        self.journal_from = journal_from  # remotes smaller than this are listed whole
        self.limits = limits or here.limits
        self.inbound = Inbound()
        self.repo = here.place.repo
        self.remote = remote
        self.tracking = remotes.tracking_prefix(remote)
        self.transport = transport
        self.progress = progress or (lambda _stage, _done, _total: None)
        self._parent = repo_parent(self.repo)
        self.signature = here.notes.signature()  # notes merges: on the store's clock
        self._held = False
        self.scope: set[str] | None = None  # the copies the last fetch brought (None: all)
        self.partial = False  # whether ``inbound`` holds only some of the remote's copies
        self.said: list[Outcome] = []  # what the last fetch said of the journal
        self.journal_aside: str | None = None  # the remote's journal, set aside as unusable
        # every local conversation as the last integrate listed them, when it moved
        # none: what a push plans from, not listed again
        self._unmoved: dict[str, Tips] | None = None

    def compare(self, a: str, b: str) -> Comparison:
        return compare_tips(a, b, self._parent)

    def sending(self) -> Sending:
        """What a push to this remote plans and sends with, as this pull left it."""
        return Sending(
            self.here.place, self.here.notes.refs, self.remote, self.transport,
            self.signature, self.inbound, self.partial, self.journal_aside,
        )  # fmt: skip

    # -- state ------------------------------------------------------------------------

    def local_tips(self, cids: set[str] | None = None) -> dict[str, Tips]:
        """This store's conversations (refs that are commits: a broken one is left
        alone); with ``cids``, only those.  After a pull that listed them all and
        moved none, its listing."""
        if self._unmoved is not None:
            kept = self._unmoved
            return {c: t for c, t in kept.items() if cids is None or c in cids}
        out: dict[str, Tips] = {}
        wanted = [refs.LIVE_PREFIX, refs.ARCHIVE_PREFIX]
        if cids is not None and len(cids) <= SCOPED_MAX:
            wanted = [name for c in sorted(cids) for name in (refs.live(c), refs.archived(c))]
        for row in self.transport.list_refs(wanted) if wanted else []:
            archived = row.name.startswith(refs.ARCHIVE_PREFIX)
            cid = row.name[len(refs.ARCHIVE_PREFIX if archived else refs.LIVE_PREFIX) :]
            if not ids.is_valid(cid) or (cids is not None and cid not in cids):
                continue
            tips = out.setdefault(cid, Tips())
            if row.kind != "commit":
                tips.broken = row.kind
            elif archived:
                tips.archived = row.oid
            else:
                tips.live = row.oid
        return out

    def remote_tips(self, cids: set[str] | None = None) -> dict[str, Tips]:
        """The fetched copies that passed the checks of the last fetch (with ``cids``:
        of those conversations only)."""
        out: dict[str, Tips] = {}
        found = self.inbound.conversations
        if cids is not None:
            wanted = [f"{space}{c}" for c in cids for space in SPACES]
            found = {rest: found[rest] for rest in wanted if rest in found}
        for rest, tip in found.items():
            named = conversation_name(rest)
            if isinstance(named, str):
                continue
            cid, archived = named
            tips = out.setdefault(cid, Tips())
            if archived:
                tips.archived = tip
            else:
                tips.live = tip
        return out

    # -- pull --------------------------------------------------------------------------

    def fetch(self, full: bool = False) -> None:
        """Fetch what moved on the remote and check every copy that came
        (``gitstore.sync.fetch``): what fails is refused, by name."""
        self.said, self.scope, self.partial = [], None, False
        self._unmoved = None
        done = fetch.run(
            self.here,
            self.transport,
            self.remote,
            self.limits,
            self.progress,
            full,
            self.journal_from,
        )
        self.inbound, self.scope, self.journal_aside = done.inbound, done.scope, done.aside
        self.said = done.notes

    def journal_tip(self, name: str = journal.COPY) -> str | None:
        """The remote's journal as the last pull finished with it (None: none)."""
        return fetch.journal_tip(self.repo, self.tracking, name)

    def complete(self, cids: set[str] | None = None) -> None:
        """After a fetch of what moved: every other copy too (``fetch.complete``;
        with ``cids``, the copies of those conversations only)."""
        if self.scope is None:
            return
        gitdir = self.here.place.gitdir
        self.partial = fetch.complete(
            gitdir, self.tracking, self.transport, self.scope, self.inbound, cids
        )
        self.scope = None

    def _cids(self) -> set[str] | None:
        """The conversations the last fetch may have moved (None: all)."""
        if self.scope is None:
            return None
        named = (conversation_name(rest) for rest in self.scope)
        return {n[0] for n in named if not isinstance(n, str)}

    def refusals(self) -> list[Outcome]:
        acks = quarantine.acknowledged(self.here.place.gitdir)
        return [
            Outcome(
                r.ref,
                "refused",
                kind="refused",
                detail=r.reason,
                kept=r.kept,
                acknowledged=quarantine.is_acknowledged(acks, self.remote, r.ref, r.tip),
            )
            for r in self.inbound.refused
        ]

    def pull(self, full: bool = False) -> list[Outcome]:
        """Fetch and integrate (``full``: list every ref of the remote, a reconcile)."""
        with self.exclusive():
            self.fetch(full)
            outcomes = self.said + self.refusals() + self.integrate()
            if not any(o.action == "changed" for o in outcomes):
                return outcomes
            # a ref locked by a jp killed a moment ago: once its lock is old enough
            # for the store's repair to call it stale, integrate again
            time.sleep(transaction.STALE_LOCK_SECONDS + 0.2)
            transaction.repair(self.here.place)
            return [o for o in outcomes if o.action != "changed"] + self.integrate()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """The sync lock of this store and remote (re-entrant within one Syncer)."""
        if self._held:
            yield
            return
        with synclock.exclusive(self.here.place.gitdir, self.remote), synclock.sync_reads():
            self._held = True
            try:
                yield
            finally:
                self._held = False
        self.transport.maintain()

    def integrate(self) -> list[Outcome]:
        """Merge the notes, then bring in each conversation the last fetch may have
        moved; both sides' tips are listed once for the two."""
        self._unmoved = None
        cids = self._cids()
        remote_tips = self.remote_tips()
        listed: dict[str, Tips] | None = None  # every local conversation, once listed

        def every_cid() -> set[str]:
            nonlocal listed
            listed = self.local_tips()
            return set(listed) | set(remote_tips)

        # the metadata notes, when the store had none before (a first pull): what each
        # conversation it creates continues is read there, not from its note again
        origins: list[dict[str, str]] = []
        outcomes = syncnotes.pull_notes(
            self.here,
            self.transport,
            self.remote,
            self.inbound.notes,
            self.signature,
            self.limits,
            every_cid,
            lambda texts: origins.append(syncnotes.naming_origins(texts)),
        )
        if cids is not None and not cids:
            return outcomes
        if listed is None:
            local = self.local_tips(cids)
        else:
            local = {c: t for c, t in listed.items() if cids is None or c in cids}
        whole = dict(local) if cids is None else None
        steps = self._steps(local, remote_tips)
        if not any(o.kind == "conversation" for o in steps):
            self._unmoved = whole
        outcomes += steps
        return syncnotes.continuing(self.here, origins[0], outcomes) if origins else outcomes

    def _steps(self, local: dict[str, Tips], remote_tips: dict[str, Tips]) -> list[Outcome]:
        """Plan and apply every conversation's step."""
        outcomes: list[Outcome] = []
        for cid in sorted(c for c, t in local.items() if t.broken):
            outcomes.append(self._broken(cid, local.pop(cid)))
            remote_tips.pop(cid, None)
        simple: list[tuple[PullStep, Tips]] = []
        forks: list[tuple[PullStep, Tips]] = []
        every = sorted(remote_tips)  # one only here has nothing to pull
        none = Tips()  # a side that has no ref of the id (read, never changed)
        for done, cid in enumerate(every, 1):
            if done % 500 == 0:
                self.progress("comparing", done, len(every))
            mine = local.get(cid, none)
            step = self._plan(cid, mine, remote_tips.get(cid, none))
            if step.action in (Action.NONE, Action.AHEAD):
                continue
            (forks if step.fork is not None else simple).append((step, mine))
        created = [s.cid for s, _ in simple if s.action is Action.CREATED]
        with syncnotes.anchors(self.here, created):
            if len(created) >= bulkpull.BULK_AT:  # into packed-refs, as `git clone` does
                made, left = bulkpull.create_packed(
                    self.here, [s for s, _ in simple if s.action is Action.CREATED]
                )
                outcomes += [Outcome(c, Action.CREATED.value) for c in made]
                simple = [(s, t) for s, t in simple if s.action is not Action.CREATED]
                simple += [(s, Tips()) for s in left]
            for start in range(0, len(simple), BATCH):
                self.progress("integrating", start, len(simple))
                batch = simple[start : start + BATCH]
                outcomes += _apply_batch(self.here, self.remote, batch)
        taken = set(remote_tips)
        for step, now in forks:
            outcomes.append(_apply_fork(self.here, self.remote, self.signature, step, now, taken))
        return outcomes

    def _plan(self, cid: str, mine: Tips, theirs: Tips) -> PullStep:
        local = reduce(mine.live, mine.archived, self.compare)
        remote = reduce(theirs.live, theirs.archived, self.compare)
        hint = None
        if local and remote and local.tip == remote.tip and local.archived != remote.archived:
            hint = archived_by_meta(self.here.notes.note(self.here.notes.refs.meta, cid))
        return plan_pull(cid, local, remote, self.compare, hint)

    def _broken(self, cid: str, tips: Tips) -> Outcome:
        what = f"here it points at a {tips.broken}, not a commit"
        return Outcome(cid, "skipped", kind="warning", detail=f"{what}; not synced")


# -- the local ref moves ------------------------------------------------------------


def _moves(cid: str, target: Side, now: Tips) -> list[RefUpdate]:
    """Local ref updates that leave ``cid`` in state ``target``."""
    want, other = (refs.archived(cid), refs.live(cid))
    want_now, other_now = now.archived, now.live
    if not target.archived:
        want, other, want_now, other_now = other, want, other_now, want_now
    updates = [] if want_now == target.tip else [RefUpdate(want, want_now, target.tip)]
    if other_now is not None:
        updates.append(RefUpdate(other, other_now, None))
    return updates


def _step_moves(step: PullStep, now: Tips) -> list[RefUpdate]:
    return [] if step.target is None else _moves(step.cid, step.target, now)


@contextmanager
def _holding(here: Here, cids: list[str]) -> Iterator[set[str]]:
    """Hold each conversation that no query is writing; yields the busy ones."""
    busy: set[str] = set()
    with ExitStack() as stack:
        for cid in cids:
            try:
                stack.enter_context(here.refs.hold(cid))
            except ConversationBusy:
                busy.add(cid)
        yield busy


def _message(remote: str, step: PullStep) -> str:
    return f"jp pull {remote}: {step.action.value} {step.cid}"


def _apply_batch(here: Here, remote: str, batch: list[tuple[PullStep, Tips]]) -> list[Outcome]:
    """Move the refs of ``batch`` in one transaction; one by one if something moved."""
    held = [s.cid for s, now in batch if now.live or now.archived]
    with _holding(here, held) as busy:
        ready = [(s, now) for s, now in batch if s.cid not in busy]
        updates = [u for s, now in ready for u in _step_moves(s, now)]
        out = [Outcome(cid, "busy", detail=_BUSY) for cid in busy]
        try:
            here.refs.move(updates, f"jp pull {remote}")
            return out + [Outcome(s.cid, s.action.value) for s, _ in ready]
        except ConcurrentUpdate:
            pass
        for step, now in ready:  # one at a time, so one change does not block the rest
            try:
                here.refs.move(_step_moves(step, now), _message(remote, step))
                out.append(Outcome(step.cid, step.action.value))
            except ConcurrentUpdate:
                out.append(Outcome(step.cid, "changed", detail=_CHANGED))
        return out


def _apply_fork(
    here: Here, remote: str, signature: pygit2.Signature, step: PullStep, now: Tips, taken: set[str]
) -> Outcome:
    """The remote keeps the id; the local copy continues under a new id."""
    assert step.fork is not None and step.target is not None
    cid = step.cid
    new_id = ids.new_id(here.clock.now(), lambda c: c in taken or here.refs.exists(c))
    taken.add(new_id)
    syncnotes.copy_meta(here, signature, cid, new_id, step, remote)
    fork_ref = refs.archived(new_id) if step.fork.archived else refs.live(new_id)
    updates = [RefUpdate(fork_ref, None, step.fork.tip), *_moves(cid, step.target, now)]
    active = transaction.current(here.place.repo, refs.ACTIVE)  # symbolic: "symbolic:<ref>"
    if active == SYMBOLIC + refs.live(cid) and not step.fork.archived:
        updates.append(RefUpdate(refs.ACTIVE, active, SYMBOLIC + fork_ref))
    with _holding(here, [cid]) as busy:
        if busy:
            return Outcome(cid, "busy", detail=_BUSY)
        try:
            here.refs.move(updates, _message(remote, step) + f" -> {new_id}")
        except ConcurrentUpdate:
            return Outcome(cid, "changed", detail=_CHANGED)
    return Outcome(cid, step.action.value, new_id=new_id)


def open_sync(
    store: Store,
    remote: str,
    git: str,
    progress: Progress | None = None,
    unattended: Mapping[str, str] | None = None,
    stall: float | None = STALL_SECONDS,
) -> Syncer:
    """A pull or push with ``remote`` through the git command line at ``git``
    (``transport.choose``; jp needs git).  ``unattended``: the
    environment of a git that must never prompt, since nobody can answer.
    ``stall``: seconds without a byte from the remote before it is given up."""
    transport = choose(store.place.repo, git, unattended, stall)
    return Syncer(Here.of(store), remote, transport, progress)
