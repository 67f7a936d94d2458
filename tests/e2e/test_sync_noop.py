"""A pull with nothing to do, told from files (porcelain/early/pull.py,
gitstore/sync/pull_quick.py): it starts no git, prints what the whole pull
prints and counts itself as the whole pull does; anything it cannot be sure of
runs the whole pull (docs/sync.md).

Whether git ran is seen through a ``git`` on the machine's PATH that logs each
run and then runs the real git.  The journal is trusted from 1,000
conversations on (``JOURNAL_FROM``); the tests write the store's count of the
last reconcile as a remote of that size would have left it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.noop_pull import trust_journal
from tests.support.servers.fixtures import every_remote
from tests.support.sync_machine import Machine

UP_TO_DATE = "Already up to date with origin.\n"


def _logged_git(machine: Machine) -> Path:
    """Put a logging ``git`` first on the machine's PATH; returns its log."""
    real = shutil.which("git")
    assert real is not None
    shim = machine.root / "shim"
    shim.mkdir(exist_ok=True)
    log = machine.root / "git.log"
    script = shim / "git"
    script.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    script.chmod(0o755)
    machine.env["PATH"] = f"{shim}{os.pathsep}{machine.env['PATH']}"
    return log


def _runs(log: Path) -> list[str]:
    """The git runs logged since the last call (the log is emptied)."""
    if not log.exists():
        return []
    lines = log.read_text().splitlines()
    log.unlink()
    return lines


def _fetched(runs: list[str]) -> bool:
    return any(" fetch " in f" {run} " for run in runs)


def _state(machine: Machine) -> Path:
    return machine.store / "jp" / "journal" / "origin.json"


def _pulls(machine: Machine) -> int:
    return int(json.loads(_state(machine).read_text())["pulls"])


Synced = tuple[Machine, Machine, Path, str, Path]


@pytest.fixture
def synced(pair: tuple[Machine, Machine, Path]) -> Synced:
    """The pair after one conversation went laptop -> remote -> desktop, the desktop
    trusting the journal and logging its git runs: (laptop, desktop, remote path,
    the conversation, the log)."""
    laptop, desktop, remote = pair
    cid = laptop.new("noop")
    laptop.ok("push")
    desktop.ok("pull")
    trust_journal(desktop)
    return laptop, desktop, remote, cid, _logged_git(desktop)


def _full(machine: Machine, *args: str) -> subprocess.CompletedProcess[str]:
    """The whole pull: a git setting that changes nothing for git makes the files
    path step aside (``GIT_CONFIG_COUNT=0``: no settings from the environment)."""
    machine.env["GIT_CONFIG_COUNT"] = "0"
    try:
        return machine.run(*args)
    finally:
        del machine.env["GIT_CONFIG_COUNT"]


def _oplog(machine: Machine) -> str:
    return machine.git("for-each-ref", "--format=%(objectname)", "refs/jp/oplog")


@every_remote
def test_a_noop_pull_prints_and_counts_what_the_whole_one_does(
    synced: Synced, remote_kind: str
) -> None:
    _, desktop, _, _, log = synced
    oplog = _oplog(desktop)
    _runs(log)  # the test's own git
    for args in (
        ("pull",),
        ("pull", "origin", "-v"),
        ("--format", "json", "pull"),
        ("pull", "-F", "json"),
    ):
        before = _pulls(desktop)
        quick = desktop.run(*args)
        runs = _runs(log)
        assert _pulls(desktop) == before + 1, "counted towards the next reconcile"
        whole = _full(desktop, *args)
        assert _fetched(_runs(log)), "the whole pull fetched"
        assert _pulls(desktop) == before + 2
        assert (quick.returncode, quick.stdout, quick.stderr) == (
            whole.returncode,
            whole.stdout,
            whole.stderr,
        ), args
        assert quick.stdout in (UP_TO_DATE, "[]\n")
        if remote_kind == "path":
            assert runs == [], "told from the files: no git"
        else:
            assert _fetched(runs), "ssh and http keep git"
    assert _oplog(desktop) == oplog, "no operation recorded, as by the whole pull"


def test_a_moved_journal_takes_the_whole_pull(synced: Synced) -> None:
    laptop, desktop, _, cid, log = synced
    laptop.ok("q", "MOVED")
    laptop.ok("push")
    out = desktop.ok("pull")
    assert f"{cid}: updated from origin" in out
    assert _fetched(_runs(log))
    assert desktop.tip(cid) == laptop.tip(cid)
    assert desktop.ok("pull") == UP_TO_DATE and _runs(log) == []


def test_plain_gits_push_waits_for_the_reconcile_which_the_files_path_leaves_to_git(
    synced: Synced,
) -> None:
    laptop, desktop, _, cid, log = synced
    laptop.ok("q", "PLAIN")
    ref = f"refs/conversations/{cid}"
    laptop.git("push", "--quiet", "origin", f"{ref}:{ref}")  # no journal entry
    assert desktop.ok("pull") == UP_TO_DATE, "as a journal pull: the journal did not move"
    assert _runs(log) == []
    trust_journal(desktop, pulls=50)  # the reconcile is due
    proc = desktop.run("pull")
    assert proc.returncode == 0, proc.stderr
    assert f"{cid}: updated from origin" in proc.stdout
    assert "moved on origin without a journal entry" in proc.stderr
    assert _fetched(_runs(log))
    assert desktop.tip(cid) == laptop.tip(cid)


def test_a_small_remote_and_a_fetch_left_halfway_take_the_whole_pull(synced: Synced) -> None:
    _, desktop, _, _, log = synced
    _state(desktop).write_text(json.dumps({"pulls": 0, "refs": 3}))
    assert desktop.ok("pull") == UP_TO_DATE
    assert _runs(log), "a small remote reconciles on every pull"
    trust_journal(desktop)
    copy = desktop.git("rev-parse", "refs/jp-remotes/origin/jp/journal").strip()
    desktop.git("update-ref", "refs/jp-remotes/origin/jp/incoming", copy)
    assert desktop.ok("pull") == UP_TO_DATE
    assert _runs(log), "a fetched journal waits: the whole pull finishes it"
    assert not desktop.git("for-each-ref", "refs/jp-remotes/origin/jp/incoming").strip()
    trust_journal(desktop)
    _runs(log)  # the test's own git
    assert desktop.ok("pull") == UP_TO_DATE and _runs(log) == []


def _journal_file(remote: Path) -> Path:
    """The remote's journal as a loose file (a push wrote it so; packed: unpacked)."""
    loose = remote / "refs" / "jp" / "journal"
    if not loose.exists():
        oid = subprocess.run(
            ["git", "--git-dir", str(remote), "rev-parse", "refs/jp/journal"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        loose.parent.mkdir(parents=True, exist_ok=True)
        loose.write_text(oid)
    return loose


@pytest.mark.parametrize("hostile", ["symlink", "garbage", "huge", "beside", "packed-link"])
def test_odd_remote_files_take_the_whole_pull(synced: Synced, hostile: str) -> None:
    _, desktop, remote, _, log = synced
    loose = _journal_file(remote)
    oid = loose.read_text()
    if hostile == "symlink":  # the same commit, through a link
        target = remote / "elsewhere"
        target.write_text(oid)
        loose.unlink()
        loose.symlink_to(target)
    elif hostile == "garbage":
        loose.write_text(oid.strip() + " and more\n")
    elif hostile == "huge":
        loose.write_text(oid * 200_000)
    elif hostile == "beside":
        (loose.parent / "journal-two").write_text(oid)
    else:
        (remote / "elsewhere").write_text(f"{oid.strip()} refs/jp/journal\n")
        loose.unlink()
        (remote / "packed-refs").unlink(missing_ok=True)
        (remote / "packed-refs").symlink_to(remote / "elsewhere")
    proc = desktop.run("pull")
    assert _fetched(_runs(log)), "git decides"
    assert "Traceback" not in proc.stderr
    assert proc.returncode in (0, 1), proc.stderr


def test_the_journal_packed_on_the_remote_is_read_from_packed_refs(synced: Synced) -> None:
    _, desktop, remote, _, log = synced
    subprocess.run(["git", "--git-dir", str(remote), "pack-refs", "--all"], check=True)
    assert not (remote / "refs" / "jp" / "journal").exists()
    assert desktop.ok("pull") == UP_TO_DATE and _runs(log) == []
