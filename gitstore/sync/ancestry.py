"""How two tips of one conversation relate, by walking first parents.

A conversation is a linear chain, so two tips are equal, one contains the
other, they share a prefix and then differ, or they have nothing in common.
Both tips are walked one step at a time, alternately: the walk stops as soon
as one reaches the other's tip or a commit the other walk has already seen.
The cost is bounded by the distance between the tips and their fork point,
not by the length of the history (``descendant_of`` walks all of it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

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
    seen_a, seen_b = {a}, {b}
    cur_a: str | None = a
    cur_b: str | None = b
    steps = 0
    while cur_a is not None or cur_b is not None:
        steps += 1
        if steps > limit:
            raise WalkTooLong(f"{a}..{b}")
        if cur_a is not None:
            cur_a = parent(cur_a)
            if cur_a == b:
                return Comparison(Relation.AHEAD, b)
            if cur_a is not None:
                if cur_a in seen_b:
                    return Comparison(Relation.DIVERGED, cur_a)
                seen_a.add(cur_a)
        if cur_b is not None:
            cur_b = parent(cur_b)
            if cur_b == a:
                return Comparison(Relation.BEHIND, a)
            if cur_b is not None:
                if cur_b in seen_a:
                    return Comparison(Relation.DIVERGED, cur_b)
                seen_b.add(cur_b)
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
