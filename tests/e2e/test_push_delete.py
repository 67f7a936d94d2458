"""Deleting a conversation everywhere: `jp push --delete ID` asks, deletes the remote's
copy and this store's, `jp undo` brings it back here; no remote deletes a local one."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

from tests.support.sandbox import JP
from tests.support.servers.fixtures import every_remote
from tests.support.sync_machine import Machine, remote_refs


def _typed(machine: Machine, answer: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``jp ARGS`` with ``answer`` piped on stdin (a person's `echo y | jp ...`)."""
    return subprocess.run(
        [str(JP), *args],
        env=machine.env,
        cwd=machine.root,
        text=True,
        capture_output=True,
        input=answer,
        timeout=300,
    )


def _shared(pair: tuple[Machine, Machine, Path]) -> tuple[Machine, Machine, Path, str]:
    laptop, desktop, remote = pair
    cid = laptop.new("a conversation to delete everywhere")
    laptop.ok("push")
    desktop.ok("pull")
    assert cid in desktop.ids()
    return laptop, desktop, remote, cid


@every_remote
def test_push_delete_asks_then_deletes_there_and_here(pair: tuple[Machine, Machine, Path]) -> None:
    laptop, desktop, remote, cid = _shared(pair)
    ref = f"refs/conversations/{cid}"
    before = laptop.refs()
    refused = laptop.run("push", "--delete", cid)  # stdin is closed: nobody answers
    assert refused.returncode != 0 and "--yes" in refused.stderr, refused.stderr
    assert ref in remote_refs(remote) and laptop.refs() == before
    declined = _typed(laptop, "n\n", "push", "--delete", cid)
    assert declined.returncode != 0 and ref in remote_refs(remote)
    done = _typed(laptop, "y\n", "push", "--delete", cid[:-2])  # a prefix names it here
    assert done.returncode == 0, done.stderr
    assert f"Deleted {cid} from origin and from this store." in done.stdout
    assert "jp undo" in done.stderr
    assert ref not in remote_refs(remote) and cid not in laptop.ids()
    laptop.ok("pull")
    assert cid not in laptop.ids(), "the next pull brought the deleted conversation back"
    # the rule: a remote never deletes a local conversation, by a missing ref or otherwise
    desktop.ok("pull")
    assert cid in desktop.ids(), "a pull deleted the desktop's own copy"


def test_undo_brings_it_back_and_push_sends_it_again(pair: tuple[Machine, Machine, Path]) -> None:
    laptop, _, remote, cid = _shared(pair)
    tip = laptop.tip(cid)
    laptop.ok("push", "--delete", cid, "--yes")
    laptop.ok("undo")
    assert laptop.tip(cid) == tip, "undo did not bring the conversation back"
    laptop.ok("push")
    assert f"refs/conversations/{cid}" in remote_refs(remote)


def test_push_delete_of_what_the_remote_lacks_changes_nothing(
    pair: tuple[Machine, Machine, Path],
) -> None:
    laptop, _, remote = pair
    local = laptop.new("never pushed")
    before = laptop.refs()
    proc = laptop.run("push", "--delete", local, "--yes")
    assert proc.returncode == 1 and f"has no conversation {local}" in proc.stderr
    assert laptop.refs() == before
    proc = laptop.run("push", "--delete", "jp-c1\x1b[31m", "--yes")  # hostile text, one line
    assert proc.returncode == 1 and "\x1b" not in proc.stderr and len(proc.stderr.splitlines()) == 2
    assert laptop.run("push", "--yes").returncode == 2, "-y without --delete is a usage error"


def test_a_kill_during_push_delete_loses_nothing(pair: tuple[Machine, Machine, Path]) -> None:
    laptop, _, remote, cid = _shared(pair)
    tip = laptop.tip(cid)
    env = {**laptop.env, "JP_FAULT": "move:locked:kill"}  # after the remote's copy went
    proc = subprocess.run(
        [str(JP), "push", "--delete", cid, "--yes"],
        env=env,
        cwd=laptop.root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert proc.returncode == -9, proc.stderr
    assert f"refs/conversations/{cid}" not in remote_refs(remote), "killed before the remote"
    assert laptop.tip(cid) == tip, "the local copy was lost"
    laptop.git("fsck", "--no-dangling")
    laptop.ok("push")  # the store's copy goes back: the deletion simply did not happen
    assert f"refs/conversations/{cid}" in remote_refs(remote)


def test_rm_says_what_is_true(pair: tuple[Machine, Machine, Path]) -> None:
    laptop, _, remote, cid = _shared(pair)
    out = _typed(laptop, "y\n", "conversation", "rm", cid)
    assert out.returncode == 0 and "cannot be undone" not in out.stderr
    assert "jp undo" in out.stderr
    assert "origin" in out.stderr and f"jp push --delete {cid}" in out.stderr, out.stderr
    data = json.loads(laptop.ok("-F", "json", "conversation", "ls", "--all"))
    assert cid not in [row["id"] for row in data]
    done = laptop.run("push", "--delete", cid, "-y")  # the command the note names works
    assert done.returncode == 0, done.stderr
    assert f"Deleted {cid} from origin." in done.stdout, done.stdout
    assert f"refs/conversations/{cid}" not in remote_refs(remote)


# a path remote: its push runs git's receive-pack as the servers do, so the remote's
# gc meets the same deletion (the asking and deleting above run on every remote)
def test_git_gc_on_both_sides_during_push_delete_breaks_nothing(
    pair: tuple[Machine, Machine, Path],
) -> None:
    laptop, _, remote, cid = _shared(pair)
    keep = laptop.new("stays everywhere")
    laptop.ok("push")
    stop = threading.Event()

    def maintain() -> None:
        while not stop.is_set():
            for gitdir in (laptop.store, remote):  # git's own gc, as its auto gc runs it
                subprocess.run(
                    ["git", "--git-dir", str(gitdir), "gc", "--quiet"],
                    env=laptop.env,
                    capture_output=True,
                )

    gc = threading.Thread(target=maintain, daemon=True)
    gc.start()
    try:
        laptop.ok("push", "--delete", cid, "--yes")
    finally:
        stop.set()
        gc.join(timeout=60)
    assert f"refs/conversations/{cid}" not in remote_refs(remote)
    assert f"refs/conversations/{keep}" in remote_refs(remote) and keep in laptop.ids()
    laptop.git("fsck", "--no-dangling")
    laptop.ok("undo")
    assert cid in laptop.ids()
    laptop.git("fsck", "--no-dangling")
