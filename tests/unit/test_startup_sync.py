"""A push or a pull of a few conversations loads neither pydantic (events are checked
by jp's own ``gitstore.events.schema``) nor the configuration's TOML writer.  An
event out of its shape is still refused in the schema's words (tests/unit/sync,
tests/reliability/test_hostile).
Python names every module the real `jp` imports (``PYTHONPROFILEIMPORTTIME``)."""

from __future__ import annotations

from pathlib import Path

from tests.support.importprobe import imported
from tests.support.noop_pull import synced

NOT_FOR_A_SYNC = {"pydantic", "pydantic_core", "tomlkit"}


def test_a_push_and_a_pull_of_plain_events_build_no_schema(tmp_path: Path) -> None:
    laptop, desktop, cid = synced(tmp_path)
    other = laptop.new("second")
    laptop.ok("q", "--id", cid, "MOVED")
    out, names = imported(laptop, "push")
    assert "pygit2._pygit2" in names, "the push did its work"  # libgit2 (pygit2: bound lazily)
    assert f"{other}: sent to origin" in out
    assert f"{cid}: new events sent to origin" in out
    assert names & NOT_FOR_A_SYNC == set()

    out, names = imported(desktop, "pull")
    assert f"{cid}: updated from origin" in out
    assert f"{other}: new from origin" in out
    assert names & NOT_FOR_A_SYNC == set()
    assert "MOVED" in desktop.transcript(cid), "what came was applied"
