"""gitstore.ids and gitstore.git.refs: ids are checked before they become ref names."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gitstore import ids
from gitstore.errors import InvalidId
from gitstore.git import refs

GOOD = ["jp-c17727391057", "jp-c1", "jp-c17727391057-abc123", "jp-c" + "9" * 20]
BAD = [
    "",
    "jp-c",
    "jp-c12a",
    "JP-C1",
    "jp-c1\n",
    "\njp-c1",
    " jp-c1",
    "jp-c1/../../HEAD",
    "../../HEAD",
    "refs/heads/main",
    "jp-c1-",
    "jp-c1-ABC",
    "jp-c1-a/b",
    "jp-c" + "9" * 21,
    "jp-c1-" + "a" * 33,
    "jp-c1.lock",
]


@pytest.mark.parametrize("cid", GOOD)
def test_valid_ids(cid: str) -> None:
    assert ids.is_valid(cid) and ids.check(cid) == cid
    assert refs.live(cid) == f"refs/conversations/{cid}"
    assert refs.archived(cid) == f"refs/archive/conversations/{cid}"
    assert ids.anchor_bytes(cid) == f"jp-conversation {cid}\n".encode()


@pytest.mark.parametrize("cid", BAD)
def test_invalid_ids_never_become_ref_names(cid: str) -> None:
    assert not ids.is_valid(cid)
    for make in (ids.check, refs.live, refs.archived, ids.anchor_bytes):
        with pytest.raises(InvalidId) as caught:
            make(cid)
        assert caught.value.text == cid


def test_conversation_id_parses_only_our_refs() -> None:
    assert refs.conversation_id("refs/conversations/jp-c5") == ("jp-c5", False)
    assert refs.conversation_id("refs/archive/conversations/jp-c5") == ("jp-c5", True)
    assert refs.conversation_id("refs/conversations/jp-c5/x") is None
    assert refs.conversation_id("refs/heads/jp-c5") is None
    assert refs.conversation_id("refs/conversations/notes") is None


def test_ids_count_deciseconds_and_step_past_collisions() -> None:
    moment = datetime(2026, 3, 1, 12, 0, 0, 250000, tzinfo=UTC)
    assert ids.deciseconds(moment) == int(moment.timestamp() * 10)
    first = ids.new_id(moment, lambda c: False)
    assert first == f"jp-c{int(moment.timestamp() * 10)}"
    taken = {first, ids.from_deciseconds(ids.deciseconds(moment) + 1)}
    assert ids.new_id(moment, taken.__contains__) == ids.from_deciseconds(ids.deciseconds(moment) + 2)
    assert ids.created_at(first) == datetime(2026, 3, 1, 12, 0, 0, 200000, tzinfo=UTC)
    assert ids.created_at(first + "-abc") == ids.created_at(first)
