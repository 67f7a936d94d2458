"""Which refs of two folders differ (``gitstore.git.refs.files.differing``), told from the runs of
a sorted ``packed-refs`` and the loose refs over them: always what listing both
folders ref by ref and comparing says."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from gitstore.git.refs import files as refread

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git writes the refs")
MINE, THEIRS = "refs/conversations/", "refs/jp-remotes/origin/conversations/"
NAMES = ["jp-c1", "jp-c10", "jp-c2", "jp-c3-a", "jp-c4", "jp-c5", "jp-c6"]


def git(gitdir: Path, *args: str, input: str | None = None) -> str:
    done = subprocess.run(["git", "--git-dir", str(gitdir), *args], input=input,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout.strip()


def expected(gitdir: Path) -> set[str]:
    mine = {n[len(MINE) :]: o for n, o in refread.list_refs(gitdir, [MINE]).items()}
    theirs = {n[len(THEIRS) :]: o for n, o in refread.list_refs(gitdir, [THEIRS]).items()}
    return {n for n in mine.keys() | theirs.keys() if mine.get(n) != theirs.get(n)}


def test_the_runs_and_the_loose_refs_tell_what_a_listing_tells(tmp_path: Path) -> None:
    gitdir = tmp_path / "store.git"
    subprocess.run(["git", "init", "--bare", "-q", str(gitdir)], check=True)
    tree = git(gitdir, "mktree", input="")
    commits = [git(gitdir, "commit-tree", tree, "-m", str(n)) for n in range(3)]
    git(gitdir, "update-ref", "refs/tags/v1", commits[0])  # a neighbour of the folders
    rng = random.Random(11)
    for _ in range(25):
        for name in NAMES:  # a state, then packed
            for folder in (MINE, THEIRS):
                choice = rng.choice([None, *commits])
                if choice is None:
                    git(gitdir, "update-ref", "-d", folder + name)
                else:
                    git(gitdir, "update-ref", folder + name, choice)
        git(gitdir, "pack-refs", "--all")
        for _ in range(rng.randrange(0, 5)):  # moves since, left loose
            folder, name = rng.choice([MINE, THEIRS]), rng.choice(NAMES)
            git(gitdir, "update-ref", folder + name, rng.choice(commits))
        assert refread.differing(gitdir, MINE, THEIRS) == expected(gitdir)


def test_a_file_it_cannot_read_as_runs_says_so(tmp_path: Path) -> None:
    gitdir = tmp_path / "store.git"
    subprocess.run(["git", "init", "--bare", "-q", str(gitdir)], check=True)
    tree = git(gitdir, "mktree", input="")
    commit = git(gitdir, "commit-tree", tree, "-m", "x")
    (gitdir / "packed-refs").write_text(f"{commit} {MINE}jp-c2\n{commit} {MINE}jp-c1\n")
    assert refread.differing(gitdir, MINE, THEIRS) is None  # no header: not known sorted
    header = "# pack-refs with: peeled fully-peeled sorted \n"
    (gitdir / "packed-refs").write_text(f"{header}{commit} {MINE}jp-c1\n^{commit}\n")
    assert refread.differing(gitdir, MINE, THEIRS) is None  # a peeled line in a run
