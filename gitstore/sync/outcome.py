"""What a sync reports per conversation, and a conversation's tips on one side."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one conversation (or notes ref, or skipped ref)."""

    id: str
    action: str
    new_id: str | None = None
    kind: str = "conversation"  # conversation | notes | warning | refused
    direction: str = "pull"
    detail: str = ""
    kept: str | None = None  # refused: the quarantine ref that holds its tip
    acknowledged: bool = False  # refused, and the user acknowledged it (`jp doctor --ack`)
    # created by a pull: the id it continues as its metadata note says ("" if none),
    # known when the pull brought the store's first notes; None: read them to know
    continues: str | None = None


@dataclass(slots=True)
class Tips:
    live: str | None = None
    archived: str | None = None
    broken: str | None = None  # a ref that is not a commit: its object's type
