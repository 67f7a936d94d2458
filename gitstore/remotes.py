"""A namespace of gitstore's face: a store's remotes configured (added, removed,
found, listed; names and URLs checked, URLs redacted for showing)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstore.lazy import face

if TYPE_CHECKING:
    from gitstore.git.command import redact as redact_url
    from gitstore.sync.remotespecs import check_name, check_url
    from gitstore.sync.remotestate import add, default, find, listing, remove

__all__: list[str]  # the names above, read from them when first asked for

if not TYPE_CHECKING:  # mypy reads the imports above; a misspelt name stays an error
    __getattr__, __dir__ = face(__name__, __file__)
