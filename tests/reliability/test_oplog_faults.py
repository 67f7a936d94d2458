"""The operation log under faults: a stale lock on the log, a held conversation,
a command line that is not UTF-8, a full disk under undo and restore.

Each case checks what a user sees (one `error:` line naming the next command)
and that the store is as it was, then that everything works once the fault
is gone.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.reliability.harness import RUST_ID, Sandbox
from tests.reliability.test_oplog import COMPACTED, base, state

__all__ = ["base"]  # the prepared store of test_oplog, shared


def _stale_oplog_lock(box: Sandbox) -> Path:
    """A `refs/jp/oplog.lock` a command killed inside its rename left, a minute old."""
    lock = box.store / "refs" / "jp" / "oplog.lock"
    lock.write_text(box.git("rev-parse", "refs/jp/oplog").strip() + "\n")
    old = time.time() - 60
    os.utime(lock, (old, old))
    return lock


def test_a_stale_oplog_lock_makes_undo_refuse_and_keeps_the_order(
    base: Sandbox, tmp_path: Path
) -> None:
    box = base.copy(tmp_path / "box")
    lock = _stale_oplog_lock(box)
    ran = [f"title {n}" for n in range(4)]
    for title in ran[:2]:
        out = box.run("conversation", "edit", RUST_ID, "--title", title)
        assert out.returncode == 0 and "jp doctor --fix" in out.stderr, out.stderr
    box.ok("conversation", "archive", COMPACTED, "--yes")
    for title in ran[2:]:
        box.ok("conversation", "edit", RUST_ID, "--title", title)
    before = state(box)
    proc = box.fail("undo")
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert any("operation log is behind" in line for line in lines), proc.stderr
    assert "nothing was undone" in proc.stderr and "jp doctor --fix" in proc.stderr
    assert state(box) == before, "a refused undo changed something"
    assert "jp doctor --fix" in box.fail("op", "restore", box.json("op", "log")[0]["id"]).stderr
    box.run("doctor", "--fix", "--no-fsck")
    assert not lock.exists()
    log = box.json("op", "log")
    commands = [op["command"] for op in log[:5]]
    assert commands == [
        f"jp conversation edit {RUST_ID} --title '{ran[3]}'",
        f"jp conversation edit {RUST_ID} --title '{ran[2]}'",
        f"jp conversation archive {COMPACTED} --yes",
        f"jp conversation edit {RUST_ID} --title '{ran[1]}'",
        f"jp conversation edit {RUST_ID} --title '{ran[0]}'",
    ], "the pending operations were written out of the order they ran"
    assert "title 3" in box.ok("undo")
    assert state(box)["JP_HEAD"] == before["JP_HEAD"]
    box.fsck()
