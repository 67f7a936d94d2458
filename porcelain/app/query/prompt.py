"""What a query asks: its text (words, standard input or the editor) and attachments."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from porcelain.app.query.attachments import Collected, collect, read_stdin, stdin_text
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
    notes: list[str] = field(default_factory=list)  # what to say on stderr before the turn
    editing: bool = False  # the editor is still to open (``edit``), after the checks
    draft_cid: str | None = None  # whose draft the editor opened (None: a new conversation's)

    def edit(self, cid: str | None) -> None:
        """Open the editor on ``cid``'s draft, now that every check needing no text passed."""
        if not self.editing or self.draft is None:
            return
        # lazy: the editor module loads only when the editor opens
        from porcelain.app.query.editor import edit_query

        self.draft_cid = cid
        self.text, self.editing = edit_query(self.draft, self.text, cid=cid), False


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _piped() -> bool:
    """True when standard input is a pipe or a file (``cmd | jp``, ``jp < FILE``):
    never a terminal, /dev/null or another device, nor a socket."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _attach_piped(found: Collected) -> str | None:
    """Attach a piped standard input (``cmd | jp q TEXT``), as ``-a -`` does; the
    line to say so, or None when it held nothing."""
    raw = read_stdin()
    if not raw.strip():
        return None
    found.add("stdin", "-", raw, "standard input")
    return (
        f"Attached standard input ({len(raw):,} bytes) to the question "
        "(give it as -a - to say so, or </dev/null to leave it out)."
    )


def piped_text() -> str:
    """Standard input as a query's text when it is not a terminal; else nothing
    (a template's prompt may need no text)."""
    return "" if sys.stdin.isatty() else stdin_text().strip()


def gather(
    words: tuple[str, ...],
    edit: bool,
    attach: tuple[str, ...],
    attach_cmd: tuple[str, ...],
    gitdir: Any,
    secrets: Callable[[], frozenset[str]] = frozenset,
) -> Ask:
    """The text and attachments of a query, before anything is written.

    ``gitdir`` is a callable returning the store's git directory (opened only
    when the editor is used); ``secrets`` one returning the environment
    variables that hold providers' keys (asked only for --attach-cmd).  With
    TEXT, a piped standard input is attached (said in ``Ask.notes``); without
    it, standard input is the text."""
    if attach.count("-") > 1:
        raise UsageError("-a - (standard input) can be given once")
    keys = secrets() if attach_cmd else frozenset()
    found = collect(attach, attach_cmd, secrets=keys) if attach or attach_cmd else Collected()
    text = " ".join(words).strip()
    stdin_free = "-" not in attach
    if not edit and text and stdin_free and _piped():
        note = _attach_piped(found)
        found.notes.extend([note] if note else [])
    attachments = found.attachments
    if not edit and not text and stdin_free and not sys.stdin.isatty():
        text = stdin_text().strip()
    elif edit or (not text and _interactive()):  # opened by ``Ask.edit``, after the checks
        return Ask(text, attachments, draft=gitdir(), notes=found.notes, editing=True)
    if not text:
        raise UsageError(
            "the query is empty",
            'give the text: `jp q "your question"` (or `jp q -e` for an editor)',
        )
    return Ask(text, attachments, notes=found.notes)
