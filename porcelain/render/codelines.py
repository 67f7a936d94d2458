"""The lines of a fenced code block styled one by one, as they arrive.

A streamed code block is shown line by line (``render/mdstream.py``), so each
line is highlighted on its own with the colours rich gives a whole block
(the ``ansi_dark`` theme) and indented by the same one column.  The line is
escaped before it is highlighted: the styles are jp's, the text is shown.
"""

from __future__ import annotations

import re
from typing import Any

from porcelain.domain.escaping import escape_untrusted
from porcelain.domain.highlight import MAX_BLOCK, MAX_LINE, lexer_name

_LANGUAGE = re.compile(r"[\w+#.-]{1,40}")
_PAD = " "


def language(info: str) -> str:
    """The language named by a fence's info string ("" when none is usable)."""
    word = info.strip().split(" ", 1)[0] if info.strip() else ""
    return word if _LANGUAGE.fullmatch(word) else ""


class CodeLines:
    """Style one line of code at a time for ``lang`` (plain when it is not one of
    the lexers jp highlights, for a line over ``MAX_LINE`` and once the block
    passed ``MAX_BLOCK``: ``domain/highlight.py``)."""

    def __init__(self, lang: str) -> None:
        self._lexer: Any = _lexer(lang)
        self._styles: dict[Any, str] = {}
        self._seen = 0

    def line(self, text: str) -> str:
        """``text`` (one line of untrusted code, no line end) styled, with its line end."""
        # tabs as the whole-answer renderer shows them (a tab is a control character)
        safe = escape_untrusted(text.expandtabs(4))
        self._seen += len(safe) + 1
        if self._seen > MAX_BLOCK:  # the rest of a long block: plain
            self._lexer = None
        if self._lexer is None or len(safe) > MAX_LINE or not safe.strip():
            return (_PAD + safe).rstrip() + "\n"
        parts = [_PAD]
        for kind, value in self._lexer.get_tokens(safe):
            parts.append(self._styled(kind, value))
        return "".join(parts).rstrip() + "\n"

    def _styled(self, kind: Any, value: str) -> str:
        if not value.strip():
            return value
        prefix = self._styles.get(kind)
        if prefix is None:
            prefix = self._styles[kind] = _prefix(kind)
        return f"{prefix}{value}\x1b[0m" if prefix else value


def _lexer(lang: str) -> Any:
    name = lexer_name(lang)
    if name is None:
        return None
    # lazy: pygments loads with rich, for answers on a terminal only
    from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
    from pygments.util import ClassNotFound  # type: ignore[import-untyped]

    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def _prefix(kind: Any) -> str:
    """The SGR sequence rich's ansi_dark theme gives a token of ``kind``."""
    # lazy: as above
    from rich.color import ColorSystem
    from rich.syntax import ANSI_DARK

    while kind is not None and kind not in ANSI_DARK:
        kind = kind.parent
    style = ANSI_DARK.get(kind) if kind is not None else None
    if style is None or not style:
        return ""
    marked = style.render("x", color_system=ColorSystem.STANDARD)
    return marked.split("x", 1)[0]
