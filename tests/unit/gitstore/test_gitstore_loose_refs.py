"""Moving one ref by compare-and-swap as git's files backend does
(``gitstore.git.refs.loose``, ``update_refs``' ``LOOSE``): what git reads after, the
reflog, refusals that leave the ref and any other writer's lock alone, and git's
pack-refs racing the moves."""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pygit2
import pytest

from gitstore.errors import ConcurrentUpdate
from gitstore.fs.place import Place
from gitstore.git.refs import loose
from gitstore.git.refs.transaction import RefUpdate
from gitstore.git.refs.update import LOOSE, update_refs
from tests.support.background import repeating

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git reads what was written")
REF = "refs/jp/oplog"


def git(gitdir: Path, *args: str) -> str:
    done = subprocess.run(["git", "--git-dir", str(gitdir), *args],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout.strip()


@pytest.fixture
def store(tmp_path: Path) -> tuple[pygit2.Repository, list[str]]:
    """A bare store that logs every ref (as jp's do), and five commits."""
    gitdir = tmp_path / "store.git"
    subprocess.run(["git", "init", "--bare", "-q", str(gitdir)], check=True)
    git(gitdir, "config", "core.logAllRefUpdates", "always")
    tree = git(gitdir, "hash-object", "-t", "tree", "-w", "/dev/null")
    env_id = ["-c", "user.name=t", "-c", "user.email=t@x"]
    commits = [git(gitdir, *env_id, "commit-tree", tree, "-m", str(n)) for n in range(5)]
    git(gitdir, "update-ref", "-m", "made", REF, commits[0])
    return pygit2.Repository(str(gitdir)), commits


def move(repo: pygit2.Repository, old: str, new: str, message: str) -> None:
    """``REF`` from ``old`` to ``new`` by a loose compare-and-swap (``update_refs``)."""
    update_refs(Place.of(repo), [RefUpdate(REF, old, new)], message, how=LOOSE, wait=0)


def test_a_move_is_what_git_reads_and_logs(store: tuple[pygit2.Repository, list[str]]) -> None:
    repo, commits = store
    gitdir = Path(repo.path)
    move(repo, commits[0], commits[1], "jp op 1")
    assert git(gitdir, "rev-parse", REF) == commits[1]
    assert git(gitdir, "reflog", "show", "--format=%H %gs", REF).splitlines() == [
        f"{commits[1]} jp op 1",
        f"{commits[0]} made",
    ]
    assert not (gitdir / f"{REF}.lock").exists()
    git(gitdir, "fsck", "--no-progress")


def test_a_packed_ref_moves_over_its_packed_line(store: tuple[pygit2.Repository, list[str]]) -> None:
    repo, commits = store
    gitdir = Path(repo.path)
    git(gitdir, "pack-refs", "--all", "--prune")
    assert not (gitdir / REF).exists()
    assert loose.swap(gitdir, REF, commits[0], commits[2], None)
    assert git(gitdir, "rev-parse", REF) == commits[2]
    assert pygit2.Repository(str(gitdir)).lookup_reference(REF).target == pygit2.Oid(hex=commits[2])


def test_a_ref_that_moved_first_is_left_as_it_is(store: tuple[pygit2.Repository, list[str]]) -> None:
    repo, commits = store
    gitdir = Path(repo.path)
    git(gitdir, "update-ref", REF, commits[3])  # after it was read at commits[0]
    with pytest.raises(ConcurrentUpdate):
        move(repo, commits[0], commits[1], "jp op 2")
    assert git(gitdir, "rev-parse", REF) == commits[3]
    assert not (gitdir / f"{REF}.lock").exists()


def test_another_writers_lock_refuses_and_stays(store: tuple[pygit2.Repository, list[str]]) -> None:
    repo, commits = store
    gitdir = Path(repo.path)
    lock = gitdir / f"{REF}.lock"
    lock.write_text("held\n")
    with pytest.raises(loose.Refused):
        loose.swap(gitdir, REF, commits[0], commits[1], None)
    assert lock.read_text() == "held\n"
    assert git(gitdir, "rev-parse", REF) == commits[0]


def test_a_missing_object_is_refused(store: tuple[pygit2.Repository, list[str]]) -> None:
    repo, commits = store
    with pytest.raises(ConcurrentUpdate):
        move(repo, commits[0], "1" * 40, "jp op 3")
    assert git(Path(repo.path), "rev-parse", REF) == commits[0]


def test_a_symbolic_ref_is_left_to_libgit2(store: tuple[pygit2.Repository, list[str]]) -> None:
    repo, commits = store
    gitdir = Path(repo.path)
    (gitdir / REF).write_text("ref: refs/heads/main\n")
    assert loose.swap(gitdir, REF, commits[0], commits[1], None) is False
    assert (gitdir / REF).read_text() == "ref: refs/heads/main\n"
    assert not (gitdir / f"{REF}.lock").exists()


def test_of_racing_moves_from_one_value_one_wins(store: tuple[pygit2.Repository, list[str]]) -> None:
    repo, commits = store
    gitdir = Path(repo.path)
    won: list[str] = []
    start = threading.Barrier(4)

    def race(new: str) -> None:
        start.wait()
        try:
            if loose.swap(gitdir, REF, commits[0], new, None):
                won.append(new)
        except loose.Refused:
            pass

    threads = [threading.Thread(target=race, args=(c,)) for c in commits[1:]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1  # the first to take the lock finds the value it expects
    assert git(gitdir, "rev-parse", REF) == won[0]


def test_no_move_is_lost_while_git_packs_refs(store: tuple[pygit2.Repository, list[str]]) -> None:
    repo, commits = store
    gitdir = Path(repo.path)
    now, moved = commits[0], 0
    with repeating(["git", "--git-dir", str(gitdir), "pack-refs", "--all", "--prune"]) as rounds:
        for n in range(300):
            new = commits[(n + 1) % len(commits)]
            try:
                if loose.swap(gitdir, REF, now, new, "t <t@x>\tjp op"):
                    now, moved = new, moved + 1
            except loose.Refused:  # pack-refs held the ref's lock
                pass
            assert git(gitdir, "rev-parse", REF) == now
    assert rounds[0] > 0 and moved > 0
    assert len(git(gitdir, "reflog", "show", REF).splitlines()) == moved + 1
