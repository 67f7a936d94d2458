"""Pull: fetch a remote's conversations and notes, then integrate them.

Fetching copies the remote's ``refs/conversations/*``, ``refs/archive/*`` and
``refs/notes/*`` to ``refs/jp-remotes/<remote>/...`` (forced: they are
copies).  Integrating decides per conversation id (``syncplan``) and moves
local refs by compare-and-swap, in journaled transactions; every step can be
rerun, so an interrupted pull is completed by the next one.  ``JP_HEAD``,
caches, locks and the store's ``jp/`` folder never travel.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

import pygit2

from gitstore import ids, refs, remotes, synclock, syncmeta, transaction
from gitstore.ancestry import Comparison, repo_parent
from gitstore.ancestry import compare as compare_tips
from gitstore.errors import ConcurrentUpdate, ConversationBusy, SyncError
from gitstore.notesync import NotesAction
from gitstore.notesync import integrate as integrate_notes
from gitstore.store import Store
from gitstore.syncplan import Action, PullStep, Side, archived_by_meta, plan_pull, reduce
from gitstore.transaction import SYMBOLIC, RefUpdate
from gitstore.transport import Transport

Progress = Callable[[str, int, int], None]
BATCH = 200  # conversations moved per transaction (each holds its lock file open)


@dataclass(frozen=True)
class Outcome:
    """What happened to one conversation (or notes ref, or skipped ref)."""

    id: str
    action: str
    new_id: str | None = None
    kind: str = "conversation"  # conversation | notes | warning
    direction: str = "pull"
    detail: str = ""


@dataclass
class Tips:
    live: str | None = None
    archived: str | None = None


def ref_targets(repo: pygit2.Repository, prefix: str) -> dict[str, str]:
    """Direct refs under ``prefix``: the rest of the name -> commit id."""
    out: dict[str, str] = {}
    for ref in repo.listall_reference_objects():
        name = str(ref.name)
        if name.startswith(prefix) and isinstance(ref.target, pygit2.Oid):
            out[name[len(prefix) :]] = str(ref.target)
    return out


class Syncer:
    def __init__(
        self, store: Store, remote: str, transport: Transport, progress: Progress | None = None
    ) -> None:
        self.store = store
        self.repo = store.repo
        self.remote = remote
        self.tracking = remotes.tracking_prefix(remote)
        self.transport = transport
        self.progress = progress or (lambda _stage, _done, _total: None)
        self._parent = repo_parent(self.repo)
        self.signature = pygit2.Signature(store.identity.name, store.identity.email)
        self._held = False

    def compare(self, a: str, b: str) -> Comparison:
        return compare_tips(a, b, self._parent)

    # -- state ------------------------------------------------------------------------

    def local_tips(self) -> dict[str, Tips]:
        out: dict[str, Tips] = {}
        for loc in self.store.refs(None):
            tips = out.setdefault(loc.cid, Tips())
            if loc.archived:
                tips.archived = loc.tip
            else:
                tips.live = loc.tip
        return out

    def remote_tips(self) -> tuple[dict[str, Tips], list[Outcome]]:
        """The fetched copies, and a warning per ref whose name is not an id."""
        out: dict[str, Tips] = {}
        warnings: list[Outcome] = []
        for sub, archived in (("conversations/", False), ("archive/", True)):
            for rest, tip in ref_targets(self.repo, self.tracking + sub).items():
                cid = rest
                if archived:
                    cid = rest[len("conversations/") :] if rest.startswith("conversations/") else ""
                if not ids.is_valid(cid):
                    warnings.append(
                        Outcome(
                            f"refs/{sub}{rest}",
                            "skipped",
                            kind="warning",
                            detail="not a conversation id",
                        )
                    )
                    continue
                tips = out.setdefault(cid, Tips())
                if archived:
                    tips.archived = tip
                else:
                    tips.live = tip
        return out, warnings

    # -- pull --------------------------------------------------------------------------

    def fetch(self) -> None:
        self.progress("fetching", 0, 0)
        try:
            self.transport.fetch(self.remote, remotes.fetch_refspecs(self.remote))
        except SyncError as exc:
            # a git killed with an earlier jp left lock files on the copies
            namespace = self.tracking.rstrip("/")
            if ".lock" not in exc.reason or not synclock.clear_stale(self.store.gitdir, namespace):
                raise
            self.transport.fetch(self.remote, remotes.fetch_refspecs(self.remote))

    def pull(self) -> list[Outcome]:
        with self.exclusive():
            self.fetch()
            outcomes = self.integrate()
            if not any(o.action == "changed" for o in outcomes):
                return outcomes
            # a ref locked by a jp killed a moment ago: once its lock is old enough
            # for the store's repair to call it stale, integrate again
            time.sleep(transaction.STALE_LOCK_SECONDS + 0.2)
            transaction.repair(self.repo, self.store.gitdir)
            return [o for o in outcomes if o.action != "changed"] + self.integrate()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """The sync lock of this store and remote (re-entrant within one Syncer)."""
        if self._held:
            yield
            return
        with synclock.exclusive(self.store.gitdir, self.remote):
            self._held = True
            try:
                yield
            finally:
                self._held = False
        self.transport.maintain()

    def integrate(self) -> list[Outcome]:
        outcomes = self.integrate_notes()
        local, remote = self.local_tips(), self.remote_tips()
        remote_tips, warnings = remote
        outcomes += warnings
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
            hint = archived_by_meta(self.store.note(refs.NOTES_META, cid))
        return plan_pull(cid, local, remote, self.compare, hint)

    def integrate_notes(self) -> list[Outcome]:
        out: list[Outcome] = []
        prefix = self.tracking + "notes/"
        for rest in sorted(ref_targets(self.repo, prefix)):
            local_ref = "refs/notes/" + rest
            if not pygit2.reference_is_valid_name(local_ref):
                continue
            action = integrate_notes(
                self.repo,
                self.store.gitdir,
                local_ref,
                prefix + rest,
                self.signature,
                f"jp pull {self.remote}: notes {rest}",
                self.store.ops.moving,
            )
            if action not in (NotesAction.NONE, NotesAction.AHEAD):
                out.append(Outcome(local_ref, action.value, kind="notes"))
        return out

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
                    stack.enter_context(self.store.hold(cid))
                except ConversationBusy:
                    busy.add(cid)
            yield busy

    def _message(self, step: PullStep) -> str:
        return f"jp pull {self.remote}: {step.action.value} {step.cid}"

    def _apply_batch(self, batch: list[tuple[PullStep, Tips]]) -> list[Outcome]:
        held = [s.cid for s, now in batch if now.live or now.archived]
        with self._holding(held) as busy:
            ready = [(s, now) for s, now in batch if s.cid not in busy]
            for step, _ in ready:
                if step.action is Action.CREATED:
                    self.repo.create_blob(ids.anchor_bytes(step.cid))
            updates = [u for s, now in ready for u in self._step_moves(s, now)]
            out = [Outcome(cid, "busy", detail="in use by another jp process") for cid in busy]
            try:
                self.store.move(updates, f"jp pull {self.remote}")
                return out + [Outcome(s.cid, s.action.value) for s, _ in ready]
            except ConcurrentUpdate:
                pass
            for step, now in ready:  # one at a time, so one change does not block the rest
                try:
                    self.store.move(self._step_moves(step, now), self._message(step))
                    out.append(Outcome(step.cid, step.action.value))
                except ConcurrentUpdate:
                    out.append(Outcome(step.cid, "changed", detail="changed during the pull"))
            return out

    def _apply_fork(self, step: PullStep, now: Tips, taken: set[str]) -> Outcome:
        """The remote keeps the id; the local copy continues under a new id."""
        assert step.fork is not None and step.target is not None
        cid = step.cid
        new_id = ids.new_id(datetime.now(UTC), lambda c: c in taken or self.store.exists(c))
        taken.add(new_id)
        syncmeta.copy_meta(self.store, self.signature, cid, new_id, step, self.remote)
        fork_ref = refs.archived(new_id) if step.fork.archived else refs.live(new_id)
        updates = [RefUpdate(fork_ref, None, step.fork.tip), *self._moves(cid, step.target, now)]
        active = syncmeta.active_target(self.repo)
        if active == refs.live(cid) and not step.fork.archived:
            updates.append(RefUpdate(refs.ACTIVE, SYMBOLIC + active, SYMBOLIC + fork_ref))
        with self._holding([cid]) as busy:
            if busy:
                return Outcome(cid, "busy", detail="in use by another jp process")
            try:
                self.store.move(updates, self._message(step) + f" -> {new_id}")
            except ConcurrentUpdate:
                return Outcome(cid, "changed", detail="changed during the pull")
        return Outcome(cid, step.action.value, new_id=new_id)
