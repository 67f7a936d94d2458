"""gitstore: conversations stored in git (the plumbing under ``porcelain``).

This module is the package's one public face.  Its names are written once, in
the ``if TYPE_CHECKING:`` imports below (what mypy reads); ``__all__`` repeats
them because mypy exports nothing else, and a test holds the two equal.  Each
name is imported from where it lives only when it is first asked for (PEP
562, the place read from those imports), so ``import gitstore`` costs nothing
and a command loads only the parts it touches (``jp conversation ls`` on a
warm cache never loads libgit2, pydantic or the sync modules).  Everything
under the subpackages (``events``, ``git``, ``cache``, ``sync``, ``oplog``,
``store``) is internal to gitstore.
"""

from __future__ import annotations

import re
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gitstore.boundary import CONFIG_KEY as MAX_EVENT_BYTES_KEY
    from gitstore.boundary import Limits, load_record, read_file
    from gitstore.boundary import fit as fit_to_limits
    from gitstore.cache.listing import Listed
    from gitstore.cache.view import ChainView
    from gitstore.clock import Clock
    from gitstore.errors import (
        ConcurrentUpdate,
        ConversationBusy,
        ConversationExists,
        ConversationNotFound,
        CorruptEvent,
        EnvironmentFault,
        GitStoreError,
        InvalidEvent,
        InvalidId,
        LockedRef,
        NothingToUndo,
        OplogBehind,
        RefBusy,
        RefLocked,
        Refused,
        RemoteSetupError,
        StaleTip,
        StoreError,
        StoreFormatTooNew,
        SyncError,
        UndoConflict,
        UnknownOperation,
        environment_fault,
    )
    from gitstore.events import (
        CONVERSATION_TYPES,
        Event,
        format_time,
        parse_time,
    )
    from gitstore.events import validate as validate_event
    from gitstore.events.kinds import PROPOSE_COMPACTION, Kind
    from gitstore.events.make import chat_message as chat_message_event
    from gitstore.events.make import chat_reasoning as chat_reasoning_event
    from gitstore.events.make import chat_request as chat_request_event
    from gitstore.events.make import config_delta as config_delta_event
    from gitstore.events.make import conversation_start as conversation_start_event
    from gitstore.events.make import tool_call_request as tool_call_request_event
    from gitstore.events.make import tool_call_response as tool_call_response_event
    from gitstore.events.make import turn_start as turn_start_event
    from gitstore.events.turns import (
        event_count,
        event_kinds,
        turn_bounds,
        turn_count,
        turn_indices,
    )
    from gitstore.faults import POINTS as FAULT_POINTS
    from gitstore.faults import install as install_fault_hook
    from gitstore.faults import point as fault_point
    from gitstore.fs.atomic import replace as move_file
    from gitstore.fs.atomic import write as write_atomic
    from gitstore.fs.retry import jittered as retry_jittered
    from gitstore.fs.retry import until as retry_until
    from gitstore.git.command import redact as redact_url
    from gitstore.git.command import version_text as git_version_text
    from gitstore.git.refs.files import conversations_state as conversation_refs_state
    from gitstore.ids import check as check_id
    from gitstore.ids import created_at, new_id
    from gitstore.ids import is_valid as is_valid_id
    from gitstore.jsonstream import NotStreamable, stream_array
    from gitstore.oplog.model import Move, Op
    from gitstore.oplog.model import printable as printable_command
    from gitstore.oplog.model import shown as ref_value
    from gitstore.store.activity import (
        accept_commits,
        accepted_commits,
        activations,
        record_activation,
    )
    from gitstore.store.core import Store
    from gitstore.store.doctor import Finding, examine, mend
    from gitstore.store.notes import meta_values
    from gitstore.store.repo import init_project, init_store
    from gitstore.store.repo import is_marked as is_store
    from gitstore.store.types import Conversation, EventSource, Identity, Located
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
    from gitstore.sync.remotes import check_name as check_remote_name
    from gitstore.sync.remotestate import add as add_remote
    from gitstore.sync.remotestate import default as default_remote
    from gitstore.sync.remotestate import find as find_remote
    from gitstore.sync.remotestate import listing as list_remotes
    from gitstore.sync.remotestate import remove as remove_remote
    from gitstore.sync.shared import Shared, share_on_remote, shared_record, unshare_on_remote
    from gitstore.sync.urls import check as check_remote_url
    from gitstore.undoing import restore, undo
    from gitstore.values import load_json

__all__ = [
    "PROPOSE_COMPACTION",
    "CONVERSATION_TYPES",
    "ChainView",
    "Listed",
    "Clock",
    "ConcurrentUpdate",
    "Conversation",
    "ConversationBusy",
    "ConversationExists",
    "ConversationNotFound",
    "CorruptEvent",
    "EnvironmentFault",
    "Event",
    "FAULT_POINTS",
    "Finding",
    "GitStoreError",
    "Identity",
    "EventSource",
    "InvalidEvent",
    "InvalidId",
    "Kind",
    "Limits",
    "Located",
    "LockedRef",
    "MAX_EVENT_BYTES_KEY",
    "Move",
    "NothingToUndo",
    "OplogBehind",
    "Op",
    "Outcome",
    "RefBusy",
    "RefLocked",
    "Refused",
    "StaleTip",
    "Store",
    "StoreError",
    "StoreFormatTooNew",
    "SyncError",
    "RemoteSetupError",
    "Syncer",
    "UndoConflict",
    "UnknownOperation",
    "accept_commits",
    "accepted_commits",
    "activations",
    "add_remote",
    "chat_message_event",
    "chat_reasoning_event",
    "chat_request_event",
    "check_id",
    "check_remote_name",
    "check_remote_url",
    "config_delta_event",
    "conversation_start_event",
    "created_at",
    "default_remote",
    "environment_fault",
    "event_count",
    "examine",
    "fault_point",
    "find_remote",
    "fit_to_limits",
    "format_time",
    "init_project",
    "init_store",
    "install_fault_hook",
    "is_store",
    "conversation_refs_state",
    "git_version_text",
    "is_valid_id",
    "list_remotes",
    "load_json",
    "load_record",
    "mend",
    "meta_values",
    "new_id",
    "open_sync",
    "nothing_to_pull",
    "parse_time",
    "push",
    "delete_on_remote",
    "remote_has",
    "remotes_holding",
    "remotes_containing",
    "replace_unsent_meta",
    "share_on_remote",
    "shared_record",
    "unshare_on_remote",
    "Shared",
    "read_file",
    "NotStreamable",
    "stream_array",
    "record_activation",
    "printable_command",
    "ref_value",
    "redact_url",
    "remove_remote",
    "restore",
    "tool_call_request_event",
    "tool_call_response_event",
    "turn_bounds",
    "turn_count",
    "turn_indices",
    "event_kinds",
    "turn_start_event",
    "undo",
    "validate_event",
    "write_atomic",
    "move_file",
    "retry_jittered",
    "retry_until",
]


if not TYPE_CHECKING:  # mypy reads the imports above; a misspelt name stays an error
    _WHERE: dict[str, tuple[str, str]] = {}  # name -> (module, name there)
    _FROM = re.compile(r"^    from (gitstore[\w.]*) import (\([^)]*\)|[^\n]*)", re.M)

    def _read_where() -> dict[str, tuple[str, str]]:
        """Where each name lives, read from the imports above: the names are
        written once, there (``__all__`` repeats them for mypy)."""
        text = Path(__file__).read_text(encoding="utf-8")
        block = text[text.index("if TYPE_CHECKING:") : text.index("__all__ = [")]
        for module, names in _FROM.findall(block):
            for item in names.strip("()").split(","):
                attr, _, alias = item.strip().partition(" as ")
                if attr:
                    _WHERE[alias or attr] = (module, attr)
        return _WHERE

    def __getattr__(name: str) -> Any:
        where = (_WHERE or _read_where()).get(name)
        if where is None:
            raise AttributeError(f"module 'gitstore' has no attribute {name!r}")
        module, attr = where
        value = getattr(import_module(module), attr)
        globals()[name] = value  # asked for once
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
