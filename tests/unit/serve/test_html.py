"""The page writer and the Markdown renderer of `jp serve`: text never becomes markup."""

from __future__ import annotations

import pytest

from porcelain.serve.html import Markup, esc, href, link, tag
from porcelain.serve.markdown import render


def test_text_is_escaped_and_markup_is_kept() -> None:
    assert esc("<b>&'\"") == "&lt;b&gt;&amp;&#x27;&quot;"
    assert esc(Markup("<b>")) == "<b>"
    assert tag("p", "<i>", class_='x"y') == '<p class="x&quot;y">&lt;i&gt;</p>'


def test_links_quote_the_path_and_drop_empty_values() -> None:
    assert href("/c/a b", {"q": "x&y", "page": None, "all": False}) == "/c/a%20b?q=x%26y"
    assert link("/", "<x>") == '<a href="/">&lt;x&gt;</a>'


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "[x](javascript:alert(1))",
        "[x](JAVASCRIPT:alert(1))",
        "[x](data:text/html,<script>alert(1)</script>)",
        "![x](javascript:alert(1))",
        "<a href='javascript:alert(1)'>x</a>",
        "```html\n<script>alert(1)</script>\n```",
    ],
)
def test_markdown_writes_no_tag_or_link_the_text_asked_for(text: str) -> None:
    out = render(text).lower()
    assert "<script" not in out and "<img" not in out
    assert 'href="javascript' not in out and 'href="data' not in out


def test_markdown_renders_what_is_safe() -> None:
    out = render("**b** [site](https://example.invalid/)\n\n```python\nx = 1\n```\n")
    assert "<strong>b</strong>" in out
    assert '<a href="https://example.invalid/" rel="noopener noreferrer">site</a>' in out
    assert 'class="hl"' in out
