"""A session's id taken by a pull between an import's look and its write: the session
stays one conversation (the import's creation is taken back and the file re-imported
against the pulled one), never a second one under a fresh id.  In process: the pull is
a `git fetch` of the other store's ref at the moment the import's objects are written
and its ref is not (the ``create:objects-written`` fault point)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitstore import Limits, Store, faults
from gitstore.store.repo import init_bare
from porcelain.app.sessions import import_files
from porcelain.domain.sessionfiles import find_files

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sessions" / "claude-code"


def store(path: Path) -> Store:
    init_bare(path)
    return Store(path)


def mains(s: Store) -> dict[str, str]:
    out = {}
    for loc in s.refs.list(archived=None):
        start = s.log.load(loc.cid).events[0]
        imported = start.get("imported") or {}
        if imported.get("session") and not imported.get("agent"):
            out[loc.cid] = loc.tip
    return out


@pytest.fixture
def no_faults() -> Iterator[None]:
    yield
    faults.install(None)


def test_a_pull_that_brings_the_session_meanwhile_leaves_one_conversation(
    tmp_path: Path, no_faults: None
) -> None:
    files = find_files("claude-code", (FIXTURES,), [], [])
    other = store(tmp_path / "other.git")
    (pulled,) = [
        o.cid for o in import_files(other, "claude-code", files, Limits()) if not o.found.agent
    ]
    here = store(tmp_path / "here.git")
    fetched = []

    def pull(name: str) -> None:
        if name == "create:objects-written" and not fetched:
            ref = f"refs/conversations/{pulled}"
            subprocess.run(
                [
                    "git",
                    "--git-dir",
                    str(here.gitdir),
                    "fetch",
                    "-q",
                    str(other.gitdir),
                    f"{ref}:{ref}",
                ],
                check=True,
            )
            fetched.append(ref)

    faults.install(pull)
    done = import_files(here, "claude-code", files, Limits())
    faults.install(None)
    assert fetched, "the fault point was not reached"
    assert list(mains(here)) == [pulled], "the session became two conversations"
    main = next(o for o in done if not o.found.agent)
    assert main.cid == pulled and main.action == "unchanged"
