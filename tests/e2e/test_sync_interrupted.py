"""A pull or push killed at any moment is completed by the next run, and
`jp remote` and the error paths behave."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.sync_machine import JP, Machine, bulk_conversations, remote_refs


def no_background_gc(*machines: Machine) -> None:
    """jp starts `git gc --auto` in the background after many writes; a
    `git fsck` running alongside it reports the loose objects it is pruning."""
    for machine in machines:
        machine.git("config", "gc.auto", "0")


def kill_after(machine: Machine, delay: float, *args: str, group: bool = True) -> None:
    """Kill `jp` (and with ``group`` the git it runs, as a closed terminal does)."""
    proc = subprocess.Popen(
        [str(JP), *args],
        env=machine.env,
        cwd=machine.root,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(delay)
    if group:
        os.killpg(proc.pid, signal.SIGKILL)
    else:
        proc.send_signal(signal.SIGKILL)
    proc.wait()


def fsck(machine: Machine) -> None:
    proc = subprocess.run(
        ["git", "--git-dir", str(machine.store), "fsck", "--no-progress"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def diverged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Machine, Machine, Path, str]:
    """Built once a module (a copy of the desktop a test): a laptop and a desktop that
    continued one conversation each their own way, and 400 more conversations pushed
    by the laptop that the desktop has not pulled.  The tests only read the laptop and
    the remote (a pull fetches from it)."""
    base = tmp_path_factory.mktemp("diverged")
    remote = base / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    laptop, desktop = Machine(base / "laptop", remote), Machine(base / "desktop", remote)
    no_background_gc(laptop, desktop)
    bulk_conversations(laptop.store, 400)
    laptop.ok("push")
    first = laptop.new("diverges")
    laptop.ok("push")
    desktop.ok("pull")
    desktop.ok("conversation", "use", first)
    desktop.ok("q", "DESKTOP")
    laptop.ok("conversation", "use", first)
    laptop.ok("q", "LAPTOP")
    bulk_conversations(laptop.store, 400, prefix=17100000000)
    laptop.ok("push")
    return laptop, desktop, remote, first


@pytest.mark.parametrize(("delay", "group"), [(0.3, True), (0.6, True), (0.9, False), (1.4, True)])
def test_killed_pull_is_completed_by_the_next(
    diverged: tuple[Machine, Machine, Path, str], tmp_path: Path, delay: float, group: bool
) -> None:
    laptop, built, remote, first = diverged
    desktop = built.copy(tmp_path / "desktop", remote)
    kill_after(desktop, delay, "pull", group=group)
    fsck(desktop)
    desktop.ok("pull")
    desktop.ok("conversation", "ls")
    assert desktop.tip(first) == laptop.tip(first)
    theirs, ours = laptop.refs(), desktop.refs()  # one `git for-each-ref` each, not one a ref
    mine = {k for k in ours if k not in theirs and "/notes/" not in k}
    assert len(mine) == 1, "the desktop's continuation is one conversation of its own"
    assert all(ours[k] == v for k, v in theirs.items() if "/notes/" not in k)
    assert "Already up to date" in desktop.ok("pull")


@pytest.fixture(scope="module")
def unpushed(tmp_path_factory: pytest.TempPathFactory) -> Machine:
    """Built once a module (a copy a test): a laptop with 800 conversations not pushed."""
    base = tmp_path_factory.mktemp("unpushed")
    laptop = Machine(base / "laptop", base / "nowhere.git")
    no_background_gc(laptop)
    bulk_conversations(laptop.store, 800)
    return laptop


@pytest.mark.parametrize("delay", [0.3, 0.8])
def test_killed_push_is_completed_by_the_next(
    unpushed: Machine, tmp_path: Path, delay: float
) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    laptop = unpushed.copy(tmp_path / "laptop", remote)
    kill_after(laptop, delay, "push")
    fsck(laptop)
    laptop.ok("push")
    assert set(remote_refs(remote)) == {*laptop.refs(), "refs/jp/journal"}
    assert "origin is up to date" in laptop.ok("push")


def test_remote_commands(pair: tuple[Machine, Machine, Path], tmp_path: Path) -> None:
    laptop, _, remote = pair
    assert laptop.json("remote", "list") == [
        {"name": "origin", "url": str(remote), "conversations": True}
    ]
    config = laptop.git("config", "--get-all", "remote.origin.fetch").split()
    assert "+refs/conversations/*:refs/jp-remotes/origin/conversations/*" in config
    pushed = laptop.git("config", "--get-all", "remote.origin.push").split()
    assert "refs/notes/meta*:refs/notes/meta*" in pushed
    assert "refs/notes/*:refs/notes/*" not in pushed, "jp's notes by name, not every notes ref"
    failed = laptop.run("remote", "add", "origin", "/somewhere/else")
    assert failed.returncode != 0 and "already exists" in failed.stderr
    other = tmp_path / "other.git"
    subprocess.run(["git", "init", "--bare", "-q", str(other)], check=True)
    laptop.ok("remote", "add", "backup", str(other))
    assert "origin is up to date" in laptop.ok("push"), "with two remotes, origin"
    laptop.new("to the backup")
    laptop.ok("push", "backup")
    assert remote_refs(other)
    laptop.ok("remote", "rm", "backup")
    assert "backup" not in laptop.ok("remote", "ls")
    assert not [
        r
        for r in laptop.git("for-each-ref", "--format=%(refname)").split()
        if r.startswith("refs/jp-remotes/backup/")
    ]


def test_project_remote_keeps_its_own_settings(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    machine = Machine(tmp_path / "m", remote)
    machine.git("config", "--add", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
    machine.ok("remote", "remove", "origin")
    assert machine.git("config", "--get-all", "remote.origin.fetch").split() == [
        "+refs/heads/*:refs/remotes/origin/*"
    ]
    pushes = subprocess.run(
        ["git", "--git-dir", str(machine.store), "config", "--get-all", "remote.origin.push"],
        capture_output=True,
        text=True,
    )
    assert pushes.stdout == "", "jp's push refspecs go; the remote had none of its own"
    machine.ok("remote", "add", "origin", str(remote))
    assert "refs/jp-remotes/origin/notes" in machine.git(
        "config", "--get-all", "remote.origin.fetch"
    )


def test_errors_are_one_line(pair: tuple[Machine, Machine, Path], tmp_path: Path) -> None:
    laptop, _, _ = pair
    missing = laptop.run("pull", "nowhere")
    assert missing.returncode != 0
    assert "no remote named nowhere" in missing.stderr and "jp remote add" in missing.stderr
    laptop.ok("remote", "add", "gone", str(tmp_path / "does-not-exist.git"))
    broken = laptop.run("pull", "gone")
    assert broken.returncode != 0 and broken.stderr.startswith("error: sync with gone failed")
    bad = laptop.run("remote", "add", "../evil", "x")
    assert bad.returncode != 0 and "not a valid remote name" in bad.stderr
