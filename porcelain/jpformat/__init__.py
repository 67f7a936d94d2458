"""JP's on-disk conversation format: read a folder JP wrote, write one JP can read.

- ``read_conversation(folder)`` -> ``JpConversation`` (decoded, validated, whole or not at all)
- ``scan_conversation(folder)`` -> ``JpFolder``: the same checks, its events read again from
  their file on each pass (``EventFile``), never held (an import of any size)
- ``write_conversation(folder, conv)`` writes JP's layout byte for byte as JP would
- ``folder_name(jp_id, title)`` / ``jp_id_from_folder(name)`` map ids and directory names
"""

from __future__ import annotations

from porcelain.jpformat.eventfile import EventFile, JpFolder, scan_conversation
from porcelain.jpformat.reader import (
    JpConversation,
    decode_entry,
    jp_id_from_folder,
    read_conversation,
    read_events,
)
from porcelain.jpformat.writer import (
    ConversationParts,
    folder_name,
    jp_time,
    render_conversation,
    standing_events,
    to_jp_entry,
    write_conversation,
)

__all__ = [
    "ConversationParts",
    "EventFile",
    "JpFolder",
    "JpConversation",
    "decode_entry",
    "folder_name",
    "jp_id_from_folder",
    "jp_time",
    "read_conversation",
    "read_events",
    "render_conversation",
    "scan_conversation",
    "standing_events",
    "to_jp_entry",
    "write_conversation",
]
