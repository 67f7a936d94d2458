"""Pull: fetch a remote's conversations and notes, then integrate them.

Fetching copies the remote's ``refs/conversations/*``, ``refs/archive/*`` and
jp's notes refs (``refs/notes/meta``, ``refs/notes/source``; never other
notes) to ``refs/jp-remotes/<remote>/...`` (forced: they are copies); the
notes are integrated into the store's own names (``store.notes.refs``).  Integrating decides per conversation id (``syncplan``) and moves
local refs by compare-and-swap, in journaled transactions; every step can be
rerun, so an interrupted pull is completed by the next one.  ``JP_HEAD``,
caches, locks and the store's ``jp/`` folder never travel.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from gitstore import ids, refs
from gitstore.boundary import Limits, conversation_name
from gitstore.errors import ConcurrentUpdate, ConversationBusy
from gitstore.refs import quarantine, transaction
from gitstore.refs.transaction import SYMBOLIC, RefUpdate
from gitstore.store.core import Store
from gitstore.sync import created as bulkpull
from gitstore.sync import fetching, journal, journaled, remotes
from gitstore.sync import lock as synclock
from gitstore.sync import meta as syncmeta
from gitstore.sync.ancestry import Comparison, repo_parent
from gitstore.sync.ancestry import compare as compare_tips
from gitstore.sync.fetching import Inbound
from gitstore.sync.here import Here
from gitstore.sync.notes import LazyNames, NotesAction
from gitstore.sync.notes import integrate as integrate_notes
from gitstore.sync.plan import Action, PullStep, Side, archived_by_meta, plan_pull, reduce
from gitstore.sync.transport import Transport, choose

Progress = Callable[[str, int, int], None]
BATCH = 200  # conversations moved per transaction (each holds its lock file open)
SCOPED_MAX = 2000  # conversations read by name; past that one listing of them all is cheaper


@dataclass(frozen=True)
class Outcome:
    """What happened to one conversation (or notes ref, or skipped ref)."""

    id: str
    action: str
    new_id: str | None = None
    kind: str = "conversation"  # conversation | notes | warning | refused
    direction: str = "pull"
    detail: str = ""
    kept: str | None = None  # refused: the quarantine ref that holds its tip
    acknowledged: bool = False  # refused, and the user acknowledged it (`jp doctor --ack`)


@dataclass
class Tips:
    live: str | None = None
    archived: str | None = None
    broken: str | None = None  # a ref that is not a commit: its object's type


def _summary(problems: list[str], shown: int = 3) -> str:
    """What was dropped from a remote's notes, in one line."""
    more = f"; and {len(problems) - shown} more" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more + " (the rest was merged)"


class Syncer:
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
        self.journal_note: Outcome | None = None  # why the journal was not used
        self.drift_note: Outcome | None = None  # what a reconcile found the journal missed

    def compare(self, a: str, b: str) -> Comparison:
        return compare_tips(a, b, self._parent)

    # -- state ------------------------------------------------------------------------

    def local_tips(self, cids: set[str] | None = None) -> dict[str, Tips]:
        """This store's conversations (refs that are commits: a broken one is left
        alone); with ``cids``, only those."""
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

    def remote_tips(self) -> dict[str, Tips]:
        """The fetched copies that passed the checks of the last fetch."""
        out: dict[str, Tips] = {}
        for rest, tip in self.inbound.conversations.items():
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
        """Fetch what moved on the remote (the journal's names; ``full`` or when the
        journal cannot say: everything), then check every copy that came
        (``fetching``): what fails is refused, by name."""
        self.progress("fetching", 0, 0)
        self.journal_note, self.drift_note, self.scope = None, None, None
        gitdir = self.here.place.gitdir
        if not full and journaled.usable(self):
            scope = journaled.fetch(self)
            if scope is not None:
                bulkpull.pack_copies(gitdir, self.tracking, self.transport)
                self.progress("checking", 0, len(scope))
                self.inbound = fetching.screen(
                    self.here, self.transport, self.remote, self.limits, [], scope
                )
                self.scope = scope
                journaled.accept(self, reconciled=False)
                return
        else:
            fetching.fetch_journal(self.transport, self.remote, gitdir)  # before the listing
        since, before = self.journal_tip(), journaled.copies(self)
        refused = fetching.fetch(self.transport, self.remote, gitdir)
        bulkpull.pack_copies(gitdir, self.tracking, self.transport)
        unnamed = journaled.drift(self, before, since)
        if unnamed:
            detail = journaled.drift_line(self.remote, unnamed)
            self.drift_note = Outcome(journal.REMOTE_REF, "drift", kind="warning", detail=detail)
        self.progress("checking", 0, 0)
        self.inbound = fetching.screen(self.here, self.transport, self.remote, self.limits, refused)
        journaled.accept(self, reconciled=True)

    def journal_tip(self, name: str = journal.COPY) -> str | None:
        """The remote's journal as the last pull finished with it (None: none)."""
        ref = self.repo.references.get(self.tracking + name)
        return None if ref is None else str(ref.target)

    @staticmethod
    def warning(ref: str, detail: str) -> Outcome:
        return Outcome(ref, "skipped", kind="warning", detail=detail)

    def complete(self) -> None:
        """After a fetch of what moved: every other copy too (``journaled.complete``)."""
        journaled.complete(self)

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
            note = [n for n in (self.journal_note, self.drift_note) if n is not None]
            outcomes = note + self.refusals() + self.integrate()
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
        with synclock.exclusive(self.here.place.gitdir, self.remote):
            self._held = True
            try:
                yield
            finally:
                self._held = False
        self.transport.maintain()

    def integrate(self) -> list[Outcome]:
        outcomes = self.integrate_notes()
        cids = self._cids()
        if cids is not None and not cids:
            return outcomes
        local, remote_tips = self.local_tips(cids), self.remote_tips()
        for cid in sorted(c for c, t in local.items() if t.broken):
            outcomes.append(self._broken(cid, local.pop(cid)))
            remote_tips.pop(cid, None)
        simple: list[tuple[PullStep, Tips]] = []
        forks: list[tuple[PullStep, Tips]] = []
        every = sorted(set(local) | set(remote_tips))
        for done, cid in enumerate(every, 1):
            if done % 500 == 0:
                self.progress("comparing", done, len(every))
            step = self._plan(cid, local.get(cid, Tips()), remote_tips.get(cid, Tips()))
            if step.action in (Action.NONE, Action.AHEAD):
                continue
            if step.fork is not None:
                forks.append((step, local.get(cid, Tips())))
            else:
                simple.append((step, local.get(cid, Tips())))
        created = [s.cid for s, _ in simple if s.action is Action.CREATED]
        with syncmeta.anchors(self.here, created):
            if len(created) >= bulkpull.BULK_AT:  # into packed-refs, as `git clone` does
                made, left = bulkpull.create_packed(
                    self.here, [s for s, _ in simple if s.action is Action.CREATED]
                )
                outcomes += [Outcome(cid, Action.CREATED.value) for cid in made]
                simple = [(s, t) for s, t in simple if s.action is not Action.CREATED]
                simple += [(s, Tips()) for s in left]
            for start in range(0, len(simple), BATCH):
                self.progress("integrating", start, len(simple))
                outcomes += self._apply_batch(simple[start : start + BATCH])
        taken = set(remote_tips)
        for step, now in forks:
            outcomes.append(self._apply_fork(step, now, taken))
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

    def integrate_notes(self) -> list[Outcome]:
        out: list[Outcome] = []
        rows = self.transport.list_refs(["refs/notes/"])
        local = {r.name: r.kind for r in rows}
        wanted = [
            (local_ref, there.removeprefix("refs/notes/"))
            for local_ref, there in self.here.notes.refs.synced()  # jp's notes refs, by name
            if there.removeprefix("refs/notes/") in self.inbound.notes
        ]
        names = LazyNames(self._anchor_names)  # for what is reported, made if needed
        for local_ref, rest in wanted:
            if local.get(local_ref, "commit") != "commit":
                detail = f"here it points at a {local[local_ref]}, not a commit; not synced"
                out.append(Outcome(local_ref, "skipped", kind="warning", detail=detail))
                continue
            action, problems = integrate_notes(
                self.here.place,
                local_ref,
                self.tracking + "notes/" + rest,
                self.signature,
                f"jp pull {self.remote}: notes {rest}",
                self.limits,
                names,
                self.here.ops.moving,
            )
            if action not in (NotesAction.NONE, NotesAction.AHEAD):
                out.append(Outcome(local_ref, action.value, kind="notes"))
            if problems:
                out.append(Outcome(local_ref, "cleaned", kind="warning", detail=_summary(problems)))
        return out

    def _anchor_names(self) -> dict[str, str]:
        every = set(self.local_tips()) | set(self.remote_tips())
        return {self.here.notes.anchor(cid): cid for cid in every}

    @staticmethod
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

    def _step_moves(self, step: PullStep, now: Tips) -> list[RefUpdate]:
        return [] if step.target is None else self._moves(step.cid, step.target, now)

    @contextmanager
    def _holding(self, cids: list[str]) -> Iterator[set[str]]:
        """Hold each conversation that no query is writing; yields the busy ones."""
        busy: set[str] = set()
        with ExitStack() as stack:
            for cid in cids:
                try:
                    stack.enter_context(self.here.refs.hold(cid))
                except ConversationBusy:
                    busy.add(cid)
            yield busy

    def _message(self, step: PullStep) -> str:
        return f"jp pull {self.remote}: {step.action.value} {step.cid}"

    def _apply_batch(self, batch: list[tuple[PullStep, Tips]]) -> list[Outcome]:
        held = [s.cid for s, now in batch if now.live or now.archived]
        with self._holding(held) as busy:
            ready = [(s, now) for s, now in batch if s.cid not in busy]
            updates = [u for s, now in ready for u in self._step_moves(s, now)]
            out = [Outcome(cid, "busy", detail="in use by another jp process") for cid in busy]
            try:
                self.here.refs.move(updates, f"jp pull {self.remote}")
                return out + [Outcome(s.cid, s.action.value) for s, _ in ready]
            except ConcurrentUpdate:
                pass
            for step, now in ready:  # one at a time, so one change does not block the rest
                try:
                    self.here.refs.move(self._step_moves(step, now), self._message(step))
                    out.append(Outcome(step.cid, step.action.value))
                except ConcurrentUpdate:
                    out.append(Outcome(step.cid, "changed", detail="changed during the pull"))
            return out

    def _apply_fork(self, step: PullStep, now: Tips, taken: set[str]) -> Outcome:
        """The remote keeps the id; the local copy continues under a new id."""
        assert step.fork is not None and step.target is not None
        cid = step.cid
        new_id = ids.new_id(self.here.clock.now(), lambda c: c in taken or self.here.refs.exists(c))
        taken.add(new_id)
        syncmeta.copy_meta(self.here, self.signature, cid, new_id, step, self.remote)
        fork_ref = refs.archived(new_id) if step.fork.archived else refs.live(new_id)
        updates = [RefUpdate(fork_ref, None, step.fork.tip), *self._moves(cid, step.target, now)]
        active = syncmeta.active_target(self.repo)
        if active == refs.live(cid) and not step.fork.archived:
            updates.append(RefUpdate(refs.ACTIVE, SYMBOLIC + active, SYMBOLIC + fork_ref))
        with self._holding([cid]) as busy:
            if busy:
                return Outcome(cid, "busy", detail="in use by another jp process")
            try:
                self.here.refs.move(updates, self._message(step) + f" -> {new_id}")
            except ConcurrentUpdate:
                return Outcome(cid, "changed", detail="changed during the pull")
        return Outcome(cid, step.action.value, new_id=new_id)


def open_sync(
    store: Store,
    remote: str,
    git: str | None,
    progress: Progress | None = None,
    unattended: Mapping[str, str] | None = None,
) -> Syncer:
    """A pull or push with ``remote`` through the git command line at ``git``
    (None: libgit2's own transport, ``transport.choose``).  ``unattended``: the
    environment of a git that must never prompt, since nobody can answer."""
    return Syncer(Here.of(store), remote, choose(store.place.repo, git, unattended), progress)
