"""Nothing is ever lost: every state-changing command is undone exactly by `jp undo`.

Each case copies a prepared store, runs one command, checks that it changed
something, runs `jp undo` and checks that every conversation, archive and
notes ref and `JP_HEAD` is exactly as before (read with plain git).  Then:
undo after `git gc --prune=now`, undo twice, undo refused when a ref moved
since, `jp op restore`, the JSON of `jp op log`, a killed command's
operation, two commands at once.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.reliability.harness import RUST, RUST_ID, Sandbox

NO_TURNS = RUST.parent / "17800000102-no-turn-markers"
WITH_COMPACTION = RUST.parent / "17800000103-with-compaction"
OTHER, COMPACTED = "jp-c17800000102", "jp-c17800000103"
USER_REFS = ("refs/conversations", "refs/archive", "refs/notes")


def state(box: Sandbox) -> dict[str, str]:
    """Every ref a user keeps, and what JP_HEAD names."""
    found = box.refs(*USER_REFS)
    found["JP_HEAD"] = box.git("symbolic-ref", "-q", "JP_HEAD", check=False).strip()
    return found


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    """Three conversations (the Rust one active and titled), one archived, a remote."""
    root = tmp_path_factory.mktemp("oplog")
    box = Sandbox(root / "box")
    box.ok("init")
    box.ok("conversation", "import", "--activate", str(RUST))
    box.ok("conversation", "import", str(NO_TURNS), str(WITH_COMPACTION))
    box.ok("conversation", "edit", RUST_ID, "--title", "rust")
    box.ok("conversation", "archive", OTHER, "--yes")
    remote = box.root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    box.ok("remote", "add", "origin", str(remote))
    box.ok("push", "origin")
    copy = box.root / "17800000199-a-copy"
    shutil.copytree(RUST, copy)
    return box


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]
    setup: Callable[[Sandbox], None] = field(default=lambda box: None)
    changes: bool = True  # the command moves one of the user's refs


def _review(box: Sandbox) -> None:
    box.ok("conversation", "compact", "--interactive")


def _forget_one(box: Sandbox) -> None:
    box.git("update-ref", "-d", f"refs/conversations/{COMPACTED}")  # the remote still has it


CASES = [
    Case("rm", ("conversation", "rm", COMPACTED, "--yes")),
    Case("rm-active", ("conversation", "rm", RUST_ID, "--yes")),
    Case("archive", ("conversation", "archive", RUST_ID, "--yes")),
    Case("unarchive", ("conversation", "unarchive", OTHER)),
    Case("edit", ("conversation", "edit", RUST_ID, "--title", "renamed", "--pin")),
    Case("fork", ("conversation", "fork", RUST_ID)),
    Case("import", ("conversation", "import", "--activate", "../17800000199-a-copy")),
    Case("compact-flags", ("conversation", "compact", "--turn", "2..3", "-r", "--yes")),
    Case("compact-rules", ("conversation", "compact", "--yes")),
    Case("compact-reset", ("conversation", "compact", COMPACTED, "--reset", "--yes")),
    Case("compact-interactive", ("conversation", "compact", "--interactive")),
    Case("continue", ("conversation", "compact", "--continue", "--yes"), _review),
    Case("abort", ("conversation", "compact", "--abort"), _review),
    Case("pull", ("pull", "origin"), _forget_one),
    Case("remote-remove", ("remote", "remove", "origin"), changes=False),
    Case("use", ("conversation", "use", COMPACTED)),
    Case("q", ("q", "hello there")),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_undo_puts_every_ref_back(base: Sandbox, tmp_path: Path, case: Case) -> None:
    box = base.copy(tmp_path / "box")
    case.setup(box)
    before = state(box)
    copies = box.refs("refs/jp-remotes")
    box.ok(*case.args)
    if case.changes:
        assert state(box) != before, "the command changed nothing (test setup)"
    newest = box.json("op", "log")[0]
    assert case.args[1] in newest["command"], newest
    out = box.ok("undo")
    assert newest["id"][:12] in out
    assert state(box) == before
    assert box.refs("refs/jp-remotes") == copies, "the fetched copies are not back"
    if case.name == "remote-remove":
        assert "origin" in box.ok("remote", "list")
    box.fsck()
    box.ok("conversation", "ls")


def test_undo_after_gc_brings_back_a_deleted_conversation(base: Sandbox, tmp_path: Path) -> None:
    box = base.copy(tmp_path / "box")
    tip = box.refs("refs/conversations")[f"refs/conversations/{COMPACTED}"]
    events = box.events(tip)
    box.ok("conversation", "rm", COMPACTED, "--yes")
    box.git("reflog", "expire", "--expire=now", "--all")
    box.git("gc", "--prune=now", "--quiet")
    box.ok("undo")
    assert box.refs("refs/conversations")[f"refs/conversations/{COMPACTED}"] == tip
    assert box.events(tip) == events
    box.fsck()


def test_undo_twice_undoes_two_operations(base: Sandbox, tmp_path: Path) -> None:
    box = base.copy(tmp_path / "box")
    first = state(box)
    box.ok("conversation", "archive", COMPACTED, "--yes")
    second = state(box)
    box.ok("conversation", "edit", RUST_ID, "--title", "twice")
    box.ok("undo")
    assert state(box) == second
    box.ok("undo")
    assert state(box) == first
    log = box.json("op", "log")
    assert [op["undoes"] for op in log[:2]] == [log[3]["id"], log[2]["id"]]


def test_undo_refuses_to_overwrite_a_later_change(base: Sandbox, tmp_path: Path) -> None:
    box = base.copy(tmp_path / "box")
    box.ok("conversation", "archive", COMPACTED, "--yes")
    ref = f"refs/archive/conversations/{COMPACTED}"
    other = box.refs("refs/conversations")[f"refs/conversations/{RUST_ID}"]
    box.git("update-ref", ref, other)  # changed outside jp since
    moved = state(box)
    proc = box.fail("undo")
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert ref in lines[0] and "--force" in lines[0] and "jp op log" in lines[0]
    assert state(box) == moved, "a refused undo changed something"
    box.ok("undo", "--force")
    assert f"refs/conversations/{COMPACTED}" in state(box)
    assert ref not in state(box)


def test_op_restore_returns_to_the_state_after_an_operation(base: Sandbox, tmp_path: Path) -> None:
    box = base.copy(tmp_path / "box")
    box.ok("conversation", "edit", RUST_ID, "--title", "one")
    after_one = state(box)
    one = box.json("op", "log")[0]["id"]
    box.ok("conversation", "edit", RUST_ID, "--title", "two")
    box.ok("conversation", "rm", COMPACTED, "--yes")
    box.ok("conversation", "use", OTHER)
    later = state(box)
    box.ok("op", "restore", one[:8])
    assert state(box) == after_one
    assert box.json("op", "log")[0]["restores"] == one
    box.ok("undo")
    assert state(box) == later
    assert "error:" in box.fail("op", "restore", "ffffffffffff").stderr


def test_op_log_json_lists_operations_newest_first(base: Sandbox, tmp_path: Path) -> None:
    box = base.copy(tmp_path / "box")
    box.ok("conversation", "edit", RUST_ID, "--title", "logged")
    log = box.json("op", "log")
    assert isinstance(log, list) and len(log) >= 6
    assert len({op["id"] for op in log}) == len(log)
    newest = log[0]
    assert "edit" in newest["command"] and newest["time"].endswith("Z")
    assert newest["refs"] == [
        {
            "ref": "refs/notes/meta",
            "old": newest["refs"][0]["old"],
            "new": state(box)["refs/notes/meta"],
        }
    ]
    assert [op["command"] for op in log][-1].startswith("jp conversation import")
    assert box.json("op", "log", "-n", "2") == log[:2]
    text = box.ok("op", "log")
    assert text.index(newest["id"][:12]) < text.index(log[1]["id"][:12])
    before = len(log)
    box.ok("conversation", "ls")
    box.ok("conversation", "show", RUST_ID)
    assert len(box.json("op", "log")) == before, "a read-only command recorded an operation"


def test_a_killed_commands_moves_are_recorded(base: Sandbox, tmp_path: Path) -> None:
    box = base.copy(tmp_path / "box")
    before = state(box)
    box.kill("move:committed", "conversation", "archive", COMPACTED, "--yes")
    assert state(box) != before
    newest = box.json("op", "log")[0]  # the next command completes the record
    assert newest["recovered"] and "archive" in newest["command"]
    assert {r["ref"] for r in newest["refs"]} == {
        f"refs/conversations/{COMPACTED}",
        f"refs/archive/conversations/{COMPACTED}",
    }
    assert box.leftovers() == []
    box.ok("undo")
    assert state(box) == before
    # a query killed between its two appends: the request it committed is recorded
    tip = box.refs("refs/conversations")[f"refs/conversations/{RUST_ID}"]
    box.kill("append:objects-written@2", "q", "killed midway")
    newest = box.json("op", "log")[0]
    assert newest["recovered"] and newest["refs"][0]["old"] == tip
    box.ok("undo")
    assert state(box) == before


def test_two_commands_at_once_record_only_their_own_refs(base: Sandbox, tmp_path: Path) -> None:
    box = base.copy(tmp_path / "box")
    box.ok("conversation", "unarchive", OTHER)
    runs = [box.popen("q", "-i", cid, f"hello {cid}") for cid in (RUST_ID, COMPACTED, OTHER)]
    for proc in runs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    for op in box.json("op", "log")[:3]:
        cid = shlex.split(op["command"])[3]
        assert [r["ref"] for r in op["refs"]] == [f"refs/conversations/{cid}"], op


def test_undo_of_a_remote_change_keeps_the_url_as_written(base: Sandbox, tmp_path: Path) -> None:
    """git rewrites a URL by ``url.<base>.insteadOf`` when it uses it, not in the
    config: the operation log records the URL as the config holds it, so that an
    undo neither sees a conflict that is not one nor writes the rewritten URL back."""
    box = base.copy(tmp_path / "box")
    box.git("config", f"url.{box.root}/.insteadOf", "short:")
    box.ok("remote", "add", "other", "short:other.git")
    assert box.git("config", "remote.other.url").strip() == "short:other.git"
    box.ok("undo")
    assert "other" not in box.ok("remote", "list")
    box.git("remote", "set-url", "origin", "short:remote.git")
    box.ok("remote", "remove", "origin")
    box.ok("undo")
    assert box.git("config", "remote.origin.url").strip() == "short:remote.git"
