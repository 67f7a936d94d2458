"""A namespace of gitstore's face: files written or moved into place whole, and
waits retried (``gitstore/fs``, the one home of both; tests/unit/test_fs_rules.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstore.lazy import face

if TYPE_CHECKING:
    from gitstore.fs.atomic import replace as move_file
    from gitstore.fs.atomic import write as write_atomic
    from gitstore.fs.retry import jittered as retry_jittered
    from gitstore.fs.retry import until as retry_until

__all__: list[str]  # the names above, read from them when first asked for

if not TYPE_CHECKING:  # mypy reads the imports above; a misspelt name stays an error
    __getattr__, __dir__ = face(__name__, __file__)
