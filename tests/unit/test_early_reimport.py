"""The early answer's reading of a command line: what it knows whole, and everything
it leaves to the whole command (porcelain/early/reimport.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from porcelain.early import session_reimport
from porcelain.early.reimport import Request, answer, parse

IMPORT = ["conversation", "import", "--from", "claude-code"]


@pytest.mark.parametrize(
    ("argv", "wanted"),
    [
        (IMPORT, Request("claude-code", (), False, "text", None)),
        ([*IMPORT, "a", "b"], Request("claude-code", (Path("a"), Path("b")), False, "text", None)),
        (["c", "import", "--from=codex", "-q"], Request("codex", (), True, "text", None)),
        (["-F", "json", *IMPORT], Request("claude-code", (), False, "json", None)),
        (
            [*IMPORT, "--format=json", "--store", "s"],
            Request("claude-code", (), False, "json", "s"),
        ),
        (
            ["--store=s", "-y", "conversations", "import", "--from", "codex", "--quiet", "x"],
            Request("codex", (Path("x"),), True, "text", "s"),
        ),
    ],
)
def test_the_command_lines_it_answers(argv: list[str], wanted: Request) -> None:
    assert parse(argv) == wanted


@pytest.mark.parametrize(
    "argv",
    [
        ["conversation", "import", "x"],  # no --from: detected by the whole command
        ["conversation", "--from", "codex", "import"],  # --from belongs to import
        [*IMPORT[:3], "jp"],  # JP folders
        [*IMPORT[:3], "claude"],
        [*IMPORT, "--since", "1h"],
        [*IMPORT, "--activate"],
        ["-c", "x.toml", *IMPORT],
        ["--cfg", "a=b", *IMPORT],
        [*IMPORT, "-F", "json", "-F", "text"],
        [*IMPORT, "--from", "codex"],
        [*IMPORT, "-q", "-q"],
        [*IMPORT, "-F=json"],
        [*IMPORT, "-F", "yaml"],
        [*IMPORT, "--store="],
        [*IMPORT, "--store"],
        [*IMPORT, "--", "x"],
        [*IMPORT, ""],
        [*IMPORT, "-"],
        [*IMPORT, "--help"],
        [*IMPORT, "-y"],  # a global flag after the command: click refuses it
        [*IMPORT, "caf\udce9"],  # not UTF-8
        ["conversation", "export", "--from", "claude-code"],
        ["q", "import", "--from", "codex"],
    ],
)
def test_everything_else_goes_to_the_whole_command(argv: list[str]) -> None:
    assert parse(argv) is None


def test_testing_hooks_and_a_missing_store_go_to_the_whole_command(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "JP_STORE": str(tmp_path / "none.git")}
    assert answer(IMPORT, env) is None  # no store there
    assert answer(IMPORT, {**env, "JP_FAULT": "move:locked"}) is None
    assert session_reimport(["conversation", "ls"]) is None  # not looked at
