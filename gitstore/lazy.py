"""libgit2 loaded on first use.

Importing pygit2 costs about half of a read-only command's start-up.  The
modules on the read path (``store``, ``notes``, ``repo``, ``transaction``,
``maintenance``) bind the name ``pygit2`` to ``lazy_module("pygit2")``, so it
loads when a command first touches git objects; on a warm cache, ``show``,
``print`` and ``ls`` read refs as files and everything else from the cache,
and never do.  The store's writing half (``store.packwrite``, the bulk pack
writer, with ``subprocess`` and ``hashlib``) is bound the same way
where a hot path calls it, so a read-only command never loads it either.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


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
