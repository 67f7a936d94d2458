"""No circle of imports inside ``porcelain.models`` (every module of the package
imports only modules below it: ``factory`` on top, ``base`` at the floor) nor
inside ``gitstore.sync`` (a module that took the whole ``Syncer`` back from
the module that holds it made one).

Imports inside functions and under ``TYPE_CHECKING`` count too: a lazy import
is still an arrow, and a circle through one is a tangle all the same.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _arrows(package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports, anywhere in its text."""
    folder = ROOT.joinpath(*package.split("."))
    modules = {_module_of(p): p for p in sorted(folder.rglob("*.py"))}
    arrows: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = {f"{node.module}.{a.name}" for a in node.names}
                named = subs & modules.keys()  # from package import submodule
                found |= named or {node.module}
                if len(named) < len(subs):
                    found.add(node.module)
        arrows[name] = {m for m in found if m in modules and m != name}
    return arrows


def _circles(arrows: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each module that is on one (depth first)."""
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(arrows[module]):
            if state.get(target) == 1:
                circles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(arrows):
        if module not in state:
            visit(module)
    return circles


def test_models_has_no_circle() -> None:
    circles = _circles(_arrows("porcelain.models"))
    assert not circles, "\n".join(" -> ".join(c) for c in circles)


def test_gitstore_has_no_circle() -> None:
    circles = _circles(_arrows("gitstore"))
    assert not circles, "\n".join(" -> ".join(c) for c in circles)


def test_the_check_finds_a_circle() -> None:
    arrows = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(arrows) == [["a", "b", "c", "a"]]
