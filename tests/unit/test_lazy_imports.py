"""Every import inside a function of porcelain says why it is there.

An import belongs at the top of its module; one inside a function keeps
start-up cheap or breaks a load order, and says so on the line above (or on
its own line): ``# lazy: reason``.  Consecutive imports under one comment
share it.  ``TYPE_CHECKING`` blocks are not functions and need no reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARK = "# lazy:"


def _function_imports(tree: ast.AST) -> list[ast.stmt]:
    found: list[ast.stmt] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    found.append(inner)
    return found


def unexplained(path: Path) -> list[int]:
    """Lines of ``path``'s function-local imports that carry no reason."""
    lines = path.read_text().splitlines()
    bad: list[int] = []
    for node in _function_imports(ast.parse("\n".join(lines))):
        if MARK in lines[node.lineno - 1]:
            continue
        above = node.lineno - 2
        while above >= 0:
            text = lines[above].strip()
            if not text or text.startswith(("import ", "from ", ")")):
                above -= 1  # an import of the same group (or a blank between them)
                continue
            if text.startswith("#") and MARK not in text:
                above -= 1  # a comment line under the reason
                continue
            break
        if above < 0 or MARK not in lines[above]:
            bad.append(node.lineno)
    return sorted(set(bad))


def test_every_function_local_import_says_why() -> None:
    found = []
    for path in sorted((ROOT / "porcelain").rglob("*.py")):
        lines = unexplained(path)
        if lines:
            found.append(f"{path.relative_to(ROOT).as_posix()}:{lines}")
    assert not found, "function-local imports without `# lazy: reason`:\n" + "\n".join(found)


def test_the_check_sees_a_bare_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "def f():\n"
        "    # lazy: start-up\n"
        "    import json\n"
        "    import os\n"
        "\n"
        "def g():\n"
        "    x = 1\n"
        "    import re\n"
        "    return x\n"
    )
    assert unexplained(module) == [8]
