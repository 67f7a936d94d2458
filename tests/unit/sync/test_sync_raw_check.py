"""The quick reading of event commits (raw commit and tree) agrees with the slow one
(libgit2 objects) on every shape: what it cannot vouch for goes the slow way."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest

from gitstore.boundary import Limits
from gitstore.store.repo import init_bare
from gitstore.sync import inbound
from gitstore.sync.inbound import Known, check_chain

EVENT = json.dumps(
    {"type": "conversation_start", "timestamp": "2026-01-05T09:00:00Z", "conversation_id": "c"}
).encode()
WHO = "author jp <jp@localhost> 1767603600 +0000\ncommitter jp <jp@localhost> 1767603600 +0000\n"
MISSING = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    made, _ = init_bare(tmp_path / "s.git")
    return made


def tree(repo: pygit2.Repository, *entries: tuple[str, str, str]) -> str:
    """A raw tree of (mode, name, hex id) entries, written as given (no checks)."""
    raw = b"".join(
        f"{mode} {name}".encode() + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries
    )
    return str(repo.odb.write(pygit2.enums.ObjectType.TREE, raw))


def commit(repo: pygit2.Repository, tree_id: str, *parents: str, extra: str = "") -> str:
    lines = f"tree {tree_id}\n" + "".join(f"parent {p}\n" for p in parents) + WHO + extra
    return str(repo.odb.write(pygit2.enums.ObjectType.COMMIT, (lines + "\nevent\n").encode()))


def blob(repo: pygit2.Repository, data: bytes = EVENT) -> str:
    return str(repo.create_blob(data))


def reason(repo: pygit2.Repository, tip: str, limits: Limits | None = None) -> str | None:
    return check_chain(repo, tip, Known(None, []), limits or Limits()).reason


def test_a_plain_event_is_read_quickly_and_accepted(repo: pygit2.Repository) -> None:
    first = commit(repo, tree(repo, ("100644", "event.json", blob(repo))))
    second = commit(repo, tree(repo, ("100755", "event.json", blob(repo))), first)
    plain = inbound.read_plain(repo.odb, second)
    assert plain is not None and plain[0] == first
    checked = check_chain(repo, second, Known(None, []), Limits())
    assert checked.reason is None
    assert [(r[0], r[1]) for r in checked.rows] == [(second, first), (first, None)]
    assert checked.rows[0][2] == EVENT.decode()


def test_a_signed_or_encoded_commit_is_still_plain(repo: pygit2.Repository) -> None:
    signed = commit(
        repo, tree(repo, ("100644", "event.json", blob(repo))), extra="encoding UTF-8\n"
    )
    assert inbound.read_plain(repo.odb, signed) is not None
    assert reason(repo, signed) is None


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ((("120000", "event.json", "B"),), "event.json is not a file"),
        ((("40000", "event.json", "T"),), "event.json is not a file"),
        ((("100644", "event.json", "B"), ("100644", "x", "B")), "nothing else"),
        ((("100644", "event.jsonx", "B"),), "nothing else"),
        ((("100644", "event.json", MISSING),), "an object of it is missing"),
        ((("100644", "event.json", "T"),), "event.json: "),
    ],
)
def test_odd_trees_go_the_slow_way_and_are_refused(
    repo: pygit2.Repository, entries: tuple[tuple[str, str, str], ...], expected: str
) -> None:
    ids = {"B": blob(repo), "T": tree(repo, ("100644", "event.json", blob(repo)))}
    odd = commit(repo, tree(repo, *((m, n, ids.get(o, o)) for m, n, o in entries)))
    if "not a file" in expected or "nothing else" in expected:  # the shape says so
        assert inbound.read_plain(repo.odb, odd) is None
    found = reason(repo, odd)
    assert found is not None and expected in found


def test_two_parents_are_refused_in_the_slow_words(repo: pygit2.Repository) -> None:
    base = commit(repo, tree(repo, ("100644", "event.json", blob(repo))))
    merge = commit(repo, tree(repo, ("100644", "event.json", blob(repo))), base, base)
    assert inbound.read_plain(repo.odb, merge) is None
    assert "has 2 parents" in (reason(repo, merge) or "")


def test_a_parent_that_is_not_a_commit_is_refused(repo: pygit2.Repository) -> None:
    child = commit(repo, tree(repo, ("100644", "event.json", blob(repo))), blob(repo, b"{}"))
    assert "is a blob, not a commit" in (reason(repo, child) or "")


def test_an_oversized_event_is_refused_by_its_header(repo: pygit2.Repository) -> None:
    big = commit(repo, tree(repo, ("100644", "event.json", blob(repo, b" " * 5000 + EVENT))))
    found = check_chain(repo, big, Known(None, []), Limits(max_event_bytes=4096))
    assert found.reason is not None and "event.json is" in found.reason and not found.keep


def test_the_slow_reading_agrees_on_a_plain_commit(repo: pygit2.Repository) -> None:
    tip = commit(repo, tree(repo, ("100644", "event.json", blob(repo))))
    quick = inbound._check_commit(repo, tip, Limits())
    slow = inbound._check_read(repo, tip, Limits())
    assert quick == slow
