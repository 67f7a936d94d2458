"""libgit2 loaded on first use.

Importing pygit2 costs about half of a read-only command's start-up.  The
modules on the read path (``store``, ``notes``, ``repo``, ``transaction``,
``maintenance``) bind the name ``pygit2`` to ``lazy_module("pygit2")``, so it
loads when a command first touches git objects; on a warm cache, ``show``,
``print`` and ``ls`` read refs as files and everything else from the cache,
and never do.  The store's writing half (``store.packwrite``, the bulk pack
writer, with ``subprocess`` and ``hashlib``) is bound the same way
where a hot path calls it, so a read-only command never loads it either.

The same holds one level up: gitstore's face (``__init__.py``) and its
namespaces give each name through ``face``, which imports it from where it
lives only when it is first asked for.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any


def lazy_module(name: str) -> ModuleType:
    """``name`` as a module that is imported at its first attribute access."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {name!r}")
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:  # as an import does: ``package.child`` names it too
        setattr(sys.modules[parent], child, module)
    return module


# -- a face: names imported from where they live when first asked for --------------------

_BLOCK = re.compile(r"^if TYPE_CHECKING:\n((?:(?:    [^\n]*)?\n)*)", re.M)
_FROM = re.compile(r"^    from (gitstore[\w.]*) import (\([^)]*\)|[^\n]*)", re.M)


def _where(path: str) -> dict[str, tuple[str, str]]:
    """name -> (module, name there), read from the ``if TYPE_CHECKING:`` imports
    of the file at ``path``: what mypy reads is what is given."""
    block = _BLOCK.search(Path(path).read_text(encoding="utf-8"))
    where: dict[str, tuple[str, str]] = {}
    for module, names in _FROM.findall(block.group(1) if block else ""):
        for item in names.strip("()").split(","):
            attr, _, alias = item.strip().partition(" as ")
            if attr:
                where[alias or attr] = (module, attr)
    return where


def face(name: str, path: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """PEP 562's ``__getattr__`` and ``__dir__`` for the module ``name`` at
    ``path``, a face of gitstore (``gitstore/__init__.py`` and its namespaces).

    Its names are written once, as its ``if TYPE_CHECKING:`` imports (what mypy
    reads; pyproject.toml lets those modules re-export what they import).  A name
    is imported from where it lives when it is first asked for, and kept; a name
    imported from ``gitstore`` itself is a namespace, a module of gitstore.
    ``__all__`` is the list of the names, found when first asked for too, so
    importing a face reads nothing."""
    where: dict[str, tuple[str, str]] = {}

    def table() -> dict[str, tuple[str, str]]:
        if not where:
            where.update(_where(path))
        return where

    def attribute(wanted: str) -> Any:
        if wanted == "__all__":
            value: Any = list(table())
        elif wanted not in table():
            raise AttributeError(f"module {name!r} has no attribute {wanted!r}")
        else:
            module, attr = table()[wanted]
            if module == "gitstore":
                value = importlib.import_module(f"gitstore.{attr}")
            else:
                value = getattr(importlib.import_module(module), attr)
        setattr(sys.modules[name], wanted, value)  # asked for once
        return value

    def listing() -> list[str]:
        return sorted({*vars(sys.modules[name]), *table()})

    return attribute, listing


def loaded(name: str) -> bool:
    """Whether the module ``name`` is imported in this process (one bound by
    ``lazy_module`` only once something of it was asked for)."""
    module = sys.modules.get(name)
    return module is not None and type(module).__name__ != "_LazyModule"
