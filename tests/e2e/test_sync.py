"""Two machines and a bare remote, driven through the real `jp` and plain git.

Each machine is a sealed user (its own HOME, XDG folders and store; no
ANTHROPIC_* variables, so queries use jp's offline model).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.sandbox import ID, RUST
from tests.support.servers.fixtures import every_remote
from tests.support.sync_machine import Machine, remote_refs


# on a path remote; pushing and pulling over SSH and HTTP are the divergence test's
def test_push_pull_and_plain_git_stays_clean(pair: tuple[Machine, Machine, Path]) -> None:
    laptop, desktop, remote = pair
    cid = laptop.new("hello from the laptop")
    imported = ID.findall(laptop.ok("conversation", "import", str(RUST)))[-1]
    assert "sent to origin" in laptop.ok("push")
    assert set(remote_refs(remote)) >= {f"refs/conversations/{cid}", "refs/notes/meta"}
    synced = ("refs/conversations/", "refs/notes/", "refs/jp/journal")  # the journal: docs/sync.md
    assert all(r.startswith(synced) for r in remote_refs(remote))
    out = desktop.ok("pull")
    assert cid in out and imported in out
    assert desktop.tip(cid) == laptop.tip(cid)
    assert desktop.json("conversation", "show", imported)["turns"] > 1
    assert "Already up to date" in desktop.ok("pull")
    for machine in (laptop, desktop):
        assert machine.git("branch", "-r") == ""
        assert "JP_HEAD" not in " ".join(remote_refs(remote))
    assert desktop.run("conversation", "show").returncode != 0, "the active one stays local"


@every_remote
def test_divergence_both_ways(pair: tuple[Machine, Machine, Path]) -> None:
    laptop, desktop, _ = pair
    cid = laptop.new("shared start")
    laptop.ok("push")
    desktop.ok("pull")
    desktop.ok("conversation", "use", cid)
    laptop.ok("q", "LAPTOP-ONE")
    desktop.ok("q", "DESKTOP-ONE")
    laptop.ok("push")
    out = desktop.ok("pull")
    fork = ID.findall(out.split(f"{cid}: diverged; your local continuation is now ", 1)[1])[0]
    assert desktop.tip(cid) == laptop.tip(cid)
    assert "DESKTOP-ONE" in desktop.transcript(fork) and "LAPTOP-ONE" in desktop.transcript(cid)
    assert desktop.json("conversation", "show")["id"] == fork, "the active one follows the fork"
    assert "Already up to date" in desktop.ok("pull")
    desktop.ok("push")
    assert fork in laptop.ok("pull")
    # the other way round: the desktop pushes first, the laptop's copy diverges
    laptop.ok("conversation", "use", fork)
    desktop.ok("q", "DESKTOP-TWO")
    laptop.ok("q", "LAPTOP-TWO")
    rows = desktop.json("push")
    assert {
        "id": fork,
        "action": "fast-forwarded",
        "direction": "push",
        "kind": "conversation",
    } in rows
    rows = laptop.json("pull")
    moved = [r for r in rows if r["id"] == fork]
    assert moved and moved[0]["action"] == "diverged" and ID.match(moved[0]["new_id"])
    assert "LAPTOP-TWO" in laptop.transcript(moved[0]["new_id"])
    laptop.ok("sync")
    desktop.ok("pull")
    assert laptop.ids() == desktop.ids() and len(laptop.ids()) == 3
    assert laptop.refs() == desktop.refs()


def test_archive_on_one_side_append_on_the_other(pair: tuple[Machine, Machine, Path]) -> None:
    laptop, desktop, _ = pair
    busy = laptop.new("kept talking on the desktop")
    quiet = laptop.new("left alone")
    laptop.ok("push")
    desktop.ok("pull")
    laptop.ok("conversation", "archive", busy, quiet, "--yes")
    laptop.ok("push")
    desktop.ok("conversation", "use", busy)
    desktop.ok("q", "STILL-GOING")
    out = desktop.ok("pull")
    assert f"{quiet}: archived" in out
    assert busy in desktop.ids() and quiet in desktop.ids(archived=True)
    desktop.ok("push")
    out = laptop.ok("pull")
    assert f"{busy}: live again" in out
    assert busy in laptop.ids() and quiet in laptop.ids(archived=True)
    assert "STILL-GOING" in laptop.transcript(busy)
    laptop.ok("conversation", "unarchive", quiet)
    laptop.ok("push")
    desktop.ok("pull")
    assert quiet in desktop.ids(), "a later unarchive wins over the archive it undoes"


@every_remote
def test_concurrent_metadata_edits(pair: tuple[Machine, Machine, Path]) -> None:
    laptop, desktop, _ = pair
    cid = laptop.new("metadata")
    laptop.ok("push")
    desktop.ok("pull")
    laptop.ok("conversation", "edit", cid, "--title", "laptop title", "--label", "from=laptop")
    desktop.ok("conversation", "edit", cid, "--title", "desktop title", "--pin")
    laptop.ok("push")
    out = desktop.ok("push")
    assert "refs/notes/meta: merged" in out
    laptop.ok("pull")
    for machine in (laptop, desktop):
        shown = machine.json("conversation", "show", cid)
        assert shown["title"] == "desktop title" and shown["pinned"]
    assert laptop.refs() == desktop.refs()


def test_review_started_on_one_machine_continued_on_the_other(
    pair: tuple[Machine, Machine, Path],
) -> None:
    laptop, desktop, _ = pair
    source = ID.findall(laptop.ok("conversation", "import", str(RUST)))[-1]
    laptop.ok("conversation", "use", source)
    laptop.ok("conversation", "compact", "--interactive", "--from", "2", "--to", "3")
    review = laptop.json("conversation", "show")["id"]
    laptop.ok("push")
    desktop.ok("pull")
    assert desktop.json("conversation", "show", review)["source_id"] == source
    desktop.ok("conversation", "use", review)
    desktop.ok("q", "turns 2-4")
    assert desktop.json("conversation", "show", review)["proposal"]["to_turn"] == 4
    desktop.ok("push")
    laptop.ok("pull")
    laptop.ok("conversation", "compact", "--continue", "--yes")
    compactions = laptop.json("conversation", "show", source)["compactions"]
    assert [(c["from_turn"], c["to_turn"]) for c in compactions][-1] == (2, 4)
    laptop.ok("push")
    desktop.ok("pull")
    assert review in desktop.ids(archived=True)
    assert desktop.tip(source) == laptop.tip(source)


def test_half_fetched_state_is_completed_by_the_next_pull(
    pair: tuple[Machine, Machine, Path],
) -> None:
    laptop, desktop, _ = pair
    first, second = laptop.new("one"), laptop.new("two")
    laptop.ok("push")
    desktop.ok("pull")
    laptop.ok("conversation", "use", first)
    laptop.ok("q", "MORE-ONE")
    laptop.ok("conversation", "use", second)
    laptop.ok("q", "MORE-TWO")
    laptop.ok("push")
    # a fetch that stopped after one ref: the copy moved, nothing integrated
    desktop.git(
        "fetch",
        "origin",
        f"+refs/conversations/{first}:refs/jp-remotes/origin/conversations/{first}",
    )
    # and a copy that went backwards (as after an interrupted earlier run)
    desktop.git("update-ref", "-d", f"refs/jp-remotes/origin/conversations/{second}")
    out = desktop.ok("pull")
    assert first in out and second in out
    assert desktop.refs() == laptop.refs()
