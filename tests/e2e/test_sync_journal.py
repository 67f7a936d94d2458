"""The remote's journal seen through the real `jp`: a pull that reconciles says, in
one line, what moved on the remote without a journal entry (docs/sync.md)."""

from __future__ import annotations

from pathlib import Path

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
    assert lines == [f"{DRIFT} (plain git, an older jp or a push through libgit2): "
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
