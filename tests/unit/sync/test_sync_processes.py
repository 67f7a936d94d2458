"""How few git processes a sync starts: refs under folders read as files, git's
housekeeping asked only when it has work, ``core.sshCommand`` read only for a
remote ssh may reach; and the same answers as the git processes they replace."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pygit2
import pytest

from gitstore import refs
from gitstore.refs import files as refread
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from gitstore.sync import gitenv, housekeeping, remotes
from gitstore.sync.pull import Syncer
from gitstore.sync.push import push
from gitstore.sync.transport import GitCli

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="these count git processes")


def counting_git(tmp_path: Path) -> tuple[str, Path]:
    """A git that writes each of its command lines to a log, then runs the real one."""
    assert GIT is not None
    log = tmp_path / "git-calls.log"
    wrapper = tmp_path / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{GIT}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper), log


def calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def machine(tmp_path: Path, name: str, url: str, git: str, env: dict[str, str]) -> Syncer:
    init_bare(tmp_path / name)
    store = Store(tmp_path / name)
    remotes.add(store.repo, "origin", url)
    return Syncer(store, "origin", GitCli(git, store.gitdir, env, store.repo))


def start(cid: str) -> dict[str, object]:
    return {
        "type": "conversation_start",
        "timestamp": "2026-01-05T09:00:00Z",
        "conversation_id": cid,
    }


def test_a_no_op_pull_from_a_path_starts_one_git(tmp_path: Path) -> None:
    assert GIT is not None
    remote = tmp_path / "remote.git"
    subprocess.run([GIT, "init", "--bare", "-q", str(remote)], check=True)
    git, log = counting_git(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    laptop = machine(tmp_path, "laptop", str(remote), git, env)
    laptop.store.log.create("jp-c1", [start("jp-c1")], None, "test")
    push(laptop)
    desktop = machine(tmp_path, "desktop", str(remote), git, env)
    assert {o.id for o in desktop.pull() if o.action == "created"} == {"jp-c1"}
    log.unlink()
    store = Store(tmp_path / "desktop")  # as a new jp process would open it
    again = Syncer(store, "origin", GitCli(git, store.gitdir, env, store.repo))
    assert [o for o in again.pull() if o.kind == "conversation"] == []
    assert len(calls(log)) == 1 and " fetch " in calls(log)[0], calls(log)


def test_reading_refs_as_files_lists_what_for_each_ref_lists(tmp_path: Path) -> None:
    assert GIT is not None
    repo, _ = init_bare(tmp_path / "store")
    tip = repo.create_commit(
        None, *[pygit2.Signature("a", "a@b")] * 2, "m", repo.TreeBuilder().write(), []
    )
    blob = repo.create_blob(b"not a commit")
    repo.create_reference("refs/notes/meta", tip)
    repo.create_reference("refs/notes/odd", blob)
    deep = "refs/jp-remotes/origin/" + "/".join(["d"] * 60) + "/jp-c1"
    repo.create_reference(deep, tip)
    subprocess.run([GIT, "--git-dir", repo.path, "pack-refs", "--all"], check=True)
    repo.create_reference(refs.live("jp-c2"), tip)  # loose, beside the packed ones
    repo.create_reference(refs.live("jp-c22"), tip)
    repo.create_reference(refs.live("jp-c2") + "x/below", tip)  # a glob's * crosses no /
    repo.create_reference(refs.live("jp-c3") + "/below", tip)  # a name covers its folder
    repo.create_reference("refs/notes/metas", tip)
    with_files, by_git = GitCli(GIT, Path(repo.path), None, repo), GitCli(GIT, Path(repo.path))
    for patterns in (
        ["refs/notes/", "refs/jp-remotes/origin/", refs.LIVE_PREFIX, "refs/jp/quarantine/"],
        ["refs/notes/meta", refs.live("jp-c2"), refs.live("jp-c3"), refs.live("jp-c9")],
        ["refs/notes/meta*", refs.live("jp-c2") + "*", "refs/jp/quarantine/x*"],
        ["refs/notes", deep],
    ):
        assert with_files.list_refs(patterns) == by_git.list_refs(patterns), patterns
    rows = with_files.list_refs(["refs/notes/", "refs/jp-remotes/"])
    assert {r.name: r.kind for r in rows}["refs/notes/odd"] == "blob"
    assert deep in {r.name for r in rows}
    assert refread.matching_refs(Path(repo.path), ["refs/*/meta"]) is None  # git's to match


def test_housekeeping_is_due_as_git_would_find_it(tmp_path: Path) -> None:
    repo, _ = init_bare(tmp_path / "store")
    gitdir, config = Path(repo.path), repo.config
    assert not housekeeping.gc_due(gitdir, config)
    fan = gitdir / "objects" / "17"
    fan.mkdir(parents=True, exist_ok=True)
    for n in range(28):  # git's estimate: more than ceil(6700 / 256) = 27 in one folder
        (fan / f"{n:038x}").write_bytes(b"")
    assert housekeeping.gc_due(gitdir, config)
    config["gc.auto"] = "0"
    assert not housekeeping.gc_due(gitdir, config)  # turned off
    config["gc.auto"] = "6700"
    shutil.rmtree(fan)
    pack = gitdir / "objects" / "pack"
    for n in range(51):
        (pack / f"pack-{n:040x}.pack").write_bytes(b"")
    assert housekeeping.gc_due(gitdir, config)
    (pack / f"pack-{0:040x}.keep").write_bytes(b"")  # a kept pack is not git's to repack
    assert not housekeeping.gc_due(gitdir, config)
    config["gc.autoPackLimit"] = "not a number"
    assert housekeeping.gc_due(gitdir, config)  # cannot tell: git decides


def test_ssh_is_considered_for_every_remote_but_a_path_here() -> None:
    def entries(url: str, *more: tuple[str, str]) -> list[tuple[str, str]]:
        return [("remote.origin.url", url), *more]

    assert not gitenv.may_use_ssh(entries("/srv/jp.git"), "origin")
    assert not gitenv.may_use_ssh(entries("file:///srv/jp.git"), "origin")
    assert not gitenv.may_use_ssh([], "/srv/jp.git")  # a URL given as the remote
    assert gitenv.may_use_ssh(entries("git@host:jp.git"), "origin")
    assert gitenv.may_use_ssh(entries("ssh://host/jp.git"), "origin")
    assert gitenv.may_use_ssh(entries("https://host/jp.git"), "origin")  # not here: asked
    assert gitenv.may_use_ssh([], "origin")  # not configured: git takes it for a URL
    pushurl = ("remote.origin.pushurl", "git@host:jp.git")
    assert gitenv.may_use_ssh(entries("/srv/jp.git", pushurl), "origin")
    rewrite = ("url.git@host:.insteadof", "/srv/")
    assert gitenv.may_use_ssh(entries("/srv/jp.git", rewrite), "origin")
