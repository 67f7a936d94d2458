"""What pull and push do with one conversation: pure decisions, no git (but the
first parents ``repo_parent`` reads); how two tips relate (``compare``) and what
a sync reports (``Outcome``).

Each side holds a conversation live or archived at some tip.  The rules
(docs/sync.md has an example for each):

- only the remote has it: create it locally, in the remote's state;
- equal tips: nothing, except that a differing archive state is settled by
  the newest ``archived_at`` metadata line, and archived wins without one;
- one tip contains the other: the longer history wins, with its side's
  archive state (activity un-archives; archiving covers what it saw);
- diverged, or unrelated (the same id made twice): the remote's copy keeps
  the id and the local copy moves to a new id.

``compare`` walks both tips' first parents alternately, so its cost is the
distance to the fork point, not the history's length (``descendant_of``'s).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from gitstore.boundary import meta_item

if TYPE_CHECKING:
    import pygit2

# a hard stop, far beyond any real conversation; past it the walk gives up
LIMIT = 5_000_000


class Relation(StrEnum):
    EQUAL = "equal"
    AHEAD = "ahead"  # the first tip contains the second and more
    BEHIND = "behind"  # the second tip contains the first and more
    DIVERGED = "diverged"  # a common prefix, then different events
    UNRELATED = "unrelated"  # no common commit at all


@dataclass(frozen=True)
class Comparison:
    relation: Relation
    base: str | None = None  # the fork point when diverged

    @property
    def contains(self) -> bool:
        """The first tip holds every event of the second."""
        return self.relation in (Relation.EQUAL, Relation.AHEAD)


class WalkTooLong(Exception):
    """The walk passed ``LIMIT`` steps without an answer."""


Parent = Callable[[str], str | None]


def compare(a: str, b: str, parent: Parent, limit: int = LIMIT) -> Comparison:
    """How tip ``a`` relates to tip ``b``; ``parent`` gives a commit's first parent."""
    if a == b:
        return Comparison(Relation.EQUAL, a)
    tips = (a, b)
    cur: list[str | None] = [a, b]
    seen = ({a}, {b})
    meets = (Relation.AHEAD, Relation.BEHIND)  # a's walk reaching b: a is ahead
    steps = 0
    while cur[0] is not None or cur[1] is not None:
        steps += 1
        if steps > limit:
            raise WalkTooLong(f"{a}..{b}")
        for side, other in ((0, 1), (1, 0)):  # one step of each walk in turn
            here = cur[side]
            if here is None:
                continue
            here = cur[side] = parent(here)
            if here == tips[other]:
                return Comparison(meets[side], here)
            if here is not None:
                if here in seen[other]:
                    return Comparison(Relation.DIVERGED, here)
                seen[side].add(here)
    return Comparison(Relation.UNRELATED)


def repo_parent(repo: pygit2.Repository) -> Parent:
    """First parents read from ``repo`` (a missing object ends the walk)."""

    def parent(oid: str) -> str | None:
        try:
            commit = repo[oid]
        except (KeyError, ValueError):
            return None
        ids = getattr(commit, "parent_ids", None)
        return str(ids[0]) if ids else None

    return parent


Compare = Callable[[str, str], Comparison]


@dataclass(frozen=True, slots=True)
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
    # created by a pull: the id it continues as its metadata note says ("" if none),
    # known when the pull brought the store's first notes; None: read them to know
    continues: str | None = None


@dataclass(slots=True)
class Tips:
    live: str | None = None
    archived: str | None = None
    broken: str | None = None  # a ref that is not a commit: its object's type


@dataclass(frozen=True, slots=True)
class Side:
    tip: str
    archived: bool


class Action(StrEnum):
    NONE = "up-to-date"
    AHEAD = "ahead"  # local has more; a push sends it
    CREATED = "created"
    FAST_FORWARDED = "fast-forwarded"
    ARCHIVED = "archived"
    UNARCHIVED = "unarchived"
    DIVERGED = "diverged"
    COLLISION = "collision"
    BLOCKED = "blocked"  # push: the remote has events we have not integrated


@dataclass(frozen=True, slots=True)
class PullStep:
    cid: str
    action: Action
    target: Side | None = None  # the id's state afterwards (None: unchanged)
    fork: Side | None = None  # diverged/collision: the local copy, under a new id
    base: str | None = None


def reduce(live: str | None, archived: str | None, compare: Compare) -> Side | None:
    """One state for a side that holds both refs (an interrupted archive move)."""
    if live is None:
        return None if archived is None else Side(archived, True)
    if archived is None:
        return Side(live, False)
    if compare(archived, live).contains:
        return Side(archived, True)
    return Side(live, False)


def plan_pull(
    cid: str,
    local: Side | None,
    remote: Side | None,
    compare: Compare,
    archived_meta: bool | None = None,
) -> PullStep:
    """The step that integrates ``remote`` into ``local`` for one id."""
    if remote is None:
        return PullStep(cid, Action.NONE if local is None else Action.AHEAD)
    if local is None:
        return PullStep(cid, Action.CREATED, remote)
    result = compare(local.tip, remote.tip)
    if result.relation is Relation.EQUAL:
        if local.archived == remote.archived:
            return PullStep(cid, Action.NONE)
        archived = True if archived_meta is None else archived_meta
        if archived == local.archived:
            return PullStep(cid, Action.AHEAD)  # the push settles the remote
        action = Action.ARCHIVED if archived else Action.UNARCHIVED
        return PullStep(cid, action, Side(local.tip, archived))
    if result.relation is Relation.AHEAD:
        return PullStep(cid, Action.AHEAD)
    if result.relation is Relation.BEHIND:
        return PullStep(cid, _moved(local, remote), remote)
    action = Action.DIVERGED if result.relation is Relation.DIVERGED else Action.COLLISION
    return PullStep(cid, action, remote, fork=local, base=result.base)


def _moved(local: Side, remote: Side) -> Action:
    if remote.archived != local.archived:
        return Action.ARCHIVED if remote.archived else Action.UNARCHIVED
    return Action.FAST_FORWARDED


@dataclass(frozen=True)
class RemoteUpdate:
    """Set ``ref`` on the remote to ``new`` (None deletes it, only if it is ``lease``)."""

    ref: str
    new: str | None
    lease: str | None = None


@dataclass(frozen=True)
class PushStep:
    cid: str
    action: Action
    updates: tuple[RemoteUpdate, ...] = ()


def plan_push(
    cid: str,
    local: Side | None,
    remote_live: str | None,
    remote_archived: str | None,
    compare: Compare,
    live_ref: str,
    archive_ref: str,
) -> PushStep:
    """What to send for one id, given the remote's refs as last fetched.

    Only creations and fast-forwards are sent; the ref of the other state is
    deleted on the remote only when our tip contains it (with a lease on it).
    """
    if local is None:
        return PushStep(cid, Action.NONE)
    mine, mine_ref, other, other_ref = (
        (remote_archived, archive_ref, remote_live, live_ref)
        if local.archived
        else (remote_live, live_ref, remote_archived, archive_ref)
    )
    updates: list[RemoteUpdate] = []
    if mine is None:
        updates.append(RemoteUpdate(mine_ref, local.tip))
    elif mine != local.tip:
        if compare(local.tip, mine).relation is not Relation.AHEAD:
            return PushStep(cid, Action.BLOCKED)
        updates.append(RemoteUpdate(mine_ref, local.tip))
    moved_state = other is not None
    if other is not None:
        if not compare(local.tip, other).contains:
            return PushStep(cid, Action.BLOCKED)
        updates.append(RemoteUpdate(other_ref, None, lease=other))
    if not updates:
        return PushStep(cid, Action.NONE)
    if moved_state:
        action = Action.ARCHIVED if local.archived else Action.UNARCHIVED
    elif mine is None and other is None:
        action = Action.CREATED
    else:
        action = Action.FAST_FORWARDED
    return PushStep(cid, action, tuple(updates))


def archived_by_meta(note: str | None) -> bool | None:
    """The newest ``archived_at`` line of a metadata note: set (True), unset
    (False), or None when the note has no such line."""
    best: tuple[int, str] | None = None
    value: object = None
    for line in (note or "").splitlines():
        item = meta_item(line)
        if item is None or item.key != "archived_at":
            continue
        rank = (item.stamp, item.machine)
        if best is None or rank > best:
            best, value = rank, item.value
    if best is None:
        return None
    return value is not None
