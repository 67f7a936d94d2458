"""A namespace of gitstore's face: talking to a remote (a pull through
``open_sync``'s ``Syncer``, a push, a share, a delete, what a remote holds)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstore.lazy import face

if TYPE_CHECKING:
    from gitstore.sync.delete import (
        delete_on_remote,
        remote_has,
        remotes_containing,
        remotes_holding,
    )
    from gitstore.sync.notes import replace_unsent_meta
    from gitstore.sync.pull import Outcome, Syncer, open_sync
    from gitstore.sync.pull_quick import nothing_to_pull
    from gitstore.sync.push import push
    from gitstore.sync.shared import Shared, share_on_remote, shared_record, unshare_on_remote

__all__: list[str]  # the names above, read from them when first asked for

if not TYPE_CHECKING:  # mypy reads the imports above; a misspelt name stays an error
    __getattr__, __dir__ = face(__name__, __file__)
