"""One floor owns git's format: ``gitstore/git``.

No module of gitstore outside it opens a path git owns under the git directory
(``packed-refs``, ``objects/``, the ``config`` file) or starts a process (git
is run through ``gitstore.git.command``).  A path is caught where the module
spells it: a literal joined to a path (``gitdir / "objects"``,
``joinpath("packed-refs")``, ``Path("config")``, an f-string starting so); a
process where ``subprocess`` is called.

``EXCEPTIONS`` names the modules that cannot move yet, each with why; keep it
short, and take a module out as soon as it moves.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "gitstore" / "git"
OWNED = re.compile(r"^(packed-refs(\.lock|\.new)?|objects(/.*)?|config(\.lock)?)$")
SPAWNS = frozenset({"run", "Popen", "call", "check_call", "check_output"})
EXCEPTIONS = {
    "gitstore/fs/diskfault.py": "below the floor (git/ stands on fs/): names objects/ in a fault",
    "gitstore/sync/pull_quick.py": (
        "the no-op pull told from files before libgit2 or the floor's modules load "
        "(tests/unit/test_startup_pull.py): it reads config, packed-refs and objects/ itself"
    ),
}


def _segments(node: ast.AST) -> Iterator[ast.expr]:
    """The expressions ``node`` uses as a piece of a path."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        yield node.right
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in ("joinpath", "Path", "open", "with_name"):
            yield from node.args


def _spelled(segment: ast.expr) -> str | None:
    if isinstance(segment, ast.Constant) and isinstance(segment.value, str):
        return segment.value if OWNED.match(segment.value) else None
    if isinstance(segment, ast.JoinedStr) and segment.values:
        head = segment.values[0]
        if isinstance(head, ast.Constant) and OWNED.match(str(head.value).split("/")[0]):
            return str(head.value)
    return None


def violations(source: str, where: str) -> list[str]:
    """What in ``source`` belongs in ``gitstore/git``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        for segment in _segments(node):
            spelled = _spelled(segment)
            if spelled is not None:
                found.append(f"{where}:{segment.lineno}: opens {spelled!r} (use gitstore.git)")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "subprocess"
            and node.func.attr in SPAWNS
        ):
            found.append(f"{where}:{node.lineno}: starts a process (use gitstore.git.command)")
    return sorted(set(found))


def _sources() -> list[Path]:
    return [p for p in (ROOT / "gitstore").rglob("*.py") if HOME not in p.parents]


def test_only_the_git_floor_opens_git_paths_or_starts_git() -> None:
    found = []
    for path in _sources():
        where = str(path.relative_to(ROOT))
        if where not in EXCEPTIONS:
            found += violations(path.read_text(), where)
    assert found == []


def test_every_exception_is_still_needed() -> None:
    """An exception whose module moved (or went) is taken off the list."""
    for where in EXCEPTIONS:
        path = ROOT / where
        assert path.is_file() and violations(path.read_text(), where), where


def test_a_planted_git_path_or_process_fails_the_check() -> None:
    planted = """
import subprocess
from pathlib import Path

def peek(gitdir, oid):
    (gitdir / "packed-refs").read_bytes()
    (gitdir / "objects" / oid[:2]).is_dir()
    gitdir.joinpath("config").read_text()
    Path(gitdir, f"objects/pack/{oid}.idx").exists()
    (gitdir / "refs" / "heads").iterdir()  # a ref folder: refs/ names are read by files.py
    subprocess.run(["git", "gc"])
"""
    assert violations(planted, "planted.py") == [
        "planted.py:11: starts a process (use gitstore.git.command)",
        "planted.py:6: opens 'packed-refs' (use gitstore.git)",
        "planted.py:7: opens 'objects' (use gitstore.git)",
        "planted.py:8: opens 'config' (use gitstore.git)",
        "planted.py:9: opens 'objects/pack/' (use gitstore.git)",
    ]
