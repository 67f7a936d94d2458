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
