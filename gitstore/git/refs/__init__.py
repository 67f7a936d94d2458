"""Refs: their names (the layout), reading them, and moving several at once.

The names (``gitstore.git.refs.names``) are this package's own; reading refs as
files is ``files``, the journaled multi-ref update ``transaction``.
"""

from __future__ import annotations

from gitstore.git.refs.names import (
    ACTIVE,
    ARCHIVE_PREFIX,
    LIVE_PREFIX,
    NOTES_META,
    NOTES_SOURCE,
    ON_REMOTES,
    PROJECT,
    STANDALONE,
    NotesRefs,
    archived,
    conversation_id,
    live,
)

__all__ = [
    "ACTIVE",
    "ARCHIVE_PREFIX",
    "LIVE_PREFIX",
    "NOTES_META",
    "NOTES_SOURCE",
    "ON_REMOTES",
    "PROJECT",
    "STANDALONE",
    "NotesRefs",
    "archived",
    "conversation_id",
    "live",
]
