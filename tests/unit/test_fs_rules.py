"""One home for retry loops and temp-and-rename writes: ``gitstore/fs``.

A loop that sleeps between tries is ``gitstore.fs.retry``'s (``until``,
``before``, ``jittered``, ``growing``, ``pausing``, ``tries``); a file moved
into place by a rename is ``gitstore.fs.atomic``'s (``write``, ``replace``).
Anywhere else in gitstore, porcelain or bench either one fails this test (the
benchmarks' baselines rename through ``fs.atomic.replace``, one ``os.replace`` as before).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "gitstore" / "fs"
RENAMES = {("os", "replace"), ("os", "rename")}


def _called(node: ast.Call) -> tuple[str, str] | None:
    func = node.func
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else ""
        return owner, func.attr
    if isinstance(func, ast.Name):
        return "", func.id
    return None


def violations(source: str, where: str) -> list[str]:
    """What in ``source`` belongs in ``gitstore/fs``: a sleep inside a loop, a rename."""
    found: list[str] = []
    tree = ast.parse(source)
    for loop in ast.walk(tree):
        if not isinstance(loop, (ast.For, ast.While, ast.AsyncFor)):
            continue
        for node in ast.walk(loop):
            if isinstance(node, ast.Call) and (_called(node) or ("", ""))[1] == "sleep":
                found.append(f"{where}:{node.lineno}: a retry loop that sleeps (use fs.retry)")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _called(node)
        if name in RENAMES or (name is not None and name[1] == "rename"):
            found.append(f"{where}:{node.lineno}: a rename into place (use fs.atomic)")
    return sorted(set(found))


def _sources() -> list[Path]:
    files = [p for top in ("gitstore", "porcelain", "bench") for p in (ROOT / top).rglob("*.py")]
    return [p for p in files if HOME not in p.parents]


def test_retry_loops_and_renames_live_only_in_gitstore_fs() -> None:
    found = [v for p in _sources() for v in violations(p.read_text(), str(p.relative_to(ROOT)))]
    assert found == []


def test_a_planted_sleeping_loop_or_rename_fails_the_check() -> None:
    planted = """
import os, time
from pathlib import Path

def wait(path):
    while not path.exists():
        time.sleep(0.1)

def tries():
    for _ in range(5):
        sleep(0.01)

def put(tmp, path):
    os.replace(tmp, path)
    Path(tmp).rename(path)
"""
    found = violations(planted, "planted.py")
    assert found == [
        "planted.py:11: a retry loop that sleeps (use fs.retry)",
        "planted.py:14: a rename into place (use fs.atomic)",
        "planted.py:15: a rename into place (use fs.atomic)",
        "planted.py:7: a retry loop that sleeps (use fs.retry)",
    ]


def test_a_single_wait_or_a_string_replace_is_no_violation() -> None:
    fine = """
import time

def settle(text):
    time.sleep(0.2)
    return [t.replace("a", "b") for t in text]
"""
    assert violations(fine, "fine.py") == []
