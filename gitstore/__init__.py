"""gitstore: conversations stored in git (the plumbing under ``porcelain``).

This module is the package's one public face: ``__all__`` lists what the
rest of jp may use, and each name is imported from where it lives only when
it is first asked for (PEP 562), so ``import gitstore`` costs nothing and a
command loads only the parts it touches (``jp conversation ls`` on a warm
cache never loads libgit2, pydantic or the sync modules).  Everything under
the subpackages (``events``, ``refs``, ``cache``, ``sync``, ``oplog``,
``store``) is internal to gitstore.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gitstore.boundary import CONFIG_KEY as MAX_EVENT_BYTES_KEY
    from gitstore.boundary import Checked, Limits, load_record, read_file
    from gitstore.boundary import fit as fit_to_limits
    from gitstore.cache.facts import ChainFacts
    from gitstore.cache.listing import Listed
    from gitstore.cache.view import ChainView
    from gitstore.clock import Clock, FixedClock, SteppingClock, SystemClock
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
        INTERNAL_TYPES,
        KNOWN_TYPES,
        Event,
        format_time,
        now_text,
        parse_time,
    )
    from gitstore.events import validate as validate_event
    from gitstore.events.kinds import PROPOSE_COMPACTION, Kind
    from gitstore.events.make import chat_message as chat_message_event
    from gitstore.events.make import chat_reasoning as chat_reasoning_event
    from gitstore.events.make import chat_request as chat_request_event
    from gitstore.events.make import compaction as compaction_event
    from gitstore.events.make import compaction_reset as compaction_reset_event
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
    from gitstore.store.repo import ProjectStore, init_project, init_store
    from gitstore.store.repo import is_marked as is_store
    from gitstore.store.transaction import Transaction
    from gitstore.store.types import Conversation, EventSource, Identity, Located
    from gitstore.sync.delete import (
        Deleted,
        delete_on_remote,
        remote_has,
        remotes_containing,
        remotes_holding,
    )
    from gitstore.sync.notes_unsent import replace_unsent_meta
    from gitstore.sync.pull import Outcome, Syncer, open_sync
    from gitstore.sync.pull_quick import nothing_to_pull
    from gitstore.sync.push import push
    from gitstore.sync.remotes import RemoteInfo
    from gitstore.sync.remotes import check_name as check_remote_name
    from gitstore.sync.remotestate import add as add_remote
    from gitstore.sync.remotestate import default as default_remote
    from gitstore.sync.remotestate import find as find_remote
    from gitstore.sync.remotestate import listing as list_remotes
    from gitstore.sync.remotestate import remove as remove_remote
    from gitstore.sync.urls import check as check_remote_url
    from gitstore.sync.urls import redact as redact_url
    from gitstore.undoing import Result as UndoResult
    from gitstore.undoing import restore, undo
    from gitstore.values import load_json

# name -> "module" (the same name there) or "module:name there"
_WHERE: dict[str, str] = {
    # the store
    "Store": "gitstore.store.core",
    "Located": "gitstore.store.types",
    "EventSource": "gitstore.store.types",
    "Conversation": "gitstore.store.types",
    "Identity": "gitstore.store.types",
    "Transaction": "gitstore.store.transaction",
    "activations": "gitstore.store.activity",
    "accepted_commits": "gitstore.store.activity",
    "accept_commits": "gitstore.store.activity",
    "record_activation": "gitstore.store.activity",
    "meta_values": "gitstore.store.notes",
    "ChainView": "gitstore.cache.view",
    "ChainFacts": "gitstore.cache.facts",
    "Listed": "gitstore.cache.listing",
    # making and finding stores
    "init_store": "gitstore.store.repo",
    "init_project": "gitstore.store.repo",
    "ProjectStore": "gitstore.store.repo",
    "is_store": "gitstore.store.repo:is_marked",
    "conversation_refs_state": "gitstore.git.refs.files:conversations_state",
    # the clock
    "Clock": "gitstore.clock",
    "SystemClock": "gitstore.clock",
    "FixedClock": "gitstore.clock",
    "SteppingClock": "gitstore.clock",
    # what the store takes in
    "Limits": "gitstore.boundary",
    "MAX_EVENT_BYTES_KEY": "gitstore.boundary:CONFIG_KEY",
    "fit_to_limits": "gitstore.boundary:fit",
    "load_json": "gitstore.values",
    "load_record": "gitstore.boundary",
    "Checked": "gitstore.boundary",
    "read_file": "gitstore.boundary",
    "NotStreamable": "gitstore.jsonstream",
    "stream_array": "gitstore.jsonstream",
    # ids
    "new_id": "gitstore.ids",
    "check_id": "gitstore.ids:check",
    "is_valid_id": "gitstore.ids:is_valid",
    "created_at": "gitstore.ids",
    # events
    "Event": "gitstore.events",
    "CONVERSATION_TYPES": "gitstore.events",
    "INTERNAL_TYPES": "gitstore.events",
    "KNOWN_TYPES": "gitstore.events",
    "format_time": "gitstore.events",
    "parse_time": "gitstore.events",
    "now_text": "gitstore.events",
    "validate_event": "gitstore.events:validate",
    "Kind": "gitstore.events.kinds",
    "PROPOSE_COMPACTION": "gitstore.events.kinds",
    "turn_start_event": "gitstore.events.make:turn_start",
    "chat_request_event": "gitstore.events.make:chat_request",
    "chat_message_event": "gitstore.events.make:chat_message",
    "chat_reasoning_event": "gitstore.events.make:chat_reasoning",
    "tool_call_request_event": "gitstore.events.make:tool_call_request",
    "tool_call_response_event": "gitstore.events.make:tool_call_response",
    "config_delta_event": "gitstore.events.make:config_delta",
    "compaction_event": "gitstore.events.make:compaction",
    "compaction_reset_event": "gitstore.events.make:compaction_reset",
    "conversation_start_event": "gitstore.events.make:conversation_start",
    "turn_indices": "gitstore.events.turns",
    "event_kinds": "gitstore.events.turns",
    "turn_count": "gitstore.events.turns",
    "turn_bounds": "gitstore.events.turns",
    "event_count": "gitstore.events.turns",
    # sync
    "Syncer": "gitstore.sync.pull",
    "Outcome": "gitstore.sync.pull",
    "open_sync": "gitstore.sync.pull",
    "nothing_to_pull": "gitstore.sync.pull_quick",
    "push": "gitstore.sync.push",
    "Deleted": "gitstore.sync.delete",
    "delete_on_remote": "gitstore.sync.delete",
    "remote_has": "gitstore.sync.delete",
    "remotes_holding": "gitstore.sync.delete",
    "remotes_containing": "gitstore.sync.delete",
    "replace_unsent_meta": "gitstore.sync.notes_unsent",
    "RemoteInfo": "gitstore.sync.remotes",
    "check_remote_name": "gitstore.sync.remotes:check_name",
    "list_remotes": "gitstore.sync.remotestate:listing",
    "find_remote": "gitstore.sync.remotestate:find",
    "default_remote": "gitstore.sync.remotestate:default",
    "add_remote": "gitstore.sync.remotestate:add",
    "remove_remote": "gitstore.sync.remotestate:remove",
    "check_remote_url": "gitstore.sync.urls:check",
    "redact_url": "gitstore.sync.urls:redact",
    # the operation log
    "Op": "gitstore.oplog.model",
    "Move": "gitstore.oplog.model",
    "ref_value": "gitstore.oplog.model:shown",
    "printable_command": "gitstore.oplog.model:printable",
    "undo": "gitstore.undoing",
    "restore": "gitstore.undoing",
    "UndoResult": "gitstore.undoing:Result",
    # doctor
    "Finding": "gitstore.store.doctor",
    "examine": "gitstore.store.doctor",
    "mend": "gitstore.store.doctor",
    # the fault points (a testing hook)
    "FAULT_POINTS": "gitstore.faults:POINTS",
    "fault_point": "gitstore.faults:point",
    "install_fault_hook": "gitstore.faults:install",
    # errors
    "GitStoreError": "gitstore.errors",
    "InvalidEvent": "gitstore.errors",
    "InvalidId": "gitstore.errors",
    "ConversationNotFound": "gitstore.errors",
    "ConversationExists": "gitstore.errors",
    "ConversationBusy": "gitstore.errors",
    "ConcurrentUpdate": "gitstore.errors",
    "StaleTip": "gitstore.errors",
    "RefLocked": "gitstore.errors",
    "LockedRef": "gitstore.errors",
    "RefBusy": "gitstore.errors",
    "StoreError": "gitstore.errors",
    "StoreFormatTooNew": "gitstore.errors",
    "SyncError": "gitstore.errors",
    "RemoteSetupError": "gitstore.errors",
    "CorruptEvent": "gitstore.errors",
    "Refused": "gitstore.errors",
    "NothingToUndo": "gitstore.errors",
    "OplogBehind": "gitstore.errors",
    "UnknownOperation": "gitstore.errors",
    "UndoConflict": "gitstore.errors",
    "EnvironmentFault": "gitstore.errors",
    "environment_fault": "gitstore.errors",
    # files written whole, and trying again
    "write_atomic": "gitstore.fs.atomic:write",
    "move_file": "gitstore.fs.atomic:replace",
    "retry_jittered": "gitstore.fs.retry:jittered",
    "retry_until": "gitstore.fs.retry:until",
}

__all__ = [
    "PROPOSE_COMPACTION",
    "CONVERSATION_TYPES",
    "ChainFacts",
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
    "FixedClock",
    "GitStoreError",
    "INTERNAL_TYPES",
    "Identity",
    "EventSource",
    "InvalidEvent",
    "InvalidId",
    "KNOWN_TYPES",
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
    "ProjectStore",
    "RefBusy",
    "RefLocked",
    "Refused",
    "RemoteInfo",
    "StaleTip",
    "SteppingClock",
    "Store",
    "StoreError",
    "StoreFormatTooNew",
    "SyncError",
    "RemoteSetupError",
    "Syncer",
    "SystemClock",
    "Transaction",
    "UndoConflict",
    "UndoResult",
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
    "compaction_event",
    "compaction_reset_event",
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
    "is_valid_id",
    "list_remotes",
    "load_json",
    "load_record",
    "Checked",
    "mend",
    "meta_values",
    "new_id",
    "now_text",
    "open_sync",
    "nothing_to_pull",
    "parse_time",
    "push",
    "Deleted",
    "delete_on_remote",
    "remote_has",
    "remotes_holding",
    "remotes_containing",
    "replace_unsent_meta",
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

    def __getattr__(name: str) -> Any:
        where = _WHERE.get(name)
        if where is None:
            raise AttributeError(f"module 'gitstore' has no attribute {name!r}")
        module, _, attr = where.partition(":")
        value = getattr(import_module(module), attr or name)
        globals()[name] = value  # asked for once
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
