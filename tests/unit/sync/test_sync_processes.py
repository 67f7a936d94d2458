"""How few git processes a sync starts: refs read as files, ``git gc --auto``
started only past git's own thresholds, ``core.sshCommand`` read only for a
remote ssh may reach; the same answers as the git processes they replace; and
the refs a first pull of many creates left packed."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2
import pytest

from gitstore.git import command, refs
from gitstore.git.refs import files as refread
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from gitstore.sync import notes as syncnotes
from gitstore.sync import remotes
from gitstore.sync.here import Here
from gitstore.sync.pull import Syncer
from gitstore.sync.push import push
from gitstore.sync.transport import GitCli
from tests.support.background import repeating

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


@contextmanager
def pruning(gitdir: Path) -> Iterator[None]:
    """``git gc --prune=now`` run again and again on ``gitdir`` until the block ends."""
    assert GIT is not None
    with repeating([GIT, "--git-dir", str(gitdir), "gc", "--prune=now", "--quiet"]):
        yield


def packed_big(gitdir: Path, tip: str, refs: int = 20_000) -> None:
    """Pack the store's refs and pad ``packed-refs`` with ``refs`` tags at ``tip``
    (1.3 MB for 20,000), sorted as git sorts it: a big store's file."""
    assert GIT is not None
    subprocess.run([GIT, "--git-dir", str(gitdir), "pack-refs", "--all"], check=True)
    packed = (gitdir / "packed-refs").read_text()
    pad = "".join(f"{tip} refs/tags/pad-{n:06d}\n" for n in range(refs))
    head, _, body = packed.partition("\n")
    lines = sorted((body + pad).splitlines(), key=lambda line: line.split(" ")[1].encode())
    (gitdir / "packed-refs").write_text(head + "\n" + "\n".join(lines) + "\n")


def calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def machine(tmp_path: Path, name: str, url: str, git: str, env: dict[str, str]) -> Syncer:
    init_bare(tmp_path / name)
    store = Store(tmp_path / name)
    remotes.add(store.repo, "origin", url)
    # the journal's pull (a remote this small is otherwise listed whole: journal.JOURNAL_FROM)
    return Syncer(
        Here.of(store), "origin", GitCli(git, store.gitdir, env, store.repo), journal_from=0
    )


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
    laptop.here.log.create("jp-c1", [start("jp-c1")], None, "test")
    push(laptop)
    desktop = machine(tmp_path, "desktop", str(remote), git, env)
    assert {o.id for o in desktop.pull() if o.action == "created"} == {"jp-c1"}
    log.unlink()
    store = Store(tmp_path / "desktop")  # as a new jp process would open it
    again = Syncer(
        Here.of(store), "origin", GitCli(git, store.gitdir, env, store.repo), journal_from=0
    )
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


def test_git_gc_starts_only_past_gits_own_thresholds(tmp_path: Path) -> None:
    repo, _ = init_bare(tmp_path / "store")
    git, log = counting_git(tmp_path)
    transport = GitCli(git, Path(repo.path), None, repo)
    transport.maintain()
    assert calls(log) == []  # nothing for git to do: no git started
    fan = Path(repo.path) / "objects" / "17"
    fan.mkdir(parents=True, exist_ok=True)
    for n in range(27):  # git's estimate: 256 x the files in objects/17, past gc.auto
        (fan / f"{n:038x}").write_bytes(b"")
    transport.maintain()
    assert [line.split()[-2:] for line in calls(log)] == [["--auto", "--quiet"]]
    repo.config["gc.auto"] = "0"  # turned off
    transport.maintain()
    assert len(calls(log)) == 1
    shutil.rmtree(fan)


def test_a_pull_that_creates_many_leaves_the_refs_packed(tmp_path: Path) -> None:
    assert GIT is not None
    remote = tmp_path / "remote.git"
    subprocess.run([GIT, "init", "--bare", "-q", str(remote)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    laptop = machine(tmp_path, "laptop", str(remote), GIT, env)
    cids = [f"jp-c{n}" for n in range(1, syncnotes.PACKED_AT + 1)]
    for cid in cids:
        laptop.here.log.create(cid, [start(cid)], None, "test")
    push(laptop)
    desktop = machine(tmp_path, "desktop", str(remote), GIT, env)
    assert len([o for o in desktop.pull() if o.action == "created"]) >= len(cids)
    folder = desktop.here.place.gitdir / "refs" / "conversations"
    assert not folder.exists() or list(folder.iterdir()) == []  # written packed
    assert {r.name for r in desktop.transport.list_refs([refs.LIVE_PREFIX])} == {
        refs.live(c) for c in cids
    }


def test_ssh_is_considered_for_every_remote_but_a_path_here() -> None:
    def entries(url: str, *more: tuple[str, str]) -> list[tuple[str, str]]:
        return [("remote.origin.url", url), *more]

    assert not command.may_use_ssh(entries("/srv/jp.git"), "origin")
    assert not command.may_use_ssh(entries("file:///srv/jp.git"), "origin")
    assert not command.may_use_ssh([], "/srv/jp.git")  # a URL given as the remote
    assert command.may_use_ssh(entries("git@host:jp.git"), "origin")
    assert command.may_use_ssh(entries("ssh://host/jp.git"), "origin")
    assert command.may_use_ssh(entries("https://host/jp.git"), "origin")  # not here: asked
    assert command.may_use_ssh([], "origin")  # not configured: git takes it for a URL
    pushurl = ("remote.origin.pushurl", "git@host:jp.git")
    assert command.may_use_ssh(entries("/srv/jp.git", pushurl), "origin")
    rewrite = ("url.git@host:.insteadof", "/srv/")
    assert command.may_use_ssh(entries("/srv/jp.git", rewrite), "origin")
