"""The push's secret check on a real store: it reads each commit a push would send
once and scans each distinct event once, and neither loses a finding.

A fork shares its source's commits, and the same event (the same bytes) written in
two conversations is one blob: each is scanned once per push, and each conversation
that would send it is still held back by it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitstore import ids
from gitstore.events import Event
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from porcelain.app.secretcheck import PushCheck
from porcelain.domain.secretevents import AllowList
from tests.support.secretcorpus import PLANTED

SECRET = PLANTED["github token"][0]
HELD = "holds secrets: github token"
A = ids.from_deciseconds(17_800_000_001)
B = ids.from_deciseconds(17_800_000_002)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    init_bare(tmp_path / "store.git")
    return Store(tmp_path / "store.git")


def _start(cid: str, source: tuple[str, str] | None = None) -> Event:
    event: Event = {
        "type": "conversation_start",
        "timestamp": "2026-01-05T09:00:00.000000Z",
        "conversation_id": cid,
    }
    if source is not None:
        event["forked_from"] = {"conversation_id": source[0], "commit": source[1]}
    return event


def _request(text: str) -> Event:
    return {"type": "chat_request", "timestamp": "2026-01-05T09:30:00.000000Z", "content": text}


@pytest.mark.parametrize("first", [A, B])
def test_a_fork_is_held_for_its_shared_history_whichever_is_asked_first(store: Store, first: str) -> None:
    """The source's own allowance does not carry over to the fork: the fork's shared
    history is scanned for it too (not skipped as "already scanned clean")."""
    a_tip = store.log.create(A, [_start(A), _request(SECRET)], None, "test")
    b_tip = store.log.create(B, [_start(B, (A, a_tip)), _request("more")], a_tip, "test")
    check = PushCheck(store, AllowList(conversations=frozenset({A})))
    tips = {A: a_tip, B: b_tip}
    second = B if first == A else A
    verdicts = {cid: check(cid, tips[cid], frozenset()) for cid in (first, second)}
    assert verdicts == {A: None, B: HELD}


def test_the_same_event_in_two_conversations_is_one_blob_and_holds_both(store: Store) -> None:
    same = _request(SECRET)
    tips = {cid: store.log.create(cid, [_start(cid), same], None, "test") for cid in (A, B)}
    runs = {cid: store.log.event_blobs_down(tip, frozenset()) for cid, tip in tips.items()}
    assert runs[A][-1][1] == runs[B][-1][1]  # one blob
    assert runs[A][-1][0] != runs[B][-1][0]  # two commits
    check = PushCheck(store, AllowList())
    assert [check(cid, tip, frozenset()) for cid, tip in tips.items()] == [HELD, HELD]


def test_a_walk_stops_at_the_first_commit_it_is_told_of(store: Store) -> None:
    a_tip = store.log.create(A, [_start(A), _request("plain")], None, "test")
    b_tip = store.log.create(B, [_start(B, (A, a_tip)), _request("more")], a_tip, "test")
    assert [c for c, _ in store.log.event_blobs_down(b_tip, {a_tip})] == store.log.ids_down(b_tip, 2)
    assert len(store.log.event_blobs_down(b_tip, set())) == 4  # to the root
    assert store.log.event_blobs_down(b_tip, {b_tip}) == []
    check = PushCheck(store, AllowList())
    assert check(A, a_tip, frozenset()) is None and check(B, b_tip, frozenset()) is None


def test_only_what_the_remote_lacks_is_scanned(store: Store) -> None:
    first = store.log.create(A, [_start(A), _request(SECRET)], None, "test")
    tip = store.log.append(A, [_request("plain")], first, "test")
    assert [c for c, _ in store.log.event_blobs_down(tip, frozenset({first}))] == [tip]
    assert PushCheck(store, AllowList())(A, tip, frozenset({first})) is None
    assert PushCheck(store, AllowList())(A, tip, frozenset()) == HELD
    later = store.log.append(A, [_request(SECRET)], tip, "test")
    assert PushCheck(store, AllowList())(A, later, frozenset({tip})) == HELD


def test_an_event_read_by_its_blob_is_the_event_written(store: Store) -> None:
    tip = store.log.create(A, [_start(A), _request("hello")], None, "test")
    run = store.log.event_blobs_down(tip, frozenset())
    events, chain = store.log.read_run(tip)
    assert [c for c, _ in run] == chain
    assert [store.log.blob_event(blob, commit) for commit, blob in run] == events
