"""A namespace of gitstore's face: the operation log (an ``Op`` and its ref
``Move``s, shown) and taking an operation back (undo, restore)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstore.lazy import face

if TYPE_CHECKING:
    from gitstore.oplog.model import Move, Op
    from gitstore.oplog.model import printable as printable_command
    from gitstore.oplog.model import shown as ref_value
    from gitstore.undoing import restore, undo

__all__: list[str]  # the names above, read from them when first asked for

if not TYPE_CHECKING:  # mypy reads the imports above; a misspelt name stays an error
    __getattr__, __dir__ = face(__name__, __file__)
