"""The bounded first-parent walk that relates two tips of one conversation."""

from __future__ import annotations

import pytest

from gitstore.sync.plan import Relation, WalkTooLong, compare


def chain(names: str, parents: dict[str, str | None], base: str | None = None) -> None:
    """Link single-letter commits in order: chain("abc") makes c -> b -> a."""
    previous = base
    for name in names:
        parents[name] = previous
        previous = name


def graph(*chains: tuple[str, str | None]) -> dict[str, str | None]:
    parents: dict[str, str | None] = {}
    for names, base in chains:
        chain(names, parents, base)
    return parents


Parents = dict[str, str | None]


def relate(parents: Parents, a: str, b: str, limit: int = 1000) -> tuple[Relation, str | None]:
    calls: list[str] = []

    def parent(oid: str) -> str | None:
        calls.append(oid)
        return parents.get(oid)

    result = compare(a, b, parent, limit)
    return result.relation, result.base


def test_equal_tips() -> None:
    assert relate(graph(("abc", None)), "c", "c") == (Relation.EQUAL, "c")


def test_one_tip_contains_the_other_both_ways() -> None:
    parents = graph(("abcdef", None))
    assert relate(parents, "f", "c") == (Relation.AHEAD, "c")
    assert relate(parents, "c", "f") == (Relation.BEHIND, "c")
    assert relate(parents, "b", "a") == (Relation.AHEAD, "a")


def test_diverged_reports_the_fork_point() -> None:
    parents = graph(("abc", None), ("xy", "b"))  # a-b-c and a-b-x-y
    assert relate(parents, "c", "y") == (Relation.DIVERGED, "b")
    assert relate(parents, "y", "c") == (Relation.DIVERGED, "b")


def test_diverged_at_the_root() -> None:
    parents = graph(("ab", None), ("x", "a"))
    assert relate(parents, "b", "x") == (Relation.DIVERGED, "a")


def test_unrelated_histories() -> None:
    parents = graph(("abc", None), ("xyz", None))
    assert relate(parents, "c", "z") == (Relation.UNRELATED, None)


def test_missing_objects_end_the_walk() -> None:
    assert relate({}, "p", "q") == (Relation.UNRELATED, None)


def test_walk_is_bounded_by_the_distance_not_the_history() -> None:
    names = [f"c{i}" for i in range(10_000)]
    parents: dict[str, str | None] = {n: (names[i - 1] if i else None) for i, n in enumerate(names)}
    seen: list[str] = []

    def parent(oid: str) -> str | None:
        seen.append(oid)
        return parents[oid]

    assert compare(names[-1], names[-4], parent).relation is Relation.AHEAD
    assert len(seen) <= 8
    seen.clear()
    parents["x1"], parents["x2"] = names[-3], "x1"
    result = compare(names[-1], "x2", parent)
    assert result.relation is Relation.DIVERGED and result.base == names[-3]
    assert len(seen) <= 8


def test_limit_stops_a_runaway_walk() -> None:
    parents = graph(("abcdefgh", None), ("xyz", None))
    with pytest.raises(WalkTooLong):
        relate(parents, "h", "z", limit=3)


def test_contains() -> None:
    parents = graph(("abc", None))
    assert compare("c", "a", parents.get).contains
    assert compare("c", "c", parents.get).contains
    assert not compare("a", "c", parents.get).contains
