"""An answer's Markdown as HTML: no raw HTML, inline images only, links only to the web.

markdown-it-py (CommonMark) with ``html=False`` writes raw HTML in the text as
text; an image is drawn only from a ``data:`` URL whose bytes are an image
(``porcelain/serve/images.py``); an image elsewhere is a link to it, never
loaded (a picture from another origin would leak that the page was read, and
the CSP refuses it anyway); a link is a link only when it points
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
from porcelain.serve.images import image

SAFE_SCHEMES = ("http://", "https://", "mailto:")
DATA_IMAGE = "data:image/"
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
    """A link to the web, or an inline image (an image token only: see ``_link_open``)."""
    return url.strip().lower().startswith((*SAFE_SCHEMES, DATA_IMAGE))


def _image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """An inline ``data:`` image when its bytes are an image (``images.image``);
    an image elsewhere is a link to it (never loaded: it would tell its server)."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    head, _, data = src.partition(",")
    if src.lower().startswith(DATA_IMAGE):
        if not head.lower().endswith(";base64"):
            return str(esc(f"[image {alt}: not base64]"))
        return str(image(data, head[5:].split(";")[0].lower(), alt))
    if src.lower().startswith(SAFE_SCHEMES[:2]):
        return str(tag("a", f"image: {alt or src}", href=src, rel="noopener noreferrer"))
    return str(esc(alt))


def _link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    if str(token.attrGet("href") or "").lower().startswith(DATA_IMAGE):
        token.attrs.pop("href", None)  # a data: URL is an image's source, never a link's
        return "<span>"
    token.attrSet("rel", "noopener noreferrer")
    return str(self.renderToken(tokens, idx, options, env))


def _link_close(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    opening = next(
        (
            t
            for t in reversed(tokens[:idx])
            if t.type == "link_open" and t.level == tokens[idx].level
        ),
        None,
    )
    if opening is not None and opening.attrGet("href") is None:
        return "</span>"
    return str(self.renderToken(tokens, idx, options, env))


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt(
        "commonmark", {"html": False, "highlight": _highlight, "maxNesting": PARSER_NESTING}
    )
    md.validateLink = _safe_link  # type: ignore[method-assign]
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    md.add_render_rule("image", _image)
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
