"""Claude Code's `/rewind`: a prompt that continues from an earlier point of the session.

Records form a tree through ``uuid``/``parentUuid``; a rewind writes a second
prompt under the parent of an earlier one.  The file keeps both branches in
the order they were written, and so does jp's conversation (every record, in
order); what changes is what the model is sent: the turns of the abandoned
branch are covered by a compaction whose summary says they were rewound (the
raw turns stay: `print` shows them, `compact --reset` brings them back).

Pure, and only looking back: whether a prompt is a rewind depends on the
records before it alone.
"""

from __future__ import annotations

from typing import Any

MAX_WALK = 20_000  # records walked up from a prompt to find where it continues from
NOTE = "[Claude Code /rewind: the user went back to an earlier point here; the turns since were abandoned]"


class Tree:
    """The records' parent links, the last record that made conversation events, and
    the turn each prompt opened (by its parent)."""

    def __init__(self) -> None:
        self.parent: dict[str, str | None] = {}
        self.leaf: str | None = None
        self.prompts: dict[str, list[int]] = {}  # parentUuid -> turns of the prompts under it

    def note(self, record: dict[str, Any]) -> None:
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            parent = record.get("parentUuid")
            self.parent[uuid] = parent if isinstance(parent, str) else None

    def abandoned_from(self, record: dict[str, Any]) -> int | None:
        """For a prompt that does not continue from the leaf: the turn of the earlier
        prompt under the same parent (the branch it abandons), else None."""
        parent = record.get("parentUuid")
        if not isinstance(parent, str) or self.leaf is None or parent not in self.prompts:
            return None
        at: str | None = parent
        for _ in range(MAX_WALK):
            if at is None or at == self.leaf:
                break
            at = self.parent.get(at)
        if at == self.leaf:
            return None
        return self.prompts[parent][0]

    def prompted(self, record: dict[str, Any], turn: int) -> None:
        parent = record.get("parentUuid")
        if isinstance(parent, str):
            self.prompts.setdefault(parent, []).append(turn)

    def produced(self, record: dict[str, Any]) -> None:
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            self.leaf = uuid
