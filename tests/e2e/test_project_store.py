"""`jp init --here`: conversations in a project's own repository, and the
project's notes, branches, tags, index and remotes left exactly as they were.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from porcelain.commands.context import check_owner
from porcelain.errors import UserError
from tests.e2e.harness import User
from tests.support.sandbox import ID


class Project:
    """A project's work tree with a commit, a staged file and a note of its own."""

    def __init__(self, user: User, root: Path) -> None:
        self.user = user
        self.root = root
        self.env = {k: v for k, v in user.env.items() if k != "JP_STORE"}
        root.mkdir()
        self.git("init", "-q", "-b", "main")
        (root / "README").write_text("a project\n")
        self.git("add", "README")
        self.git("commit", "-q", "-m", "first")
        self.git("tag", "v1")
        (root / "staged.txt").write_text("staged, not committed\n")
        self.git("add", "staged.txt")
        self.git("notes", "add", "-m", "MY-OWN-NOTE", "HEAD")

    def git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(
            ["git", "-C", str(self.root), *args],
            env=self.env,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0 or not check, f"git {args}: {proc.stderr}"
        return proc.stdout.strip()

    def jp(self, *args: str) -> str:
        proc = self.user.run(*args, cwd=self.root, drop=("JP_STORE",))
        assert proc.returncode == 0, f"`jp {' '.join(args)}`: {proc.stdout}\n{proc.stderr}"
        return proc.stdout

    def jp_fails(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = self.user.run(*args, cwd=self.root, drop=("JP_STORE",))
        assert proc.returncode != 0 and proc.stderr.startswith("error: "), proc
        return proc

    def state(self) -> dict[str, object]:
        """Everything of the project's own that jp must never change."""
        return {
            "HEAD": self.git("rev-parse", "HEAD"),
            "branch": self.git("symbolic-ref", "HEAD"),
            "index": (self.root / ".git" / "index").read_bytes(),
            "staged": self.git("ls-files", "--stage"),
            "status": self.git("status", "--porcelain"),
            "note": self.git("notes", "show", "HEAD"),
            "own refs": self.git(
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/heads",
                "refs/tags",
                "refs/notes/commits",
                "refs/remotes",
            ),
        }


def bare(path: Path) -> Path:
    subprocess.run(["git", "init", "--bare", "-q", str(path)], check=True)
    return path


def remote_refs(remote: Path) -> list[str]:
    out = subprocess.run(
        ["git", "--git-dir", str(remote), "for-each-ref", "--format=%(refname)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


@pytest.fixture
def project(user: User, tmp_path: Path) -> Project:
    return Project(user, tmp_path / "project")


def test_init_here_push_and_pull_leave_the_project_alone(project: Project, tmp_path: Path) -> None:
    remote = bare(tmp_path / "jp-remote.git")
    before = project.state()
    made = json.loads(project.jp("-F", "json", "init", "--here"))
    assert made["created"] and made["notes"] == {
        "meta": "refs/notes/jp/meta",
        "source": "refs/notes/jp/source",
    }
    assert not json.loads(project.jp("-F", "json", "init", "--here"))["created"]
    project.jp("remote", "add", "jp", str(remote))
    project.jp("q", "--new", "hi")
    cid = ID.findall(project.jp("conversation", "ls"))[0]
    project.jp("conversation", "edit", cid, "--title", "PROJECT-TITLE")
    project.jp("push", "jp")
    project.jp("pull", "jp")
    sent = remote_refs(remote)
    assert f"refs/conversations/{cid}" in sent
    assert "refs/notes/meta" in sent, "jp's notes travel under the names every remote uses"
    assert [r for r in sent if r.startswith("refs/notes/")] == ["refs/notes/meta"], sent
    assert not [r for r in sent if r.startswith(("refs/heads/", "refs/tags/"))], sent
    assert project.state() == before
    local = project.git("for-each-ref", "--format=%(refname)", "refs/notes").split()
    assert local == ["refs/notes/commits", "refs/notes/jp/meta"], "jp's notes stay in its namespace"
    assert project.git("config", "--get", "jp.project") == "true"


def test_a_pull_never_touches_the_projects_notes(project: Project, tmp_path: Path) -> None:
    """A remote holding a diverged refs/notes/commits: jp neither fetches nor merges it."""
    remote = bare(tmp_path / "jp-remote.git")
    project.jp("init", "--here")
    project.jp("remote", "add", "jp", str(remote))
    project.jp("q", "--new", "hi")
    project.jp("push", "jp")
    head = project.git("rev-parse", "HEAD")
    project.git("push", "-q", str(remote), "HEAD:refs/heads/main")
    git_remote = ["git", "--git-dir", str(remote)]
    subprocess.run(
        [*git_remote, "notes", "add", "-f", "-m", "THEIR-NOTE", head],
        env=project.env,
        check=True,
        capture_output=True,
    )
    subprocess.run(  # a lookalike of jp's notes ref: never integrated
        [*git_remote, "update-ref", "refs/notes/metadata", "refs/notes/commits"], check=True
    )
    before = project.state()
    project.jp("pull", "jp")
    assert project.state() == before
    assert project.git("notes", "show", "HEAD") == "MY-OWN-NOTE"
    fetched = project.git("for-each-ref", "--format=%(refname)", "refs/jp-remotes").split()
    assert not [r for r in fetched if "notes/commits" in r], fetched
    assert project.git("rev-parse", "--verify", "-q", "refs/notes/meta", check=False) == ""


def test_the_code_remote_gets_conversations_only_when_named(
    project: Project, tmp_path: Path
) -> None:
    code = bare(tmp_path / "code.git")
    project.git("remote", "add", "origin", str(code))
    project.git("push", "-q", "origin", "main")
    project.jp("init", "--here")
    project.jp("q", "--new", "hi")
    failed = project.jp_fails("push")
    assert "never the default" in failed.stderr
    project.jp("remote", "add", "origin", str(code))  # jp's fetch refspecs, no push refspecs
    failed = project.jp_fails("push")
    assert not [r for r in remote_refs(code) if r.startswith("refs/conversations/")]
    assert project.git("config", "--get-all", "remote.origin.push", check=False) == ""
    project.jp("push", "origin")  # named: the user's choice
    assert [r for r in remote_refs(code) if r.startswith("refs/conversations/")]
    jp_remote = bare(tmp_path / "jp.git")
    project.jp("remote", "add", "jp", str(jp_remote))
    assert "sent to jp" in project.jp("push"), "the remote jp made is the default"


def test_a_bare_store_and_a_project_store_share_titles_through_a_remote(
    user: User, project: Project, tmp_path: Path
) -> None:
    remote = bare(tmp_path / "shared.git")
    user.ok("remote", "add", "origin", str(remote))
    user.ok("q", "--new", "from the bare store")
    cid = user.active()
    user.ok("conversation", "edit", cid, "--title", "SHARED-TITLE")
    user.ok("push")
    project.jp("init", "--here")
    project.jp("remote", "add", "shared", str(remote))
    project.jp("pull", "shared")
    assert "SHARED-TITLE" in project.jp("conversation", "ls")
    project.jp("conversation", "edit", cid, "--title", "RENAMED-IN-THE-PROJECT")
    project.jp("push", "shared")
    user.ok("pull")
    assert user.show(cid)["title"] == "RENAMED-IN-THE-PROJECT"


def test_init_here_again_keeps_an_earlier_stores_notes(project: Project) -> None:
    """A repository an earlier jp made a store (no jp.project mark) keeps refs/notes/meta."""
    project.git("config", "jp.store", "true")
    project.jp("init", "--here")
    assert project.git("config", "--get", "jp.project", check=False) == ""
    project.jp("q", "--new", "hi")
    cid = ID.findall(project.jp("conversation", "ls"))[0]
    project.jp("conversation", "edit", cid, "--title", "OLD-STORE")
    assert project.git("rev-parse", "--verify", "-q", "refs/notes/meta")
    assert "OLD-STORE" in project.jp("conversation", "ls")


OTHER_UID = 4321  # no user of the sandbox: the planted store is someone else's


def chown_tree(root: Path, uid: int) -> None:
    for path in [root, *root.rglob("*")]:
        os.lchown(path, uid, -1)


@pytest.mark.skipif(os.geteuid() != 0, reason="planting another user's store needs chown (root)")
def test_a_store_another_user_owns_is_refused_when_found_by_walking_up(
    project: Project, tmp_path: Path
) -> None:
    """A store planted in a shared parent (``/tmp``, a team folder) is not read as
    the caller's own: every command refuses it in one line, naming how to opt in."""
    project.jp("init", "--here")
    project.jp("q", "--new", "PLANTED-QUESTION")
    project.jp("conversation", "edit", "--title", "PLANTED-TITLE")
    inside = project.root / "sub"
    inside.mkdir()
    chown_tree(project.root, OTHER_UID)
    for args in (("conversation", "ls"), ("conversation", "print"), ("conversation", "show")):
        proc = project.user.run(*args, cwd=inside, drop=("JP_STORE",))
        assert proc.returncode == 1, proc
        lines = proc.stderr.splitlines()
        assert lines[0].startswith("error: the store ") and "owned by another user" in lines[0]
        assert f"uid {OTHER_UID}" in lines[0] and len(lines) == 2 and "--store" in lines[1]
        assert "PLANTED" not in proc.stdout + proc.stderr
    completed = project.user.run(
        "completion", "bash", "--complete", "--", "c", "show", "", cwd=inside, drop=("JP_STORE",)
    )
    assert "PLANTED" not in completed.stdout + completed.stderr
    assert "Traceback" not in completed.stderr
    named = project.user.run(
        "--store", str(project.root / ".git"), "conversation", "print", cwd=inside, drop=("JP_STORE",)
    )  # named by the user: their choice, read as asked
    assert named.returncode == 0 and "PLANTED-QUESTION" in named.stdout, named.stderr


def test_the_owner_check_admits_the_caller_and_the_sudo_user(tmp_path: Path) -> None:
    store = tmp_path / "work" / ".git"
    store.mkdir(parents=True)
    mine = os.geteuid()
    check_owner(store, {}, uid=mine)
    other = mine + 1
    with pytest.raises(UserError, match="owned by another user"):
        check_owner(store, {}, uid=other)
    if mine != 0:
        return
    chown_tree(tmp_path / "work", OTHER_UID)
    check_owner(store, {"SUDO_UID": str(OTHER_UID)}, uid=0)  # `sudo jp` in one's own project
    with pytest.raises(UserError):
        check_owner(store, {"SUDO_UID": "77"}, uid=0)
