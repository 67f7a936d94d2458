"""One function moves refs (``gitstore.git.refs.update.update_refs``) through four
mechanisms; the same updates through each give the same refs, reflogs and
failures, read back with plain git.

The one difference is by design: the ``packed-refs`` mechanism writes no reflog
for the refs it creates, as ``git clone`` writes none for the refs it packs (it
serves only the copies of a first pull).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from gitstore.errors import ConcurrentUpdate
from gitstore.fs.place import Place
from gitstore.git.refs.transaction import RefUpdate
from gitstore.git.refs.update import BULK_AT, GIT, LOOSE, PACKED, TRANSACTION, choose, update_refs
from gitstore.store.repo import init_bare

REF = "refs/conversations/a"
NAMES = ["refs/conversations/a", "refs/conversations/b", "refs/archive/conversations/c"]


def git(gitdir: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", "--git-dir", str(gitdir), *args], capture_output=True, text=True, check=check
    )
    return done.stdout.strip()


def _store(tmp_path: Path, name: str) -> tuple[Place, list[str]]:
    gitdir = tmp_path / f"{name}.git"
    init_bare(gitdir)
    tree = git(gitdir, "hash-object", "-t", "tree", "-w", "/dev/null")
    who = ["-c", "user.name=t", "-c", "user.email=t@x"]
    commits = [git(gitdir, *who, "commit-tree", tree, "-m", str(n)) for n in range(3)]
    return Place.of(pygit2.Repository(str(gitdir)), gitdir), commits


def _seen(gitdir: Path) -> tuple[str, dict[str, list[str]]]:
    """Every ref as ``git for-each-ref`` lists it, and each one's reflog (value and
    message, newest first) as ``git reflog`` reads it."""
    listed = git(gitdir, "for-each-ref", "--format=%(objectname) %(refname)")
    logs = {}
    for line in listed.splitlines():
        name = line.split()[1]
        logs[name] = git(gitdir, "reflog", "show", "--format=%H %gs", name, check=False).split("\n")
    return listed, logs


def _made(place: Place, commit: str) -> None:
    """``REF`` at ``commit``, made by git with the reflog line ``made``."""
    git(place.gitdir, "update-ref", "--create-reflog", "-m", "made", REF, commit)


@pytest.mark.parametrize("how", [TRANSACTION, GIT, PACKED])
def test_creations_give_the_same_refs_and_reflogs(tmp_path: Path, how: str) -> None:
    place, commits = _store(tmp_path, "s")
    wanted = [RefUpdate(name, None, commits[n]) for n, name in enumerate(NAMES)]
    made = update_refs(place, wanted, "jp import", how=how, reflog=how != PACKED)
    assert made == set(NAMES)
    listed, logs = _seen(place.gitdir)
    assert listed.splitlines() == sorted(
        (f"{commits[n]} {name}" for n, name in enumerate(NAMES)), key=lambda s: s.split()[1]
    )
    for n, name in enumerate(NAMES):
        assert logs[name] == ([""] if how == PACKED else [f"{commits[n]} jp import"])
    git(place.gitdir, "fsck", "--no-progress")


@pytest.mark.parametrize("how", [TRANSACTION, GIT])
@pytest.mark.parametrize("atomic", [True, False])
def test_one_creation_gives_the_same_ref_and_reflog(tmp_path: Path, how: str, atomic: bool) -> None:
    place, commits = _store(tmp_path, "s")
    wanted = [RefUpdate(NAMES[2], None, commits[0])]
    assert update_refs(place, wanted, "jp new", how=how, atomic=atomic) == {NAMES[2]}
    assert git(place.gitdir, "rev-parse", NAMES[2]) == commits[0]
    assert _seen(place.gitdir)[1][NAMES[2]] == [f"{commits[0]} jp new"]
    assert update_refs(place, wanted, "jp again", how=how, atomic=False) == set()  # taken
    assert not list(place.gitdir.rglob("*.lock"))
    git(place.gitdir, "fsck", "--no-progress")


@pytest.mark.parametrize("packed", [False, True], ids=["loose-ref", "packed-ref"])
@pytest.mark.parametrize("how", [LOOSE, TRANSACTION, GIT])
def test_a_move_gives_the_same_ref_and_reflog(tmp_path: Path, how: str, packed: bool) -> None:
    place, commits = _store(tmp_path, "s")
    _made(place, commits[0])
    if packed:
        git(place.gitdir, "pack-refs", "--all", "--prune")
    assert update_refs(place, [RefUpdate(REF, commits[0], commits[1])], "jp q", how=how) == {REF}
    assert git(place.gitdir, "rev-parse", REF) == commits[1]
    assert _seen(place.gitdir)[1][REF] == [f"{commits[1]} jp q", f"{commits[0]} made"]
    assert not Path(place.gitdir, f"{REF}.lock").exists()
    git(place.gitdir, "fsck", "--no-progress")


@pytest.mark.parametrize("packed", [False, True], ids=["loose-ref", "packed-ref"])
@pytest.mark.parametrize("how", [TRANSACTION, GIT])
def test_a_deletion_takes_the_reflog_with_the_ref_alike(tmp_path: Path, how: str, packed: bool) -> None:
    """As git deletes a ref's reflog with it: a reflog left behind would keep its
    commits reachable for ``git fsck`` after they are gone, and a ``packed-refs``
    rebuild would bring the deleted ref back from it."""
    place, commits = _store(tmp_path, "s")
    _made(place, commits[0])
    if packed:
        git(place.gitdir, "pack-refs", "--all", "--prune")
    assert update_refs(place, [RefUpdate(REF, commits[0], None)], "jp rm", how=how) == {REF}
    assert git(place.gitdir, "for-each-ref") == ""
    assert not Path(place.gitdir, "logs", REF).exists()
    update_refs(place, [RefUpdate(REF, None, commits[1])], "jp again", how=how)
    assert _seen(place.gitdir)[1][REF] == [f"{commits[1]} jp again"]  # a new ref's log starts anew


def _refused(tmp_path: Path, how: str, update: RefUpdate, name: str) -> None:
    """``update`` raises ``ConcurrentUpdate`` through ``how`` and changes nothing."""
    place, commits = _store(tmp_path, name)
    _made(place, commits[0])
    before = _seen(place.gitdir)
    bound = RefUpdate(
        update.name,
        None if update.old is None else commits[int(update.old)],
        commits[int(str(update.new))],
    )
    with pytest.raises(ConcurrentUpdate):
        update_refs(place, [bound], "jp refused", how=how)
    assert _seen(place.gitdir) == before
    assert not list(place.gitdir.rglob("*.lock"))


@pytest.mark.parametrize("how", [LOOSE, TRANSACTION, GIT])
def test_a_stale_old_value_is_refused_alike(tmp_path: Path, how: str) -> None:
    _refused(tmp_path, how, RefUpdate(REF, "2", "1"), "stale")


@pytest.mark.parametrize("how", [LOOSE, TRANSACTION, GIT])
def test_a_missing_ref_is_refused_alike(tmp_path: Path, how: str) -> None:
    _refused(tmp_path, how, RefUpdate("refs/conversations/none", "0", "1"), "missing")


@pytest.mark.parametrize("how", [TRANSACTION, GIT, PACKED])
def test_a_name_taken_is_refused_alike(tmp_path: Path, how: str) -> None:
    _refused(tmp_path, how, RefUpdate(REF, None, "1"), "taken")


@pytest.mark.parametrize("how", [TRANSACTION, GIT, PACKED])
def test_one_by_one_creations_skip_a_name_taken_alike(tmp_path: Path, how: str) -> None:
    place, commits = _store(tmp_path, "s")
    _made(place, commits[0])
    wanted = [RefUpdate(name, None, commits[1]) for name in NAMES]
    made = update_refs(place, wanted, "jp import", how=how, atomic=False, reflog=how != PACKED)
    assert made == set(NAMES) - {REF}
    assert git(place.gitdir, "rev-parse", REF) == commits[0]  # the taken name kept its value
    assert all(git(place.gitdir, "rev-parse", n) == commits[1] for n in made)


def test_the_choice_follows_the_case() -> None:
    a, b = "a" * 40, "b" * 40
    assert choose([RefUpdate(REF, a, b)]) == LOOSE
    assert choose([RefUpdate(REF, None, b)]) == TRANSACTION
    assert choose([RefUpdate(REF, a, None)]) == TRANSACTION
    assert choose([RefUpdate(REF, a, b), RefUpdate("refs/x", a, b)]) == TRANSACTION
    many = [RefUpdate(f"refs/conversations/{n}", None, b) for n in range(BULK_AT)]
    assert choose(many) == TRANSACTION  # all or none: behind its journal
    assert choose(many, atomic=False) == PACKED  # an import's batch
    assert choose(many[:-1], atomic=False) == GIT  # fewer: one git process
    assert choose(many[:1], atomic=False) == TRANSACTION  # one creation: its own CAS
    assert choose(many[:2], reflog=False) == PACKED
