"""`jp doctor`: a healthy store passes; stale lock files, interrupted updates,
quarantined refs, a damaged cache and the format version are named with the
command that mends them, and `--fix` mends what is safe."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.harness import RUST, RUST_ID, Sandbox

OTHER = "jp-c17800000102"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    box = Sandbox(tmp_path_factory.mktemp("doctor") / "box")
    box.ok("init")
    box.ok(
        "conversation",
        "import",
        "--activate",
        str(RUST),
        str(RUST.parent / "17800000102-no-turn-markers"),
    )
    return box


@pytest.fixture
def box(base: Sandbox, tmp_path: Path) -> Sandbox:
    return base.copy(tmp_path / "box")


def report(box: Sandbox, *flags: str) -> tuple[int, dict[str, Any]]:
    proc = box.run("-F", "json", "doctor", *flags)
    return proc.returncode, json.loads(proc.stdout)


def stale(path: Path, age: float = 3600) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    old = time.time() - age
    os.utime(path, (old, old))


def test_a_healthy_store_passes(box: Sandbox) -> None:
    code, found = report(box)
    assert code == 0 and found["healthy"], found
    assert [f for f in found["findings"] if f["severity"] == "problem"] == []
    assert "healthy" in box.ok("doctor")


def test_a_stale_notes_lock_is_named_and_fixed(box: Sandbox) -> None:
    lock = box.store / "refs" / "notes" / "meta.lock"
    stale(lock)
    proc = box.fail("conversation", "edit", RUST_ID, "--title", "blocked")
    (line,) = [x for x in proc.stderr.splitlines() if x.strip()]
    assert "meta.lock" in line and "jp doctor --fix" in line, line
    # an archive moves its refs, then its note is blocked: it must not claim nothing changed
    proc = box.fail("conversation", "archive", OTHER, "--yes")
    assert "nothing was changed" not in proc.stderr
    assert "jp undo" in proc.stderr, proc.stderr
    code, found = report(box)
    assert code == 1 and not found["healthy"]
    (finding,) = [f for f in found["findings"] if f["check"] == "lock"]
    assert "refs/notes/meta.lock" in finding["problem"] and finding["fixable"]
    assert "jp doctor --fix" in finding["fix"]
    text = box.run("doctor")
    assert text.returncode == 1 and "refs/notes/meta.lock" in text.stdout
    box.ok("doctor", "--fix")
    assert not lock.exists()
    box.ok("doctor")
    box.ok("conversation", "edit", RUST_ID, "--title", "after")
    assert "after" in (box.note("refs/notes/meta", RUST_ID) or "")
    box.ok("undo")  # the edit
    box.ok("undo")  # the half-done archive comes back too
    assert f"refs/conversations/{OTHER}" in box.refs("refs/conversations")


@pytest.mark.parametrize(
    "name", ["JP_HEAD.lock", "packed-refs.lock", f"refs/conversations/{RUST_ID}.lock"]
)
def test_every_git_lock_is_named(box: Sandbox, name: str) -> None:
    stale(box.store / name)
    code, found = report(box)
    assert code == 1 and any(name in f["problem"] for f in found["findings"]), found
    box.ok("doctor", "--fix")
    assert not (box.store / name).exists()


def test_a_young_lock_is_in_use_not_stale(box: Sandbox) -> None:
    (box.store / "packed-refs.lock").write_bytes(b"")
    code, found = report(box)
    assert code == 0, found
    assert [f["severity"] for f in found["findings"] if f["check"] == "lock"] == ["note"]
    box.ok("doctor", "--fix")
    assert (box.store / "packed-refs.lock").exists(), "--fix removed a lock a writer may hold"


def test_an_interrupted_update_is_named_then_finished(box: Sandbox) -> None:
    box.kill("move:locked", "conversation", "archive", OTHER, "--yes")
    box.settle()
    code, found = report(box)
    checks = {f["check"] for f in found["findings"] if f["severity"] == "problem"}
    assert code == 1 and {"journal", "oplog"} <= checks, found
    assert any(f["check"] == "lock" for f in found["findings"]), "the ref locks are not named"
    box.ok("doctor", "--fix")
    assert box.leftovers() == []
    code, found = report(box)
    assert code == 0, found
    box.fsck()


def test_a_switch_killed_midway_is_finished_like_any_move(box: Sandbox) -> None:
    """``jp conversation use`` moves JP_HEAD through the same journaled move as every
    other ref (issue 45): killed with the lock taken, its journal and lock are named,
    and the repair puts JP_HEAD back where it was (the switch never said it was done)."""
    box.kill("move:locked", "conversation", "use", RUST_ID)
    box.settle()
    code, found = report(box)
    checks = {f["check"] for f in found["findings"] if f["severity"] == "problem"}
    assert code == 1 and "journal" in checks, found
    box.ok("doctor", "--fix")
    assert box.leftovers() == []
    assert box.git("symbolic-ref", "JP_HEAD").strip() == f"refs/conversations/{OTHER}"
    box.ok("conversation", "use", RUST_ID)
    assert box.git("symbolic-ref", "JP_HEAD").strip() == f"refs/conversations/{RUST_ID}"


def test_a_switch_is_undone_through_the_operation_log(box: Sandbox) -> None:
    box.ok("conversation", "use", RUST_ID)
    assert box.git("symbolic-ref", "JP_HEAD").strip() == f"refs/conversations/{RUST_ID}"
    box.ok("undo")
    assert box.git("symbolic-ref", "JP_HEAD").strip() == f"refs/conversations/{OTHER}"


def test_quarantined_refs_are_listed(box: Sandbox) -> None:
    tip = box.refs("refs/conversations")[f"refs/conversations/{RUST_ID}"]
    box.git("update-ref", "refs/jp/quarantine/origin/conversations/bad", tip)
    code, found = report(box)
    (finding,) = [f for f in found["findings"] if f["check"] == "quarantine"]
    assert code == 1 and "refs/jp/quarantine/origin/conversations/bad" in finding["problem"]
    assert "update-ref -d" in finding["fix"] and not finding["fixable"]


def test_a_damaged_cache_is_rebuilt(box: Sandbox) -> None:
    box.ok("conversation", "ls")
    for extra in ("-wal", "-shm"):
        (box.store / "jp" / f"cache.sqlite{extra}").unlink(missing_ok=True)
    (box.store / "jp" / "cache.sqlite").write_bytes(b"this is not a database" * 100)
    code, found = report(box)
    assert code == 1 and [f["check"] for f in found["findings"]] == ["cache"], found
    box.ok("doctor", "--fix")
    box.ok("doctor")
    assert RUST_ID in box.ok("conversation", "ls")


def test_a_store_of_a_newer_format_is_refused(box: Sandbox) -> None:
    box.git("config", "jp.format", "7")
    before = box.refs()
    for args in (("conversation", "ls"), ("q", "hello"), ("doctor",)):
        proc = box.fail(*args)
        lines = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
        assert len(lines) == 1 and "format 7" in lines[0] and "format 1" in lines[0], proc.stderr
    assert box.refs() == before


def test_an_older_store_gets_its_format_on_the_first_write(box: Sandbox) -> None:
    box.git("config", "--unset", "jp.format")
    code, found = report(box)
    assert code == 0 and [f["check"] for f in found["findings"]] == ["format"]
    box.ok("conversation", "ls")
    assert box.git("config", "jp.format", check=False).strip() == ""
    box.ok("conversation", "edit", RUST_ID, "--title", "written")
    assert box.git("config", "jp.format").strip() == "1"


def test_a_lock_held_by_a_running_jp_names_its_owner(box: Sandbox) -> None:
    from gitstore.fs import flock

    class Busy(Exception):
        pass

    with flock.held(box.store, "sync.origin", 0.0, Busy()):
        holder = flock.owner(box.store / "jp" / "locks" / "sync.origin.lock")
        assert holder is not None and holder.pid == os.getpid()
        code, found = report(box)
        (note,) = [f for f in found["findings"] if f["check"] == "lock"]
        assert note["severity"] == "note" and f"jp process {os.getpid()}" in note["problem"]
        assert code == 0
    code, found = report(box)
    assert [f for f in found["findings"] if f["check"] == "lock"] == []


def test_a_stale_lock_on_the_log_delays_the_record_and_blocks_nothing(box: Sandbox) -> None:
    stale(box.store / "refs" / "jp" / "oplog.lock")
    proc = box.run("conversation", "edit", RUST_ID, "--title", "unlogged")
    assert proc.returncode == 0, proc.stderr
    assert "warning: the operation log was not written" in proc.stderr
    assert "oplog.lock" in proc.stderr
    box.ok("conversation", "ls")
    code, found = report(box)
    assert code == 1 and {"lock", "oplog"} <= {f["check"] for f in found["findings"]}, found
    box.ok("doctor", "--fix")
    assert "edit" in box.json("op", "log")[0]["command"]
    box.ok("undo")
    assert "unlogged" not in (box.note("refs/notes/meta", RUST_ID) or "")
