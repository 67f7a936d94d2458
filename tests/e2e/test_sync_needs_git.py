"""jp requires git (docs/sync.md): without it, or with one older than 2.29, a sync
fails at once with one line that says so and what to do, and `jp doctor` names
it; nothing falls back to another transport."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.sandbox import JP
from tests.support.sync_machine import Machine


def _without_git(machine: Machine, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(machine.env, PATH=str(folder))
    proc = subprocess.run(
        [str(JP), *args], env=env, cwd=machine.root, text=True, capture_output=True, timeout=120
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.mark.parametrize("git", ["missing", "old"])
def test_sync_and_doctor_name_a_missing_or_old_git(tmp_path: Path, git: str) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    machine = Machine(tmp_path / "m", remote)
    machine.new("kept here")
    folder = tmp_path / "bin"
    folder.mkdir()
    said = "git was not found on PATH"
    if git == "old":
        fake = folder / "git"
        fake.write_text("#!/bin/sh\necho 'git version 2.20.1'\n")
        fake.chmod(0o755)
        said = "git 2.20 is older than 2.29"
    for verb in ("pull", "push", "sync"):
        proc = _without_git(machine, folder, verb)
        assert proc.returncode == 1, proc.stderr
        lines = proc.stderr.splitlines()
        assert lines[0].startswith(f"error: cannot sync: {said}; jp needs git 2.29"), lines
        assert len(lines) == 2 and "install git" in lines[1], lines
    assert subprocess.run(
        ["git", "--git-dir", str(remote), "for-each-ref"], capture_output=True, text=True
    ).stdout == "", "nothing was sent another way"
    doctor = _without_git(machine, folder, "doctor", "--no-fsck")
    assert doctor.returncode == 1
    assert f"problem: {said}" in doctor.stdout, doctor.stdout
