"""One block of an answer shown as Markdown on a terminal (headings, emphasis,
lists, code), escaped at every step.

Only on a terminal that takes colours (stdout a tty, no NO_COLOR, TERM not
dumb) and without ``--no-render``; piped output stays the model's exact text.
``render/mdstream.py`` cuts an answer into blocks and streams them.

The text is untrusted, and the parser is an interpreter of it, so escaping
happens three times:

1. the source is escaped (``escape_untrusted``) before it is parsed;
2. the parser's tokens are escaped again before they are rendered: Markdown
   decodes entities (``&#x1b;``) and autolinks' percent-escapes (``%1B``,
   ``%C2%9B``) into characters the source did not hold; autolink text is
   kept as written, never decoded;
3. what the renderer wrote is checked: any control character that is not part
   of an SGR style (``ESC [ digits ; m``) is escaped.

So the only control sequences that reach the terminal are styles; links are
text, never terminal hyperlinks.

Nothing of the answer is hidden: raw HTML and link reference definitions are
shown as text, and a block nested deeper than the terminal can indent
(``MAX_DEPTH``, or fewer columns than the indentation needs) or a table too
wide for it (rich would cut its cells short) is shown as its escaped source
instead of being dropped.
"""

from __future__ import annotations

import io
import re
import shutil
from typing import TYPE_CHECKING, Any

from porcelain.domain.escaping import escape_untrusted
from porcelain.domain.highlight import highlighted

if TYPE_CHECKING:
    from markdown_it.token import Token

# containers (quotes, lists) one block may nest before it is shown as source
MAX_DEPTH = 12
# what the parser may nest (its own limit, 20, drops the rest of the text silently)
PARSER_NESTING = 4 * MAX_DEPTH + 8
_COLUMNS_PER_LEVEL = 4
_NARROWEST = 20
_SGR = re.compile(r"\x1b\[[0-9;]*m")
_CUT = "\u2026"  # the ellipsis rich ends a cut cell with
_CONTAINERS = frozenset({"blockquote_open", "bullet_list_open", "ordered_list_open"})


def terminal_columns(width: int | None = None) -> int:
    return max(_NARROWEST, width or shutil.get_terminal_size((80, 24)).columns)


def only_styles(rendered: str) -> str:
    """``rendered`` with every control character escaped except SGR styles."""
    parts = []
    last = 0
    for match in _SGR.finditer(rendered):
        parts.append(escape_untrusted(rendered[last : match.start()]))
        parts.append(match.group())
        last = match.end()
    parts.append(escape_untrusted(rendered[last:]))
    return "".join(parts)


def render_markdown(text: str, width: int | None = None, breaks: bool = False) -> str:
    """``text`` (one or more untrusted Markdown blocks) as styled terminal text,
    ending in a newline (empty when the text shows nothing).  ``breaks``: every
    newline of a paragraph stays a line break (text that was cut off, whose
    lines are not known to make one paragraph)."""
    columns = terminal_columns(width)
    safe = escape_untrusted(text)
    try:
        shown = _render(safe, columns, breaks)
    except Exception:  # noqa: BLE001 (a renderer's bug must never hide an answer)
        shown = None
    if shown is None:  # too deep to render, or the renderer failed: the source, escaped
        return safe if safe.endswith("\n") else safe + "\n"
    lines = [ln.rstrip() for ln in shown.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return only_styles("\n".join(lines) + "\n") if lines else ""


def _render(safe: str, columns: int, breaks: bool = False) -> str | None:
    # lazy: rich costs about 90 ms to import; only an answer on a terminal needs it
    from rich.console import Console

    tokens = parse(safe, breaks)
    if depth(tokens) > min(MAX_DEPTH, (columns - _NARROWEST) // _COLUMNS_PER_LEVEL):
        return None
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=True,
        color_system="standard",
        width=columns,
        highlight=False,
        emoji=False,
        markup=False,
    )
    console.print(_markdown(tokens))
    shown = buffer.getvalue()
    if shown.count(_CUT) > safe.count(_CUT):  # a table too wide: cells cut short
        return None
    return shown


def parse(safe: str, breaks: bool = False) -> list[Token]:
    """The tokens of ``safe`` (escaped Markdown), each text escaped again
    (``breaks``: a newline inside a paragraph is a line break, not a space)."""
    # lazy: markdown-it loads with rich, for answers on a terminal only
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"maxNesting": PARSER_NESTING})
    parser.enable("strikethrough").enable("table")
    parser.disable("reference")  # a definition no link uses would vanish: shown as text
    parser.normalizeLinkText = _as_written  # type: ignore[method-assign,assignment]
    tokens = parser.parse(safe)
    _escape_tokens(tokens)
    if breaks:
        _hard_breaks(tokens)
    return tokens


def _hard_breaks(tokens: list[Token]) -> None:
    """Every soft line break (a newline inside a paragraph, shown as a space) a hard one."""
    for token in tokens:
        if token.type == "softbreak":
            token.type, token.tag = "hardbreak", "br"
        if token.children:
            _hard_breaks(token.children)


def _as_written(text: str) -> str:
    return text


def _escape_tokens(tokens: list[Token]) -> None:
    for token in tokens:
        token.content = escape_untrusted(token.content)
        for key, value in list(token.attrs.items()):
            token.attrs[key] = escape_untrusted(str(value))
        if token.type == "fence":  # a lexer jp bounds, or plain text (domain/highlight.py)
            token.info = highlighted(token.info, token.content) or ""
        if token.type == "html_block":  # shown as it was written, not hidden
            token.type, token.tag, token.info = "code_block", "code", ""
        elif token.type == "html_inline" and token.content not in ("<kbd>", "</kbd>"):
            token.type = "text"
        if token.children:
            _escape_tokens(token.children)


def depth(tokens: list[Token]) -> int:
    """How many quotes and lists the deepest part of ``tokens`` is nested in."""
    deepest = level = 0
    for token in tokens:
        if token.type in _CONTAINERS:
            level += 1
            deepest = max(deepest, level)
        elif token.type.replace("_close", "_open") in _CONTAINERS:
            level -= 1
    return deepest


def _markdown(tokens: list[Token]) -> Any:
    # lazy: as above
    from rich.markdown import Markdown

    shown = Markdown("", hyperlinks=False, code_theme="ansi_dark")
    shown.parsed = tokens
    return shown
