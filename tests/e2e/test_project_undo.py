"""`jp undo` and `jp op restore` of `jp remote add` on a project's own remote:
only what jp wrote is taken back, and a setting the user changed since with
plain git is never reverted (a compare-and-swap, as for refs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.harness import User
from tests.e2e.test_project_store import Project, bare

JP_SPEC = "+refs/conversations/*:refs/jp-remotes/origin/conversations/*"
OWN_SPEC = "+refs/heads/*:refs/remotes/origin/*"


@pytest.fixture
def project(user: User, tmp_path: Path) -> Project:
    """A project whose origin is its code remote, with jp's refspecs added to it."""
    made = Project(user, tmp_path / "project")
    made.git("remote", "add", "origin", str(bare(tmp_path / "code.git")))
    made.jp("init", "--here")
    made.jp("q", "--new", "hello")
    made.jp("remote", "add", "origin", str(tmp_path / "code.git"))
    assert JP_SPEC in made.git("config", "--get-all", "remote.origin.fetch")
    return made


def fetch_specs(project: Project) -> list[str]:
    return project.git("config", "--get-all", "remote.origin.fetch").splitlines()


def test_undo_of_remote_add_keeps_a_url_set_since(project: Project, tmp_path: Path) -> None:
    moved = str(bare(tmp_path / "moved.git"))
    project.git("remote", "set-url", "origin", moved)
    project.jp("undo")
    assert project.git("config", "--get", "remote.origin.url") == moved
    assert fetch_specs(project) == [OWN_SPEC], "only jp's refspecs go"


def test_undo_refuses_when_a_refspec_changed_since(project: Project) -> None:
    extra = "+refs/tags/*:refs/tags/*"
    project.git("config", "--add", "remote.origin.fetch", extra)
    before = fetch_specs(project)
    proc = project.jp_fails("undo")
    assert "remote.origin.fetch changed since operation" in proc.stderr
    assert "nothing was undone" in proc.stderr
    assert fetch_specs(project) == before
    project.jp("undo", "--force")
    assert fetch_specs(project) == [OWN_SPEC, extra], "--force takes back only jp's refspecs"


def test_op_restore_takes_back_only_jps_refspecs(project: Project, tmp_path: Path) -> None:
    first = json.loads(project.jp("-F", "json", "op", "log"))[1]["id"]  # the query
    moved = str(bare(tmp_path / "moved.git"))
    project.git("remote", "set-url", "origin", moved)
    project.jp("op", "restore", first)
    assert project.git("config", "--get", "remote.origin.url") == moved
    assert fetch_specs(project) == [OWN_SPEC]
