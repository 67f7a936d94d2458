"""gitstore: conversations stored in git (the plumbing under ``porcelain``).

This module is the package's one public face.  Its names are written once, as
the ``if TYPE_CHECKING:`` imports below (what mypy reads); ``__all__`` is read
from them.  Each name is imported from where it lives only when it is first
asked for (PEP 562, ``lazy.face``), so ``import gitstore`` costs nothing and a
command loads only the parts it touches (``jp conversation ls`` on a warm
cache never loads libgit2 or the sync modules).

Beside the store's vocabulary (``Store``, ``Event``, ``Kind``, ...), a family
of names with one role is one name, a namespace: a small module of gitstore
meant for porcelain, used as ``from gitstore import errors`` then
``errors.ConversationNotFound``.  Those loaded lazily name their parts the
same way as this face; ``errors``, ``faults`` and ``ids`` are plain modules.

- ``errors``    the typed errors (``GitStoreError`` and its kinds), and
                ``environment_fault`` (an OS error told as the machine's fault)
- ``ids``       conversation ids: ``new_id``, ``check``, ``is_valid``, ``created_at``
- ``faults``    the fault-injection points and their hook (reliability tests)
- ``files``     a file written or moved into place whole, and waits retried
- ``make``      new events of each kind (``make.chat_message(...)``)
- ``turns``     turns and kinds counted over an event stream
- ``activity``  the active conversation and commits accepted from outside
- ``doctor``    a store examined and mended (``Finding``)
- ``ops``       the operation log (``Op``, ``Move``) and its undo and restore
- ``remotes``   a store's remotes configured: added, found, listed, checked
- ``syncing``   talking to a remote: pull (``open_sync``), push, share, delete

Everything else in gitstore (its subpackages ``events``, ``git``, ``cache``,
``sync``, ``oplog``, ``store``, ``fs`` and the modules not named here) is
internal to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstore.lazy import face

if TYPE_CHECKING:
    from gitstore import (
        activity,
        doctor,
        errors,
        faults,
        files,
        ids,
        make,
        ops,
        remotes,
        syncing,
        turns,
    )
    from gitstore.boundary import CONFIG_KEY as MAX_EVENT_BYTES_KEY
    from gitstore.boundary import Limits, load_record, read_file
    from gitstore.boundary import fit as fit_to_limits
    from gitstore.cache.listing import Listed
    from gitstore.cache.view import ChainView
    from gitstore.clock import Clock
    from gitstore.events import CONVERSATION_TYPES, Event, format_time, parse_time
    from gitstore.events import validate as validate_event
    from gitstore.events.kinds import PROPOSE_COMPACTION, Kind
    from gitstore.git.command import version_text as git_version_text
    from gitstore.git.refs.files import conversations_state as conversation_refs_state
    from gitstore.jsonstream import NotStreamable, stream_array
    from gitstore.store.core import Store
    from gitstore.store.notes import meta_values
    from gitstore.store.repo import init_project, init_store
    from gitstore.store.repo import is_marked as is_store
    from gitstore.store.types import Conversation, EventSource, Identity, Located
    from gitstore.values import load_json

__all__: list[str]  # the names above, read from them when first asked for

if not TYPE_CHECKING:  # mypy reads the imports above; a misspelt name stays an error
    __getattr__, __dir__ = face(__name__, __file__)
