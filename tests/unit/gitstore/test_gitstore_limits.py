"""The store's own writes keep to the size limit; its reads survive chains plain git broke."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitstore.boundary import Limits
from gitstore.errors import CorruptEvent, Refused
from gitstore.git import refs
from gitstore.store.core import Store
from tests.unit.gitstore.builders import at, git, request, start


def result(content: str) -> dict[str, object]:
    return {"type": "tool_call_response", "timestamp": at(3), "id": "t1", "content": content}


def call() -> dict[str, object]:
    return {"type": "tool_call_request", "timestamp": at(2), "id": "t1", "name": "x"}


def test_a_tool_result_over_the_limit_is_written_cut(path: Path) -> None:
    store = Store(path, limits=lambda: Limits(max_event_bytes=5000))
    tip = store.log.create("jp-c1", [start("jp-c1"), request("q"), call()], None, "test")
    tip = store.log.append("jp-c1", [result("R" * 20_000)], tip, "test")
    stored = json.loads(git(path, "show", f"{tip}:event.json"))
    kept, marker = stored["content"].split("\n\n[jp: ")
    assert set(kept) == {"R"} and marker.startswith(f"{20_000 - len(kept)} bytes")
    assert int(git(path, "cat-file", "-s", f"{tip}:event.json")) <= 5000
    assert store.log.load("jp-c1").events[-1] == stored, "the cache holds what git holds"


def test_another_event_over_the_limit_is_refused_and_nothing_moves(path: Path) -> None:
    store = Store(path, limits=Limits(max_event_bytes=5000))
    tip = store.log.create("jp-c1", [start("jp-c1")], None, "test")
    with pytest.raises(Refused, match="chat_request"):
        store.log.append("jp-c1", [request("ok"), request("Q" * 20_000)], tip, "test")
    assert store.refs.require("jp-c1").tip == tip


def test_writing_on_a_ref_that_is_not_a_commit_is_refused(store: Store, path: Path) -> None:
    blob = git(path, "hash-object", "-w", "--stdin", input="not a commit\n").strip()
    git(path, "update-ref", refs.live("jp-c2"), blob)
    with pytest.raises(CorruptEvent, match="blob, not a commit"):
        store.log.write_commits([request("x")], blob)
    with pytest.raises(CorruptEvent, match="blob, not a commit"):
        store.log.load("jp-c2")
