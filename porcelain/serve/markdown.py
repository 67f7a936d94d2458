"""An answer's Markdown as HTML: no raw HTML, no images, links only to the web.

markdown-it-py (CommonMark) with ``html=False`` writes raw HTML in the text as
text; images are off (a picture from another origin would leak that the page
was read, and the CSP refuses it anyway); a link is a link only when it points
at http, https or mailto, and then it carries ``rel="noopener noreferrer"``.
Nothing of the answer is hidden: markdown-it skips whatever is nested deeper
than its nesting limit, so the limit is raised past ``MAX_DEPTH`` containers
(the terminal's, ``render/markdown.py``) and a text nested deeper than that
is shown as its escaped source, whole, as the terminal shows it.
Fenced code is highlighted by Pygments, whose output escapes the code, when its
lexer is one jp allows and the block is small (``domain/highlight.py``: some
lexers are far worse than linear); otherwise it is shown as plain text.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from pygments import highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
from pygments.util import ClassNotFound  # type: ignore[import-untyped]

from porcelain.domain.highlight import highlighted
from porcelain.render.markdown import MAX_DEPTH, PARSER_NESTING, depth
from porcelain.serve.html import Markup, esc, tag

SAFE_SCHEMES = ("http://", "https://", "mailto:")
FORMATTER = HtmlFormatter(cssclass="hl", wrapcode=True)


def _highlight(code: str, lang: str, _attrs: str) -> str:
    name = highlighted(lang, code)
    try:
        lexer = get_lexer_by_name(name) if name is not None else None
    except ClassNotFound:
        lexer = None
    if lexer is None:
        return ""  # markdown-it then writes the code escaped, unhighlighted
    return str(highlight(code, lexer, FORMATTER))


def _safe_link(url: str) -> bool:
    return url.strip().lower().startswith(SAFE_SCHEMES)


def _link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    tokens[idx].attrSet("rel", "noopener noreferrer")
    return str(self.renderToken(tokens, idx, options, env))


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt(
        "commonmark", {"html": False, "highlight": _highlight, "maxNesting": PARSER_NESTING}
    )
    md.disable("image")
    md.validateLink = _safe_link  # type: ignore[method-assign]
    md.add_render_rule("link_open", _link_open)
    return md


def render(text: str) -> Markup:
    """``text`` (untrusted Markdown) as HTML that holds no tag the text wrote; when
    it nests deeper than ``MAX_DEPTH`` quotes and lists, its source, escaped."""
    md = _parser()
    tokens = md.parse(text)
    if depth(tokens) <= MAX_DEPTH:
        return Markup(md.renderer.render(tokens, md.options, {}))
    lines = text.splitlines(keepends=True)
    shown = []
    for block in _top_blocks(tokens):
        if depth(block) <= MAX_DEPTH or not block[0].map:
            shown.append(md.renderer.render(block, md.options, {}))
        else:  # this block only, as written
            first, last = block[0].map
            shown.append(tag("pre", "".join(lines[first:last]), class_="md-source"))
    return Markup("".join(shown))


def _top_blocks(tokens: list[Any]) -> list[list[Any]]:
    """``tokens`` cut into their top-level blocks (an open token to its close)."""
    blocks: list[list[Any]] = []
    level = 0
    for token in tokens:
        if level == 0:
            blocks.append([])
        blocks[-1].append(token)
        level += token.nesting
    return blocks


def code_style() -> str:
    """The highlighter's CSS (served in /static/style.css: no inline style)."""
    return str(FORMATTER.get_style_defs(".hl"))


def plain(text: str) -> Markup:
    return esc(text)
