"""A namespace of gitstore's face: which conversation was made active when, and
the commits accepted from outside a store (files of the store's own)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstore.lazy import face

if TYPE_CHECKING:
    from gitstore.store.activity import (
        accept_commits,
        accepted_commits,
        activations,
        record_activation,
    )

__all__: list[str]  # the names above, read from them when first asked for

if not TYPE_CHECKING:  # mypy reads the imports above; a misspelt name stays an error
    __getattr__, __dir__ = face(__name__, __file__)
