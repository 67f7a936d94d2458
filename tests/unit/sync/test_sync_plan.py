"""Pull and push decisions per conversation, on toy histories (no git)."""

from __future__ import annotations

import json

import pytest

from gitstore.sync.plan import (
    Action,
    Comparison,
    PullStep,
    PushStep,
    RemoteUpdate,
    Side,
    archived_by_meta,
    compare,
    plan_pull,
    plan_push,
    reduce,
)

# a-b-c-d is the shared history; x-y continue from b elsewhere; p-q is unrelated
PARENTS: dict[str, str | None] = {
    "a": None,
    "b": "a",
    "c": "b",
    "d": "c",
    "x": "b",
    "y": "x",
    "p": None,
    "q": "p",
}
LIVE, ARCH = "refs/conversations/jp-c1", "refs/archive/conversations/jp-c1"


def cmp(a: str, b: str) -> Comparison:
    return compare(a, b, PARENTS.get)


def live(tip: str) -> Side:
    return Side(tip, False)


def archived(tip: str) -> Side:
    return Side(tip, True)


def pull(local: Side | None, remote: Side | None, meta: bool | None = None) -> PullStep:
    return plan_pull("jp-c1", local, remote, cmp, meta)


# -- pull ----------------------------------------------------------------------


def test_only_remote_creates_locally_in_the_remote_state() -> None:
    step = pull(None, archived("c"))
    assert step.action is Action.CREATED and step.target == archived("c")


def test_only_local_waits_for_a_push() -> None:
    assert pull(live("c"), None).action is Action.AHEAD
    assert pull(None, None).action is Action.NONE


def test_equal_is_nothing() -> None:
    assert pull(live("c"), live("c")).action is Action.NONE
    assert pull(archived("c"), archived("c")).action is Action.NONE


def test_local_ahead_is_left_for_push() -> None:
    step = pull(live("d"), live("b"))
    assert step.action is Action.AHEAD and step.target is None


def test_remote_ahead_fast_forwards() -> None:
    step = pull(live("b"), live("d"))
    assert step.action is Action.FAST_FORWARDED and step.target == live("d")


@pytest.mark.parametrize("local_tip", ["b", "d"])
def test_remote_archived_what_we_have_archives_here(local_tip: str) -> None:
    step = pull(live(local_tip), archived("d"))
    assert step.action is Action.ARCHIVED and step.target == archived("d")


def test_remote_newer_live_unarchives_our_older_archived_copy() -> None:
    step = pull(archived("b"), live("d"))
    assert step.action is Action.UNARCHIVED and step.target == live("d")


def test_local_newer_live_stays_live_over_an_older_remote_archive() -> None:
    assert pull(live("d"), archived("b")).action is Action.AHEAD


def test_local_archive_of_the_remote_tip_is_pushed_later() -> None:
    assert pull(archived("d"), live("b")).action is Action.AHEAD
    assert pull(archived("d"), live("d")).action is Action.AHEAD


def test_equal_tips_follow_the_newest_archived_at_line() -> None:
    assert pull(live("c"), archived("c"), meta=None).action is Action.ARCHIVED
    assert pull(live("c"), archived("c"), meta=True).action is Action.ARCHIVED
    assert pull(live("c"), archived("c"), meta=False).action is Action.AHEAD
    step = pull(archived("c"), live("c"), meta=False)
    assert step.action is Action.UNARCHIVED and step.target == live("c")


def test_diverged_gives_the_id_to_the_remote_and_forks_ours() -> None:
    step = pull(live("d"), live("y"))
    assert step.action is Action.DIVERGED
    assert step.target == live("y") and step.fork == live("d") and step.base == "b"


def test_diverged_keeps_each_sides_archive_state() -> None:
    step = pull(archived("d"), live("y"))
    assert step.target == live("y") and step.fork == archived("d")


def test_same_id_for_unrelated_conversations_is_a_collision() -> None:
    step = pull(live("d"), live("q"))
    assert step.action is Action.COLLISION and step.target == live("q") and step.fork == live("d")


def test_after_a_divergence_the_next_pull_changes_nothing() -> None:
    assert pull(live("y"), live("y")).action is Action.NONE


# -- one side holding both refs (an interrupted archive move) -----------------------


def test_reduce() -> None:
    assert reduce(None, None, cmp) is None
    assert reduce("c", None, cmp) == live("c")
    assert reduce(None, "c", cmp) == archived("c")
    assert reduce("b", "d", cmp) == archived("d")
    assert reduce("d", "d", cmp) == archived("d")
    assert reduce("d", "b", cmp) == live("d")
    assert reduce("y", "d", cmp) == live("y")


# -- push ----------------------------------------------------------------------------


def push(local: Side | None, rlive: str | None, rarch: str | None) -> PushStep:
    return plan_push("jp-c1", local, rlive, rarch, cmp, LIVE, ARCH)


def test_push_new_and_fast_forward() -> None:
    step = push(live("c"), None, None)
    assert step.action is Action.CREATED and step.updates == (RemoteUpdate(LIVE, "c"),)
    step = push(live("d"), "b", None)
    assert step.action is Action.FAST_FORWARDED and step.updates == (RemoteUpdate(LIVE, "d"),)


def test_push_nothing_when_equal_or_absent() -> None:
    assert push(live("c"), "c", None).action is Action.NONE
    assert push(None, "c", None).action is Action.NONE


def test_push_never_sends_a_non_fast_forward() -> None:
    assert push(live("d"), "y", None).action is Action.BLOCKED
    assert push(live("b"), "d", None).action is Action.BLOCKED


def test_push_archive_move_deletes_the_live_ref_under_a_lease() -> None:
    step = push(archived("d"), "b", None)
    assert step.action is Action.ARCHIVED
    assert step.updates == (RemoteUpdate(ARCH, "d"), RemoteUpdate(LIVE, None, lease="b"))


def test_push_unarchive_by_activity_deletes_the_older_archive() -> None:
    step = push(live("d"), None, "c")
    assert step.action is Action.UNARCHIVED
    assert step.updates == (RemoteUpdate(LIVE, "d"), RemoteUpdate(ARCH, None, lease="c"))


def test_push_leaves_a_newer_remote_copy_alone() -> None:
    assert push(live("b"), None, "d").action is Action.BLOCKED


# -- metadata ------------------------------------------------------------------------------


def line(value: object, t: int, m: str = "m1", key: str = "archived_at") -> str:
    return json.dumps({"k": key, "v": value, "t": t, "m": m})


def test_archived_by_meta_takes_the_newest_line() -> None:
    assert archived_by_meta(None) is None
    assert archived_by_meta(line("x", 1, key="title")) is None
    assert archived_by_meta(line("2026-01-01", 1)) is True
    assert archived_by_meta("\n".join([line("2026-01-01", 1), line(None, 2)])) is False
    assert archived_by_meta("\n".join([line(None, 2, "a"), line("t", 2, "b")])) is True
    assert archived_by_meta("garbage\n" + line("t", 1)) is True
