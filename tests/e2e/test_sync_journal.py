"""The remote's journal seen through the real `jp`: a pull that reconciles says, in
one line, what moved on the remote without a journal entry (docs/sync.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.servers.fixtures import every_remote
from tests.support.sync_machine import Machine

DRIFT = "warning: refs/jp/journal: 1 ref moved on origin without a journal entry"


def _plain_git_push(machine: Machine, cid: str, text: str) -> None:
    """A new event of ``cid`` sent by plain git: no journal entry."""
    machine.ok("conversation", "use", cid)
    machine.ok("q", text)
    ref = f"refs/conversations/{cid}"
    machine.git("push", "--quiet", "origin", f"{ref}:{ref}")


@every_remote
def test_a_pull_names_what_plain_git_moved_in_one_line(
    pair: tuple[Machine, Machine, Path],
) -> None:
    laptop, desktop, _ = pair
    cid = laptop.new("journaled")
    laptop.ok("push")
    desktop.ok("pull")
    _plain_git_push(laptop, cid, "PLAIN-ONE")
    proc = desktop.run("pull")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "journal entry" in line]
    assert lines == [f"{DRIFT} (plain git or an older jp): "
                     f"refs/conversations/{cid}; this reconcile fetched and checked them"]
    assert desktop.tip(cid) == laptop.tip(cid), "and it was brought in"
    _plain_git_push(laptop, cid, "PLAIN-TWO")
    rows = desktop.json("pull")
    drift = [r for r in rows if r["action"] == "drift"]
    assert drift == [
        {
            "id": "refs/jp/journal",
            "action": "drift",
            "direction": "pull",
            "kind": "warning",
            "detail": lines[0].split("refs/jp/journal: ", 1)[1],
        }
    ]
    # a push through jp names what it moves: no drift after it
    laptop.ok("q", "JOURNALED")
    laptop.ok("push")
    assert "journal entry" not in desktop.run("pull").stderr


def _remote_git(remote: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(remote), *args],
        input=stdin,
        text=True,
        capture_output=True,
        check=True,
    ).stdout.strip()


def _hostile_journal(remote: Path, what: str) -> str:
    """Point the remote's ``refs/jp/journal`` at ``what``: a blob, a tree, or a
    commit that is not a journal entry (a conversation's own tip)."""
    if what == "blob":
        oid = _remote_git(remote, "hash-object", "-w", "--stdin", stdin="not a journal\n")
    elif what == "tree":
        oid = _remote_git(remote, "mktree", stdin="")
    else:
        oid = _remote_git(remote, "rev-parse", _remote_git(remote, "for-each-ref",
                                                           "--count=1", "--format=%(refname)",
                                                           "refs/conversations"))
    _remote_git(remote, "update-ref", "refs/jp/journal", oid)
    return oid


@pytest.mark.parametrize("what", ["blob", "tree", "commit"])
def test_a_journal_that_is_not_one_is_set_aside_and_every_push_goes_on(
    pair: tuple[Machine, Machine, Path], what: str
) -> None:
    """Anyone who can push to the remote can point its journal at a blob or a tree:
    a push names it in one warning, sends its refs, and replaces the journal by a
    new chain, so the other users' pushes go on too."""
    laptop, desktop, remote = pair
    cid = laptop.new("before")
    laptop.ok("push")
    desktop.ok("pull")  # the desktop holds a copy of the good journal
    bad = _hostile_journal(remote, what)
    laptop.ok("q", "AFTER")
    proc = laptop.run("push")
    assert proc.returncode == 0, proc.stderr
    said = {"blob": "the journal points at a blob", "tree": "the journal points at a tree",
            "commit": "a commit that is not a journal entry"}[what]  # fmt: skip
    assert f"warning: refs/jp/journal: {said}" in proc.stderr, proc.stderr
    assert "set aside" in proc.stderr
    fixed = _remote_git(remote, "rev-parse", "refs/jp/journal")
    assert fixed != bad
    assert _remote_git(remote, "cat-file", "-t", fixed) == "commit"
    assert f"refs/conversations/{cid}" in _remote_git(remote, "log", "-1", "--format=%B", fixed)
    assert _remote_git(remote, "rev-parse", f"refs/conversations/{cid}") == laptop.tip(cid)
    # the other machine pulls and pushes over the new journal without a word of it
    desktop.ok("conversation", "use", cid)
    desktop.ok("q", "FROM THE DESKTOP")
    again = desktop.run("push")
    assert again.returncode == 0 and "journal" not in again.stderr, again.stderr
    assert _remote_git(remote, "rev-parse", f"refs/conversations/{cid}") == desktop.tip(cid)


def test_a_push_with_nothing_to_send_replaces_a_journal_set_aside(
    pair: tuple[Machine, Machine, Path],
) -> None:
    laptop, _, remote = pair
    laptop.new("one")
    laptop.ok("push")
    bad = _hostile_journal(remote, "blob")
    proc = laptop.run("push")
    assert proc.returncode == 0, proc.stderr
    assert "set aside" in proc.stderr
    fixed = _remote_git(remote, "rev-parse", "refs/jp/journal")
    assert fixed != bad and _remote_git(remote, "cat-file", "-t", fixed) == "commit"
    quiet = laptop.run("push")
    assert quiet.returncode == 0 and "journal" not in quiet.stderr, quiet.stderr
