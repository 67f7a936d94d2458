"""gitstore's face (``gitstore/__init__.py``): what it lists, and that it costs nothing."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import gitstore

ROOT = Path(__file__).resolve().parents[3]


def _checked_imports() -> dict[str, str]:
    """name -> "module:attr" of the ``if TYPE_CHECKING:`` imports mypy reads."""
    tree = ast.parse((ROOT / "gitstore" / "__init__.py").read_text())
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                for alias in imp.names:
                    out[alias.asname or alias.name] = f"{imp.module}:{alias.name}"
    return out


def test_what_mypy_reads_is_what_the_face_gives() -> None:
    checked = _checked_imports()
    assert sorted(checked) == sorted(gitstore.__all__)
    for name, where in checked.items():
        module, attr = where.split(":")
        assert getattr(gitstore, name) is getattr(__import__(module, fromlist=[attr]), attr)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        gitstore.Nothing  # noqa: B018
    with pytest.raises(ImportError):
        from gitstore import Nothing  # type: ignore[attr-defined]  # noqa: F401


PROBE = """
import json, sys
import gitstore
before = sorted(m for m in sys.modules if m.startswith("gitstore."))
from gitstore import Store, Event, turn_count
after = sorted(m for m in sys.modules if m.split(".")[0] in ("gitstore", "pygit2", "pydantic"))
print(json.dumps({"before": before, "after": after}))
"""


def test_importing_the_face_loads_nothing_and_a_name_loads_only_its_part() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, cwd=ROOT
    )
    seen = json.loads(out.stdout)
    assert seen["before"] == []
    loaded = set(seen["after"])
    assert "gitstore.store.core" in loaded
    assert not {"gitstore.sync.pull", "gitstore.events.schema", "pydantic"} & loaded
    assert "pygit2._pygit2" not in loaded  # bound lazily
