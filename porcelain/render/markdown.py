"""Answers shown as Markdown on a terminal (headings, emphasis, lists, code).

Only on a terminal that takes colours (stdout a tty, no NO_COLOR, TERM not
dumb) and without ``--no-render``; piped output stays the model's exact text.

The text is untrusted, so it is escaped (``escape_untrusted``) *before* it is
rendered: whatever the model wrote, the only control sequences that reach
the terminal are the SGR styles the renderer adds itself (links are shown as
text, never as terminal hyperlinks).

A streamed answer is rendered block by block: a block is shown once a blank
line outside a fenced code block ends it, so paragraphs appear as they are
completed and a code fence is never cut in two.
"""

from __future__ import annotations

import io
import re
import shutil

from porcelain.domain.escaping import escape_untrusted

_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def render_markdown(text: str, width: int | None = None) -> str:
    """``text`` (untrusted Markdown) as styled terminal text, ending in a newline."""
    # lazy: rich costs about 90 ms to import; only an answer on a terminal needs it
    from rich.console import Console
    from rich.markdown import Markdown

    columns = width or shutil.get_terminal_size((80, 24)).columns
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=True,
        color_system="standard",
        width=max(20, columns),
        highlight=False,
        emoji=False,
        markup=False,
    )
    safe = escape_untrusted(text)
    try:
        console.print(Markdown(safe, hyperlinks=False, code_theme="ansi_dark"))
    except Exception:  # noqa: BLE001 (a renderer's bug must never hide an answer)
        return safe if safe.endswith("\n") else safe + "\n"
    lines = [ln.rstrip() for ln in buffer.getvalue().splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines) + "\n" if lines else ""


def complete_blocks(text: str) -> int:
    """How much of ``text`` is whole Markdown blocks: the offset just past the last
    blank line that is outside a fenced code block (0 when there is none)."""
    cut = 0
    fenced = False
    offset = 0
    previous_blank = False
    for line in text.splitlines(keepends=True):
        offset += len(line)
        if not line.endswith("\n"):
            break  # a line still arriving
        if _FENCE.match(line):
            fenced = not fenced
            if not fenced:  # a closed fence ends a block too
                cut = offset
            previous_blank = False
            continue
        blank = not line.strip()
        if blank and not fenced and not previous_blank:
            cut = offset
        previous_blank = blank
    return cut


class MarkdownStream:
    """Chunks of an answer in, rendered whole blocks out."""

    def __init__(self, width: int | None = None) -> None:
        self.width = width
        self._pending = ""
        self._shown_any = False

    def feed(self, chunk: str) -> str:
        self._pending += chunk
        cut = complete_blocks(self._pending)
        if not cut:
            return ""
        ready, self._pending = self._pending[:cut], self._pending[cut:]
        return self._render(ready)

    def flush(self) -> str:
        ready, self._pending = self._pending, ""
        return self._render(ready)

    def _render(self, text: str) -> str:
        if not text.strip():
            return ""
        shown = render_markdown(text, self.width)
        if not shown:
            return ""
        gap = "\n" if self._shown_any else ""
        self._shown_any = True
        return gap + shown
