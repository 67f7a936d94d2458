"""An answer shown as Markdown while it streams: blocks as they complete, code
lines as they arrive.

Each line is looked at once, when its newline arrives (``work`` counts the
characters scanned, so a test can check that nothing is scanned twice):

- text gathers into a block until a blank line ends it, then the block is
  rendered (``render_markdown``: escaped, styled);
- a fenced code block that starts in the first column is streamed: the block
  before it is shown, then each line of code as soon as it is complete,
  highlighted on its own (``CodeLines``); the closing fence ends it;
- a fence that is indented or inside a quote (part of a list item, say) stays
  part of its block, and no blank line inside it cuts the block.

``render_answer`` shows a whole answer the same way (``jp conversation print``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from porcelain.render.codelines import CodeLines, language
from porcelain.render.markdown import render_markdown

_STREAMED_FENCE = re.compile(r"(`{3,}|~{3,})(.*)")
_NESTED_FENCE = re.compile(r"[ \t]*(?:>[ \t]*)*(`{3,}|~{3,})(.*)")


@dataclass
class _Fence:
    marker: str

    def closed_by(self, line: str, nested: bool = False) -> bool:
        """Whether ``line`` closes this fence (``nested``: inside quotes or a list)."""
        if nested:
            bare = line.lstrip(" \t>")
        elif line.startswith("    "):
            return False
        else:
            bare = line.lstrip(" ")
        bare = bare.rstrip(" \t")
        return len(bare) >= len(self.marker) and bare == self.marker[0] * len(bare)


def _opens(pattern: re.Pattern[str], line: str) -> _Fence | None:
    found = pattern.fullmatch(line)
    if found is None:
        return None
    marker, info = found.groups()
    if marker[0] == "`" and "`" in info:  # not a fence: inline code
        return None
    return _Fence(marker)


class MarkdownStream:
    """Chunks of an answer in, text to write out (escaped, with jp's styles)."""

    def __init__(self, width: int | None = None) -> None:
        self.width = width
        self.work = 0  # characters scanned so far
        self._piece: list[str] = []  # the line still arriving
        self._block: list[str] = []  # the complete lines of the block being gathered
        self._nested: _Fence | None = None  # an open fence inside ``_block``
        self._code: _Fence | None = None  # the fenced block being streamed
        self._lines: CodeLines | None = None
        self._blank = False
        self._shown_any = False

    @property
    def holding(self) -> bool:
        """Whether text has arrived that is not shown yet."""
        return bool(self._block or any(self._piece))

    def feed(self, chunk: str) -> str:
        if "\n" not in chunk:
            self._piece.append(chunk)
            return ""
        head, _, rest = chunk.rpartition("\n")
        lines = ("".join(self._piece) + head).split("\n")
        self._piece = [rest] if rest else []
        return "".join(self._line(line) for line in lines)

    def flush(self, cut: bool = False) -> str:
        """The rest: the line still arriving and the block not ended yet.  ``cut``:
        the answer broke off, so the rest keeps its lines as they arrived (a
        paragraph's newlines are not joined into spaces: its end never came)."""
        piece = "".join(self._piece)
        self._piece = []
        shown = self._line(piece) if piece else ""
        shown += self._render_block(breaks=cut)
        self._code = self._lines = None
        return shown

    def _line(self, line: str) -> str:
        self.work += len(line) + 1
        line = line.removesuffix("\r")
        if self._code is not None:
            return self._code_line(line)
        if self._nested is not None:
            self._block.append(line)
            if self._nested.closed_by(line, nested=True):
                self._nested = None
            return ""
        fence = _opens(_STREAMED_FENCE, line)
        if fence is not None:
            shown = self._render_block()
            self._code = fence
            self._lines = CodeLines(language(line[len(fence.marker) :]))
            return shown + self._gap()
        if not line.strip():
            shown = "" if self._blank else self._render_block()
            self._blank = True
            return shown
        self._blank = False
        self._nested = _opens(_NESTED_FENCE, line)
        self._block.append(line)
        return ""

    def _code_line(self, line: str) -> str:
        assert self._code is not None and self._lines is not None
        if self._code.closed_by(line):
            self._code = self._lines = None
            self._blank = False
            return ""
        return self._lines.line(line)

    def _render_block(self, breaks: bool = False) -> str:
        text = "\n".join(self._block) + "\n"
        self._block = []
        self._nested = None
        if not text.strip():
            return ""
        shown = render_markdown(text, self.width, breaks)
        return self._gap() + shown if shown else ""

    def _gap(self) -> str:
        gap = "\n" if self._shown_any else ""
        self._shown_any = True
        return gap


def render_answer(text: str, width: int | None = None) -> str:
    """A whole answer shown as a stream of it would be."""
    stream = MarkdownStream(width)
    return stream.feed(text) + stream.flush()
