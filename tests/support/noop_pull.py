"""Two sealed machines synced through one remote, the second trusting the remote's
journal: the start of every test of a pull with nothing to do."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.sync_machine import Machine


def trust_journal(machine: Machine, pulls: int = 0) -> None:
    """The count a reconcile of a remote of 5,000 conversations leaves, ``pulls`` ago
    (the journal is trusted from 1,000 on: ``journalstate.JOURNAL_FROM``)."""
    state = machine.store / "jp" / "journal" / "origin.json"
    state.write_text(json.dumps({"pulls": pulls, "refs": 5000}))


def synced(root: Path, remote: Path | str | None = None) -> tuple[Machine, Machine, str]:
    """A laptop that pushed one conversation and a desktop that pulled it (a new bare
    remote under ``root`` unless one is given); returns them and the conversation."""
    if remote is None:
        remote = root / "remote.git"
        subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    laptop, desktop = Machine(root / "laptop", remote), Machine(root / "desktop", remote)
    cid = laptop.new("noop")
    laptop.ok("push")
    desktop.ok("pull")
    trust_journal(desktop)
    return laptop, desktop, cid
