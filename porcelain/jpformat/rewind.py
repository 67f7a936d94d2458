"""Claude Code's `/rewind`: a prompt that continues from an earlier point of the session.

Records form a tree through ``uuid``/``parentUuid``; a rewind writes a second
prompt under the parent of an earlier one, and the session goes on from there.
The file keeps both branches in the order they were written.  jp makes each
rewind a branch of its own: branch 0 is the session's first line of records,
and every rewind opens the next branch, forked from the branch that holds the
record it went back to, at that record (the import writes each branch as a
conversation forked from its parent's at that point).

A record goes to the branch of its parent (``parentUuid``); one without a
parent jp has seen (``file-history-snapshot``, a ``compact_boundary``...) goes
to the branch of the record before it.

Pure, and only looking back: where a record goes depends on the records
before it alone, so a session that grew maps to the branches of the shorter
one followed by new records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_WALK = 20_000  # records walked up from a prompt to find where it continues from


@dataclass(frozen=True)
class Fork:
    """A rewind's branch: ``parent`` (a branch number) at its record ``at``, opened by
    the prompt record ``first`` (0-based record indexes of the file)."""

    parent: int
    at: int
    first: int


class Tree:
    """The records' parent links, the branch of each record, and per branch the last
    record that made conversation events."""

    def __init__(self) -> None:
        self.parent: dict[str, str | None] = {}
        self.branch: dict[str, int] = {}  # uuid -> its branch
        self.index: dict[str, int] = {}  # uuid -> its 0-based record index
        self.leaf: list[str | None] = [None]  # per branch
        self.prompted: set[str] = set()  # the parents of typed prompts
        self.forks: list[Fork] = []  # branch n is forks[n - 1]
        self.current = 0  # the branch of the last record

    def place(self, record: dict[str, Any], index: int, prompt: bool) -> int:
        """The branch of ``record`` (a new one when it is a prompt that rewinds)."""
        parent = record.get("parentUuid")
        if not isinstance(parent, str) or parent not in self.branch:
            return self.current
        branch = self.branch[parent]
        if prompt and parent in self.prompted and not self._continues(parent, branch):
            self.forks.append(Fork(branch, self.index[parent], index))
            self.leaf.append(None)
            return len(self.forks)
        return branch

    def placed(self, record: dict[str, Any], index: int, branch: int, produced: bool) -> None:
        """Note where ``record`` went, and whether it made conversation events."""
        self.current = branch
        uuid = record.get("uuid")
        if not isinstance(uuid, str):
            return
        parent = record.get("parentUuid")
        self.parent[uuid] = parent if isinstance(parent, str) else None
        self.branch[uuid] = branch
        self.index[uuid] = index
        if produced:
            self.leaf[branch] = uuid

    def prompt(self, record: dict[str, Any]) -> None:
        parent = record.get("parentUuid")
        if isinstance(parent, str):
            self.prompted.add(parent)

    def _continues(self, parent: str, branch: int) -> bool:
        """Whether ``parent`` is the leaf of its branch or comes after it."""
        leaf = self.leaf[branch]
        at: str | None = parent
        for _ in range(MAX_WALK):
            if at is None or at == leaf:
                break
            at = self.parent.get(at)
        return leaf is None or at == leaf
