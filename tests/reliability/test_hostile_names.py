"""Hostile names and arguments: ids and remote names never become unchecked ref
names or paths, and a model's tool arguments never reach a shell (the inputs
that are whole files and texts: ``test_hostile``)."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitstore import ids
from gitstore.errors import GitStoreError
from gitstore.git import refs
from porcelain.app.query.tools import ToolCall, run_command

ROOT = Path(__file__).resolve().parents[2]

# -- ids and names never become unchecked ref names or paths -----------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=40), st.from_regex(r"jp-c[0-9]{1,22}(-[0-9a-z]{0,33})?\n?")))
def test_ids_are_safe_ref_components_and_file_names(text: str) -> None:
    if not ids.is_valid(text):
        with pytest.raises(GitStoreError):
            refs.live(text)
        return
    assert pygit2.reference_is_valid_name(refs.live(text))
    assert pygit2.reference_is_valid_name(refs.archived(text))
    assert Path(text).name == text and text not in (".", "..") and text.isprintable()
    assert not any(c.isspace() for c in text)


def test_every_ref_name_is_built_from_a_checked_id() -> None:
    """The only places that put a conversation id into a ref name go through ids.check."""
    tree = ast.parse((ROOT / "gitstore" / "git" / "refs" / "__init__.py").read_text())
    builders = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef) and n.name in ("live", "archived")
    ]
    for fn in builders:
        assert "ids.check" in ast.unparse(fn), fn.name
    for path in sorted((ROOT / "porcelain").rglob("*.py")) + sorted(
        (ROOT / "gitstore").rglob("*.py")
    ):
        text = path.read_text()
        for needle in ('f"refs/conversations/', 'f"refs/archive/conversations/'):
            assert needle not in text, f"{path.name} builds a conversation ref by hand"


def test_remote_names_are_checked_whole() -> None:
    from gitstore.sync.remotes import check_name

    with pytest.raises(GitStoreError):
        check_name("origin\n")


# -- a model's tool arguments never reach a shell ------------------------------------------

SPY = "import json, sys; json.dump({'argv': sys.argv[1:], 'stdin': sys.stdin.read()}, sys.stdout)"


@settings(max_examples=15, deadline=None)
@given(arguments=st.dictionaries(
    st.text(max_size=8),
    st.one_of(st.text(max_size=30), st.sampled_from(
        ["$(touch pwned)", "`touch pwned`", "; touch pwned", "| touch pwned", "&& touch pwned",
         "'; rm -rf / #", '"$HOME"', "\n touch pwned", "${IFS}"])),
    max_size=4,
))  # fmt: skip
def test_tool_arguments_reach_the_command_as_json_on_stdin(
    tmp_path_factory: pytest.TempPathFactory, arguments: dict[str, str]
) -> None:
    table = {"command": [sys.executable, "-c", SPY, "fixed-arg"], "timeout": 20}
    outcome = run_command("spy", table, ToolCall("toolu_1", "spy", arguments))
    assert not outcome.is_error, outcome.content
    seen = json.loads(outcome.content)
    assert seen["argv"] == ["fixed-arg"]  # the configured argv, untouched
    assert json.loads(seen["stdin"]) == arguments  # the model's arguments: data only


def test_no_shell_anywhere() -> None:
    """No subprocess call in jp runs through a shell."""
    for path in sorted((ROOT / "porcelain").rglob("*.py")) + sorted(
        (ROOT / "gitstore").rglob("*.py")
    ):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = ast.unparse(node.func)
                assert name not in ("os.system", "os.popen", "subprocess.getoutput"), (path, name)
                for kw in node.keywords:
                    if kw.arg == "shell":
                        assert isinstance(kw.value, ast.Constant) and kw.value.value is False, path
