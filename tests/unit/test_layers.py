"""The layering rules of docs/architecture.md, checked on the source."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

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
    """``from gitstore import X`` with X in ``gitstore.__all__`` (a namespace among
    them, used as ``X.name``); never ``gitstore.sub`` nor ``from gitstore.sub``."""
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
    # a module on the face is a namespace: a module file of gitstore's own top, never
    # one of its subpackages (porcelain never holds gitstore's insides)
    for name in gitstore.__all__:
        value = getattr(gitstore, name)
        if isinstance(value, type(gitstore)):
            assert value.__name__ == f"gitstore.{name}"
            assert value.__file__ == str(ROOT / "gitstore" / f"{name}.py"), name


# -- gitstore's floors --------------------------------------------------------------------


def _gitstore_floors() -> dict[str, Any]:
    """The contract of ``pyproject.toml`` that layers gitstore's own parts."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    found = [c for c in contracts if c.get("containers") == ["gitstore"]]
    assert len(found) == 1, "one layers contract has gitstore as its container"
    return dict(found[0])


def test_every_part_of_gitstore_stands_on_a_floor() -> None:
    """A module or package added to gitstore without a floor would escape the contract."""
    contract = _gitstore_floors()
    named = [n.strip() for floor in contract["layers"] for n in re.split(r"[|:]", floor)]
    parts = {
        p.stem if p.is_file() else p.name
        for p in (ROOT / "gitstore").iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").is_file()
    }
    assert len(named) == len(set(named))
    assert set(named) == parts


LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", "floors.toml"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_back_arrow_inside_gitstore_breaks_the_contract(tmp_path: Path) -> None:
    """The contract bites: the same copy of gitstore is kept, then broken by one import
    from a low floor (events) of a high one (sync)."""
    if not LINT_IMPORTS.is_file():
        pytest.skip("lint-imports is not installed beside this Python")
    shutil.copytree(ROOT / "gitstore", tmp_path / "gitstore", ignore=shutil.ignore_patterns("__pycache__"))
    contract = _gitstore_floors()
    layers = ", ".join(f'"{floor}"' for floor in contract["layers"])
    ignored = ", ".join(f'"{arrow}"' for arrow in contract.get("ignore_imports", []))
    (tmp_path / "floors.toml").write_text(
        '[tool.importlinter]\nroot_package = "gitstore"\n\n'
        "[[tool.importlinter.contracts]]\n"
        f'name = "floors"\ntype = "layers"\ncontainers = ["gitstore"]\nlayers = [{layers}]\n'
        f"ignore_imports = [{ignored}]\n"
    )
    kept = _lint(tmp_path)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    low = tmp_path / "gitstore" / "events" / "turns.py"
    low.write_text(low.read_text() + "\nfrom gitstore.sync import pull  # noqa: E402\n")
    broken = _lint(tmp_path)
    assert broken.returncode != 0
    assert "gitstore.events.turns -> gitstore.sync.pull" in broken.stdout


# -- the Store's face -----------------------------------------------------------------------

STORE_PARTS = {"log", "refs", "notes", "local", "ops"}
# what a store was opened with and on, and opening's own acts (docs/architecture.md)
STORE_OPENING = {"path", "gitdir", "repo", "place", "identity", "clock", "limits", "format"}
STORE_OPENING |= {"repair", "close"}
# the repository and its directory, alone or as one place (``fs/place.py``)
STORE_INSIDES = {"repo", "gitdir", "place"}
PORCELAIN_OPENING = STORE_OPENING - STORE_INSIDES  # porcelain never reaches libgit2 itself
# what takes its parts (``sync/here.py:Here``), not the repository and its directory
PARTS_TAKERS = ("gitstore/sync", "gitstore/undoing.py", "porcelain")
PATH_ONLY = {"name", "parent"}  # a store's path named `store` (commands/context.py)


def _store_uses(path: Path) -> set[tuple[int, str]]:
    """``store.X``, ``x.store.X`` and ``x.store().X`` in ``path``: (line, X)."""
    found: set[tuple[int, str]] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Attribute):
            continue
        held = node.value
        if isinstance(held, ast.Call):
            held = held.func
        if (isinstance(held, ast.Name) and held.id == "store") or (
            isinstance(held, ast.Attribute) and held.attr == "store"
        ):
            found.add((node.lineno, node.attr))
    return found


def test_the_store_shows_its_parts(tmp_path: Path) -> None:
    from gitstore import init_store
    from gitstore.store import parts
    from gitstore.store.core import Store

    init_store(tmp_path / "s.git")
    store = Store(tmp_path / "s.git")
    kinds = {"log": parts.Log, "refs": parts.Refs, "notes": parts.Notes}
    kinds |= {"local": parts.Local, "ops": parts.Ops}
    assert set(kinds) == STORE_PARTS
    for name, kind in kinds.items():
        assert isinstance(getattr(store, name), kind), name


def test_porcelain_holds_a_store_by_its_parts_and_its_opening() -> None:
    """Porcelain reads and writes through ``store.log``, ``.refs``, ``.notes``,
    ``.local`` and ``.ops``; of the store itself only what it was opened with."""
    bad = [
        f"{p.relative_to(ROOT).as_posix()}:{line} store.{name}"
        for p in sorted((ROOT / "porcelain").rglob("*.py"))
        for line, name in sorted(_store_uses(p))
        if name not in STORE_PARTS | PORCELAIN_OPENING | PATH_ONLY
    ]
    assert not bad, "\n".join(bad)


def _insides_reached(root: Path) -> list[str]:
    """Where the code under ``root`` reaches ``store.repo`` or ``store.gitdir``."""
    return [
        f"{p.relative_to(root).as_posix()}:{line} store.{name}"
        for top in PARTS_TAKERS
        for p in sorted((root / top).rglob("*.py") if (root / top).is_dir() else [root / top])
        for line, name in sorted(_store_uses(p))
        if name in {"repo", "gitdir"}
    ]


def test_sync_undo_and_porcelain_take_parts_not_the_repository() -> None:
    """A sync holds a ``Here`` (parts and a place), undo and porcelain hold the
    store's parts: none of them reaches ``store.repo`` or ``store.gitdir``."""
    bad = _insides_reached(ROOT)
    assert not bad, "\n".join(bad)


def test_a_reach_into_the_repository_is_caught(tmp_path: Path) -> None:
    """The check above fails on a planted ``store.repo`` (and ``syncer.store.gitdir``)."""
    for top in PARTS_TAKERS:
        target = tmp_path / top
        if top.endswith(".py"):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("def f(store):\n    return 1\n")
        else:
            target.mkdir(parents=True, exist_ok=True)
    assert _insides_reached(tmp_path) == []
    (tmp_path / "gitstore/sync/planted.py").write_text(
        "def f(store, syncer):\n    return store.repo, syncer.store.gitdir\n"
    )
    (tmp_path / "gitstore/undoing.py").write_text("def f(store):\n    return store.gitdir\n")
    assert _insides_reached(tmp_path) == [
        "gitstore/sync/planted.py:2 store.gitdir",
        "gitstore/sync/planted.py:2 store.repo",
        "gitstore/undoing.py:2 store.gitdir",
    ]


def test_the_store_is_its_parts_and_its_opening_and_nothing_more(tmp_path: Path) -> None:
    """A method or value added to ``Store`` beyond its opening fails here: it
    belongs in one of the parts (``gitstore/store/parts/``)."""
    from gitstore import init_store
    from gitstore.store.core import OPENING, Store

    init_store(tmp_path / "s.git")
    store = Store(tmp_path / "s.git")
    shown = {name for name in dir(store) if not name.startswith("_")}
    assert shown == STORE_PARTS | STORE_OPENING
    assert set(OPENING) == STORE_OPENING
    assert Store.__mro__ == (Store, object), "a store is no stack of layers"


def test_only_the_store_and_its_parts_reach_their_ground() -> None:
    """The shared state of a store's parts (``ground.py``: its cache, reader,
    repository) is reached only from ``gitstore/store/``."""
    bad = [
        f"{p.relative_to(ROOT).as_posix()}:{node.lineno} .{node.attr}"
        for top in ("gitstore", "porcelain")
        for p in sorted((ROOT / top).rglob("*.py"))
        if p.parent != ROOT / "gitstore" / "store" and "parts" not in p.parts
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in {"_ground", "_g"}
    ]
    assert not bad, "\n".join(bad)
