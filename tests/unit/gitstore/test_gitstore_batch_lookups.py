"""Inside ``Log.batch`` an id is probed once: what was found absent is not looked up
again by the creation's own check, until this process moves a ref; a name another
writer takes meanwhile is still refused (the creation is a compare-and-swap)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitstore.errors import ConversationExists
from gitstore.events import Event
from gitstore.store.core import Store
from tests.unit.gitstore.builders import start, turn


def _events(cid: str) -> list[Event]:
    return [start(cid), *turn(0, 0)]


def test_a_name_another_writer_takes_after_the_look_up_is_refused(
    store: Store, path: Path
) -> None:
    cid = "jp-c1780000000001"
    with pytest.raises(ConversationExists), store.log.batch():
        assert store.refs.locate(cid) is None  # the import's check: absent
        Store(path).log.create(cid, _events(cid), None, "the other writer")
        store.log.create(cid, _events(cid), None, "import", packed=True)
    assert Store(path).log.load(cid).events[0]["timestamp"] == _events(cid)[0]["timestamp"]
    assert [c.cid for c in Store(path).refs.list()] == [cid]


def test_a_name_taken_meanwhile_is_created_under_a_fresh_id(store: Store, path: Path) -> None:
    cid = "jp-c1780000000002"
    with store.log.batch() as batch:
        assert not store.refs.exists(cid)
        Store(path).log.create(cid, _events(cid), None, "the other writer")
        store.log.create(cid, _events(cid), None, "import", packed=True, remake=_events)
    assert batch.renamed[cid] != cid
    assert {c.cid for c in Store(path).refs.list()} == {cid, batch.renamed[cid]}


def test_what_a_batch_created_is_found_once_flushed(store: Store) -> None:
    cid, other = "jp-c1780000000003", "jp-c1780000000004"
    with store.log.batch() as batch:
        assert store.refs.locate(cid) is None
        tip = store.log.create(cid, _events(cid), None, "import", packed=True)
        batch.flush()
        found = store.refs.locate(cid)
        assert found is not None and found.tip == tip
        assert not store.refs.exists(other)
        with store.log.unbatched():
            store.log.create(other, _events(other), None, "one at once")
        assert store.refs.exists(other)
    store.refs.archive(cid, "archive")
    with store.log.batch():
        assert store.refs.exists(cid)
        assert store.refs.require(cid).archived


def test_a_ref_this_process_creates_inside_a_batch_is_found(store: Store) -> None:
    """A creation outside the batch's own (a transaction) is seen by the next look-up."""
    cid = "jp-c1780000000005"
    with store.log.batch():
        assert store.refs.locate(cid) is None
        tip = store.log.write_commits(_events(cid), None)[-1]
        store.refs.transaction("create").create(cid, tip).commit()
        found = store.refs.locate(cid)
        assert found is not None and found.tip == tip
