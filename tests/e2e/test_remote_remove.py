"""Removing a remote forgets the remote, never a local conversation.

Before: live, archived and titled conversations, one active, pushed to and
pulled from ``origin``.  After `jp remote remove origin` or plain
`git remote remove origin`: the same refs at the same commits with the same
reflogs; only ``remote.origin.*`` and ``refs/jp-remotes/origin/*`` go.  In a
project's repository whose ``origin`` is the code remote, only what jp added
goes, also when jp is killed half way.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.harness import NO_MARKERS, RUST, WITH_COMPACTION, User

KEPT = ("refs/conversations", "refs/archive", "refs/notes")


def bare(path: Path) -> Path:
    subprocess.run(["git", "init", "--bare", "-q", str(path)], check=True)
    return path


def kept_state(gitdir: Path) -> dict[str, object]:
    """Every ref a user keeps, the active conversation, and their reflogs."""
    logs = gitdir / "logs"
    reflogs = {
        str(p.relative_to(logs)): p.read_bytes()
        for p in sorted(logs.rglob("*"))
        if p.is_file() and (p.name == "JP_HEAD" or str(p.relative_to(logs)).startswith(KEPT))
    }
    refs = subprocess.run(
        [
            "git",
            "--git-dir",
            str(gitdir),
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            *KEPT,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    head = (gitdir / "JP_HEAD").read_text() if (gitdir / "JP_HEAD").exists() else None
    return {"refs": refs, "JP_HEAD": head, "reflogs": reflogs}


def copies(gitdir: Path, remote: str = "origin") -> list[str]:
    out = subprocess.run(
        [
            "git",
            "--git-dir",
            str(gitdir),
            "for-each-ref",
            "--format=%(refname)",
            f"refs/jp-remotes/{remote}/",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


@pytest.fixture
def synced(user: User, tmp_path: Path) -> User:
    live = user.import_(RUST)
    user.import_(NO_MARKERS)
    gone = user.import_(WITH_COMPACTION)
    user.ok("conversation", "edit", live, "--title", "KEPT-TITLE")
    user.ok("conversation", "archive", gone, "--yes")
    user.ok("conversation", "use", live)
    user.ok("remote", "add", "origin", str(bare(tmp_path / "remote.git")))
    user.ok("push", "origin")
    user.ok("pull", "origin")
    assert copies(user.store), "push and pull leave jp's copies of the remote (test setup)"
    state = kept_state(user.store)
    assert "refs/notes/meta" in str(state["refs"])
    reflogs = state["reflogs"]
    assert isinstance(reflogs, dict) and any(k.startswith("refs/archive/") for k in reflogs)
    return user


def test_jp_remote_remove_keeps_every_local_conversation(synced: User) -> None:
    before, listed = kept_state(synced.store), synced.ls("--all")
    assert "Remote origin removed." in synced.ok("remote", "remove", "origin")
    assert kept_state(synced.store) == before
    assert synced.ls("--all") == listed
    assert copies(synced.store) == []
    assert synced.git("config", "--get-regexp", "^remote\\.", check=False) == ""
    synced.fail("remote", "remove", "origin")  # nothing left to remove


def test_plain_git_remote_remove_keeps_every_local_conversation(synced: User) -> None:
    before, listed = kept_state(synced.store), synced.ls("--all")
    synced.git("remote", "remove", "origin")
    assert kept_state(synced.store) == before
    assert synced.ls("--all") == listed
    # plain git deletes only refs under refs/remotes/: jp drops its own copies
    assert copies(synced.store)
    out = synced.ok("remote", "remove", "origin")
    assert "already gone" in out and copies(synced.store) == []
    assert kept_state(synced.store) == before


class CodeProject:
    """A project whose ``origin`` is its code remote, used by `jp init --here` too."""

    def __init__(self, user: User, tmp_path: Path) -> None:
        self.user, self.root = user, tmp_path / "project"
        self.gitdir = self.root / ".git"
        self.code = bare(tmp_path / "code.git")
        self.env = {k: v for k, v in user.env.items() if k != "JP_STORE"}
        self.root.mkdir()
        self.git("init", "-q", "-b", "main")
        (self.root / "README").write_text("code\n")
        self.git("add", "README")
        self.git("commit", "-q", "-m", "code")
        self.git("remote", "add", "origin", str(self.code))
        self.git("config", "--add", "remote.origin.fetch", "+refs/tags/*:refs/tags/*")
        self.git("config", "remote.origin.prune", "true")
        self.git("push", "-q", "origin", "main")
        self.git("fetch", "-q", "origin")
        self.own = self.settings()
        self.jp("init", "--here")
        self.jp("q", "--new", "in the project")
        self.jp("remote", "add", "origin", str(self.code))
        self.jp("push", "origin")
        self.jp("pull", "origin")
        assert copies(self.gitdir)

    def git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(
            ["git", "-C", str(self.root), *args], env=self.env, capture_output=True, text=True
        )
        assert proc.returncode == 0 or not check, f"git {args}: {proc.stderr}"
        return proc.stdout

    def jp(
        self, *args: str, fault: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        env = {"JP_FAULT": fault} if fault else None
        proc = self.user.run(*args, cwd=self.root, drop=("JP_STORE",), env=env)
        assert proc.returncode == 0 or not check, f"`jp {' '.join(args)}`: {proc.stderr}"
        return proc

    def settings(self) -> str:
        """The project's own remote settings: git config's lines for origin."""
        return self.git("config", "--get-regexp", "^remote\\.origin\\.", check=False)


def test_a_code_remote_keeps_the_projects_settings(user: User, tmp_path: Path) -> None:
    project = CodeProject(user, tmp_path)
    kept, remote_branch = kept_state(project.gitdir), project.git("rev-parse", "origin/main")
    out = project.jp("remote", "remove", "origin").stdout
    assert "its own settings stay" in out
    assert project.settings() == project.own
    assert copies(project.gitdir) == []
    assert kept_state(project.gitdir) == kept
    assert project.git("rev-parse", "origin/main") == remote_branch
    project.git("fetch", "-q", "origin")  # the project's own fetch still works


@pytest.mark.parametrize("fault", ["config:locked", "remote:config-written"])
def test_a_killed_remote_remove_never_loses_the_projects_settings(
    user: User, tmp_path: Path, fault: str
) -> None:
    project = CodeProject(user, tmp_path)
    with_jp, kept = project.settings(), kept_state(project.gitdir)
    killed = project.jp("remote", "remove", "origin", fault=f"{fault}:kill", check=False)
    assert killed.returncode < 0, "the fault point was not reached"
    now = project.settings()
    assert now in (with_jp, project.own), "the config is the old one or the new one, no mix"
    assert kept_state(project.gitdir) == kept
    lock = project.gitdir / "config.lock"
    if fault == "config:locked":
        assert now == with_jp and lock.exists()
        refused = project.jp("remote", "remove", "origin", check=False)
        assert refused.returncode == 1 and "config.lock" in refused.stderr, refused.stderr
        lock.unlink()  # as the message says, once no git or jp runs
    project.jp("remote", "remove", "origin")
    assert project.settings() == project.own
    assert copies(project.gitdir) == []
    assert kept_state(project.gitdir) == kept


def test_a_killed_remote_remove_of_a_remote_jp_made_is_finished_by_a_rerun(
    synced: User,
) -> None:
    before = kept_state(synced.store)
    killed = synced.run("remote", "remove", "origin", env={"JP_FAULT": "remote:config-written"})
    assert killed.returncode < 0
    assert synced.git("config", "--get-regexp", "^remote\\.", check=False) == ""
    assert copies(synced.store), "killed before jp's copies were dropped"
    assert "already gone" in synced.ok("remote", "remove", "origin")
    assert copies(synced.store) == [] and kept_state(synced.store) == before


def test_undo_of_a_remove_counts_the_refs_and_shows_a_few(synced: User) -> None:
    for n in range(3):
        synced.ok("conversation", "new", "--no-activate", "--title", f"more {n}")
    synced.ok("push", "origin")
    moved = len(copies(synced.store))
    synced.ok("remote", "remove", "origin")
    out = synced.ok("undo")
    assert len(copies(synced.store)) == moved
    listed = [line for line in out.splitlines() if line.startswith("    refs/")]
    assert moved > 6 and len(listed) == 5, out
    assert f"{moved} refs moved back, the first 5:" in out and f"and {moved - 5} more" in out
    assert "remote origin: absent ->" in out
