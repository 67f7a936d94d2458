"""The layering rules of docs/architecture.md, checked on the source."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN_IN_GITSTORE = {"click", "anthropic", "tomlkit", "porcelain"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def _calls(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            names.add(node.func.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            names.add(f"{node.value.id}.{node.attr}")
    return names


def test_gitstore_never_imports_the_porcelain_side() -> None:
    for path in sorted((ROOT / "gitstore").rglob("*.py")):
        bad = _imports(path) & FORBIDDEN_IN_GITSTORE
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_gitstore_never_prints_nor_reads_the_environment() -> None:
    for path in sorted((ROOT / "gitstore").rglob("*.py")):
        calls = _calls(path)
        assert "print" not in calls, f"{path.name} prints"
        assert "os.environ" not in calls and "os.getenv" not in calls, f"{path.name} reads env"


def test_only_the_sdk_adapters_import_an_sdk() -> None:
    """Each SDK is imported by its one adapter, and by the warm model process that
    imports it ahead of the calls; no other module of porcelain imports one."""
    for sdk in ("anthropic", "openai"):
        users = [
            p.relative_to(ROOT).as_posix()
            for p in sorted((ROOT / "porcelain").rglob("*.py"))
            if sdk in _imports(p)
        ]
        assert users == [f"porcelain/models/{sdk}_sdk.py", "porcelain/models/warm_server.py"]


def test_only_the_config_package_imports_tomlkit() -> None:
    users = {
        p.relative_to(ROOT).parts[1]
        for p in sorted((ROOT / "porcelain").rglob("*.py"))
        if "tomlkit" in _imports(p)
    }
    assert users <= {"config"}


def _gitstore_imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """Every import of gitstore in ``path``: (line, module, names), functions' and
    ``TYPE_CHECKING`` blocks' included."""
    found: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "gitstore":
                    found.append((node.lineno, alias.name, []))
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] == "gitstore"
        ):
            found.append((node.lineno, node.module, [a.name for a in node.names]))
    return found


def test_porcelain_uses_gitstore_only_through_its_face() -> None:
    """``from gitstore import X`` with X in ``gitstore.__all__``; never a submodule."""
    import gitstore

    face = set(gitstore.__all__)
    bad: list[str] = []
    for path in sorted((ROOT / "porcelain").rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        for line, module, names in _gitstore_imports(path):
            if module != "gitstore" or not names:
                bad.append(f"{where}:{line} imports {module}")
            for name in names:
                if name not in face:
                    bad.append(f"{where}:{line} imports gitstore.{name}, not in __all__")
    assert not bad, "\n".join(bad)


def test_the_face_names_only_what_it_can_give() -> None:
    import gitstore

    assert len(set(gitstore.__all__)) == len(gitstore.__all__)
    for name in gitstore.__all__:
        assert getattr(gitstore, name) is not None, name
    # no submodule is a name of the face: porcelain never holds a module of gitstore
    assert not any(isinstance(getattr(gitstore, n), type(gitstore)) for n in gitstore.__all__)
