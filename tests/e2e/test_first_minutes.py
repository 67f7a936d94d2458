"""The first minutes of a new user: a bare command group shows its help."""

from __future__ import annotations

import pytest

from tests.e2e.harness import User


@pytest.mark.parametrize("group", ["", "conversation", "remote", "config", "op", "model"])
def test_a_bare_group_prints_its_help_and_succeeds(user: User, group: str) -> None:
    args = [group] if group else []
    proc = user.run(*args)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", "a bare group wrote to stderr"
    assert proc.stdout.startswith("Usage: jp"), proc.stdout
    assert "Commands:" in proc.stdout
    lines = proc.stdout.splitlines()
    assert len(lines) >= 8 and max(map(len, lines)) <= 120, proc.stdout
    assert proc.stdout == user.ok(*args, "--help"), "the bare help differs from --help"
