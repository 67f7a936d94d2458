"""What a query asks: its text (words, standard input or the editor) and attachments."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from porcelain.app.query.attachments import collect
from porcelain.errors import UsageError


@dataclass
class Ask:
    """The request a query makes (``text`` empty for --retry)."""

    text: str = ""
    attachments: list[dict[str, Any]] = field(default_factory=list)
    retry: bool = False
    draft: Path | None = None  # the store's git directory, when the text came from the editor
    system: str | None = None  # a one-off instruction for this query (`-s`)
    render: bool = True  # show the answer as Markdown on a terminal


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def gather(
    words: tuple[str, ...],
    edit: bool,
    attach: tuple[str, ...],
    attach_cmd: tuple[str, ...],
    gitdir: Any,
) -> Ask:
    """The text and attachments of a query, before anything is written.

    ``gitdir`` is a callable returning the store's git directory (opened only
    when the editor is used)."""
    if attach.count("-") > 1:
        raise UsageError("-a - (standard input) can be given once")
    attachments = collect(attach, attach_cmd) if attach or attach_cmd else []
    text = " ".join(words).strip()
    stdin_free = "-" not in attach
    if not edit and not text and stdin_free and not sys.stdin.isatty():
        text = sys.stdin.read().strip()
    elif edit or (not text and _interactive()):
        # lazy: the editor module loads only when the editor opens
        from porcelain.app.query.editor import edit_query

        where = gitdir()
        return Ask(edit_query(where, text), attachments, draft=where)
    if not text:
        raise UsageError(
            "the query is empty",
            'give the text: `jp q "your question"` (or `jp q -e` for an editor)',
        )
    return Ask(text, attachments)
