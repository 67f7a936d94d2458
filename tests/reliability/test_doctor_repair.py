"""`jp doctor --fix` in a project's repository: only jp's own locks go.

git's lock files carry no owner, so one of git's own (`index.lock`, which
`git commit -a` holds while its editor is open, a branch's) is never provably
abandoned: doctor names it and leaves it; the locks of jp's refs it removes.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from tests.reliability.harness import Sandbox
from tests.support.sandbox import JP


def _stale(path: Path, age: float = 3600) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    old = time.time() - age
    os.utime(path, (old, old))


def _project(tmp_path: Path) -> Sandbox:
    """A sandbox whose store is a project's own repository (`jp init --here`)."""
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    box = Sandbox(tmp_path / "box", env={"JP_STORE": str(project / ".git")})
    proc = subprocess.run(
        [str(JP), "init", "--here"],
        cwd=project,
        env={k: v for k, v in box.env.items() if k != "JP_STORE"},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    box.store = project / ".git"
    return box


def test_doctor_fix_leaves_gits_own_locks_in_a_project(tmp_path: Path) -> None:
    box = _project(tmp_path)
    cid = box.ok("conversation", "new").split()[0]
    ours = box.store / "refs" / "conversations" / f"{cid}.lock"
    gits = [box.store / "index.lock", box.store / "refs" / "heads" / "main.lock"]
    for path in [ours, *gits]:
        _stale(path)
    found = json.loads(box.run("-F", "json", "doctor").stdout)["findings"]
    named = {f["problem"].split()[0]: f for f in found if f["check"] == "lock"}
    assert "index.lock" in named and not named["index.lock"]["fixable"], named
    assert "git commit" in named["index.lock"]["fix"]
    box.run("doctor", "--fix")
    assert not ours.exists(), "a stale lock of jp's own ref stayed"
    for path in gits:
        assert path.exists(), f"--fix removed git's own {path.name}"


def test_a_damaged_packed_refs_is_named_and_rebuilt_from_what_survives(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    made = [box.new(f"conversation {n}") for n in range(3)]
    box.ok("conversation", "archive", "--yes", made[0])
    box.git("pack-refs", "--all")
    before = box.refs("refs/conversations", "refs/archive/conversations")
    packed = box.store / "packed-refs"
    data = packed.read_bytes()
    packed.write_bytes(data[: data.index(made[1].encode()) - 20])  # cut in a line
    assert "packed-refs" in box.fail("conversation", "archive", "--yes", made[1]).stderr
    for args in (("q", "--new", "during"), ("conversation", "use", made[2])):
        proc = box.run(*args)
        assert "internal error" not in proc.stderr, proc.stderr
    found = json.loads(box.run("-F", "json", "doctor").stdout)["findings"]
    (finding,) = [f for f in found if f["check"] == "packed-refs"]
    assert finding["fixable"] and "cut short" in finding["problem"], finding
    box.ok("doctor", "--fix")
    after = box.refs("refs/conversations", "refs/archive/conversations")
    assert {k: v for k, v in after.items() if k in before} == before  # the lost ones back
    assert "refs/jp/oplog" in box.refs("refs/jp")
    box.ok("doctor")
    box.fsck()
    box.ok("conversation", "archive", "--yes", made[1])


def test_doctor_fix_rebuilding_packed_refs_is_an_operation_undo_reverses(tmp_path: Path) -> None:
    """The refs `--fix` brings back from their reflogs are one operation: `jp op log`
    lists it with those refs, and `jp undo` takes them away again (as they were)."""
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    made = [box.new(f"conversation {n}") for n in range(3)]
    box.git("pack-refs", "--all")
    packed = box.store / "packed-refs"
    data = packed.read_bytes()
    packed.write_bytes(data[: data.index(made[1].encode()) - 20])  # cut in a line
    whole = packed.read_bytes().split(b"\n")[:-1]  # the lines the cut left whole
    pairs = [line.decode().split(" ", 1) for line in whole if line[:1] not in (b"#", b"^")]
    damaged = {name: oid for oid, name in pairs if name.startswith("refs/conversations/")}
    box.ok("doctor", "--fix")
    rebuilt = box.refs("refs/conversations")
    assert len(rebuilt) > len(damaged), "nothing was restored"
    newest = box.json("op", "log", "-n", "1")[0]
    assert newest["command"] == "jp doctor --fix", newest
    moved = {m["ref"]: (m["old"], m["new"]) for m in newest["refs"]}
    back = {ref: tip for ref, tip in rebuilt.items() if ref not in damaged}
    assert moved == {ref: (None, tip) for ref, tip in back.items()}, (moved, back)
    assert "doctor --fix" in box.ok("undo")
    assert box.refs("refs/conversations") == damaged
    box.ok("op", "restore", newest["id"])  # and back to how the repair left them
    assert box.refs("refs/conversations") == rebuilt
    box.fsck()


def test_a_garbage_line_in_packed_refs_stops_an_archive_before_anything_moves(
    tmp_path: Path,
) -> None:
    """Held-out case 26b: with a garbage line appended to `packed-refs`, an archive
    created the archived ref, then failed to delete the packed live one, and said the
    next command would repair it, which none did: the conversation stayed live and
    archived at once.  The move is now checked first: nothing moves, nothing is
    recorded, and the line names the fix, which works."""
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    made = [box.new(f"conversation {n}") for n in range(2)]
    box.git("pack-refs", "--all")
    before = box.refs("refs/conversations", "refs/archive/conversations")
    ops = box.json("op", "log")
    lines = len((box.store / "packed-refs").read_bytes().splitlines())
    with (box.store / "packed-refs").open("a") as packed:
        packed.write("garbage line\n")
    proc = box.fail("conversation", "archive", "--yes", made[0])
    assert proc.stderr.splitlines() == [
        f"error: store {box.store}: packed-refs is damaged (line {lines + 1} is not a ref: "
        "'garbage line'); nothing was changed; `jp doctor --fix` rebuilds it, then run "
        "this command again"
    ], proc.stderr
    assert not (box.store / "refs" / "archive").exists(), "the archived ref was made"
    assert not any((box.store / "jp" / "ops").glob("*.json")), "a journal was left"
    assert box.json("op", "log") == ops, "an operation was recorded for nothing"
    assert {r["id"] for r in box.json("conversation", "ls")} == set(made)
    box.ok("doctor", "--fix")
    assert box.refs("refs/conversations", "refs/archive/conversations") == before
    box.ok("conversation", "archive", "--yes", made[0])
    assert {r["id"] for r in box.json("conversation", "ls")} == {made[1]}
    assert {r["id"] for r in box.json("conversation", "ls", "--archived")} == {made[0]}
    box.fsck()
