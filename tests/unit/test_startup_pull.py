"""A pull with nothing to do loads neither libgit2, nor click, nor the store, its
cache or its writing half (porcelain/early/pull.py); a pull that has something to
do does.  The probe runs jp's entry point in a fresh interpreter, then names the
modules of ``HEAVY`` that were executed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.sandbox import ROOT, TIMEOUT, TRACEBACK
from tests.support.sync_machine import Machine

HEAVY = (
    "pygit2",
    "click",
    "gitstore.store.core",
    "gitstore.cache",
    "gitstore.sync.pull",
    "gitstore.store.packwrite",
    "porcelain.config",
    "porcelain.cli",
)
PROBE = """
import sys, types
from porcelain.early import main
sys.argv = ["jp", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
ran = [n for n in HEAVY if type(sys.modules.get(n)) is types.ModuleType] or ["-"]
sys.stderr.write(f"\\nPROBE code={code} loaded={','.join(ran)}\\n")
"""


def _loaded(machine: Machine, *args: str) -> tuple[str, set[str]]:
    code = PROBE.replace("HEAVY", repr(HEAVY))
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=machine.env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        input="",
    )
    assert TRACEBACK not in proc.stderr, proc.stderr
    fields = dict(item.split("=", 1) for item in proc.stderr.strip().splitlines()[-1].split()[1:])
    assert fields["code"] in ("0", "None"), proc.stderr
    return proc.stdout, set(fields["loaded"].split(",")) - {"-"}


def test_a_noop_pull_loads_nothing_heavy(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    laptop, desktop = Machine(tmp_path / "laptop", remote), Machine(tmp_path / "desktop", remote)
    laptop.new("startup")
    laptop.ok("push")
    desktop.ok("pull")
    state = desktop.store / "jp" / "journal" / "origin.json"
    state.write_text(json.dumps({"pulls": 0, "refs": 5000}))  # a large remote's count
    out, heavy = _loaded(desktop, "pull")
    assert out == "Already up to date with origin.\n"
    assert heavy == set()
    laptop.ok("q", "MOVED")
    laptop.ok("push")
    out, heavy = _loaded(desktop, "pull")
    assert "updated from origin" in out
    assert {"pygit2", "click", "gitstore.sync.pull", "porcelain.cli"} <= heavy, (
        "the probe sees them"
    )
