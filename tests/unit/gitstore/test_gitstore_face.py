"""gitstore's face (``gitstore/__init__.py``): what it lists, and that it costs nothing."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import gitstore

ROOT = Path(__file__).resolve().parents[3]


def _checked_imports(path: Path) -> dict[str, str]:
    """name -> "module:attr" of the ``if TYPE_CHECKING:`` imports mypy reads in ``path``."""
    tree = ast.parse(path.read_text())
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                for alias in imp.names:
                    out[alias.asname or alias.name] = f"{imp.module}:{alias.name}"
    return out


def _namespaces() -> list[ModuleType]:
    return [m for n in gitstore.__all__ if isinstance(m := getattr(gitstore, n), ModuleType)]


def _faces() -> list[ModuleType]:
    """The face and its namespaces that give their names lazily, as it does."""
    lazy = [m for m in _namespaces() if "__getattr__" in vars(m)]
    return [gitstore, *lazy]


def test_what_mypy_reads_is_what_the_face_gives() -> None:
    for face in _faces():
        assert face.__file__ is not None
        checked = _checked_imports(Path(face.__file__))
        assert sorted(checked) == sorted(face.__all__), face.__name__
        for name, where in checked.items():
            module, attr = where.split(":")
            if module == "gitstore":  # a namespace: a module of gitstore
                assert getattr(face, name) is importlib.import_module(f"gitstore.{attr}")
            else:
                assert getattr(face, name) is getattr(importlib.import_module(module), attr)


def test_the_face_stays_small_and_its_namespaces_are_modules_of_gitstore() -> None:
    """Under 60 names (issue 45); a family of names is one, a namespace."""
    assert len(gitstore.__all__) < 60
    assert len(set(gitstore.__all__)) == len(gitstore.__all__)
    names = {m.__name__ for m in _namespaces()}
    assert {"gitstore.errors", "gitstore.syncing", "gitstore.files"} <= names
    for face in _faces()[1:]:
        assert not any(isinstance(getattr(face, n), ModuleType) for n in face.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        gitstore.Nothing  # noqa: B018
    with pytest.raises(ImportError):
        from gitstore import Nothing  # type: ignore[attr-defined]  # noqa: F401
    from gitstore import syncing

    with pytest.raises(AttributeError, match="'gitstore.syncing' has no attribute 'pull'"):
        syncing.pull  # noqa: B018
    assert "push" in dir(syncing) and "errors" in dir(gitstore)


PROBE = """
import json, sys
import gitstore
before = sorted(m for m in sys.modules if m.startswith("gitstore."))
from gitstore import Store, Event, errors, syncing, turns
turns.turn_count
after = sorted(m for m in sys.modules if m.split(".")[0] in ("gitstore", "pygit2", "pydantic"))
print(json.dumps({"before": before, "after": after}))
"""


def test_importing_the_face_loads_nothing_and_a_name_loads_only_its_part() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, cwd=ROOT
    )
    seen = json.loads(out.stdout)
    assert seen["before"] == ["gitstore.lazy"]  # what gives the names, and nothing else
    loaded = set(seen["after"])
    assert {"gitstore.store.core", "gitstore.events.turns", "gitstore.syncing"} <= loaded
    assert not any(m.startswith("gitstore.sync.") for m in loaded)  # a namespace held, unused
    assert not {"gitstore.sync.pull", "pydantic"} & loaded
    assert "pygit2._pygit2" not in loaded  # bound lazily
