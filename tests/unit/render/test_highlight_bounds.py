"""Fenced code is highlighted only by an allowed lexer and within a size, on the
terminal (whole blocks and streamed lines) and in the web view: the info
string is untrusted, and some Pygments lexers are far worse than linear
(``systemd`` on 2,000 spaces: about 22 s)."""

from __future__ import annotations

import subprocess
import sys

from porcelain.domain.highlight import MAX_BLOCK, MAX_LINE, highlighted, lexer_name
from porcelain.render.codelines import CodeLines
from porcelain.render.markdown import render_markdown
from porcelain.serve.markdown import render

STYLED = "\x1b["


def fence(lang: str, code: str) -> str:
    return f"```{lang}\n{code}\n```\n"


def test_the_lexer_is_one_of_the_allowed_and_the_block_small() -> None:
    assert lexer_name("Python extra words") == "python" and lexer_name("js") == "javascript"
    for bad in ("systemd", "make", "console", "nonsense", "", "   "):
        assert lexer_name(bad) is None, bad
    assert highlighted("python", "x = 1\n" * 10) == "python"
    assert highlighted("python", "x" * (MAX_LINE + 1)) is None
    assert highlighted("python", "x = 1\n" * (MAX_BLOCK // 6 + 1)) is None


def test_the_web_view_shows_a_refused_lexer_or_a_big_block_as_plain_text() -> None:
    assert 'class="hl"' in render(fence("python", "def f(): pass"))
    for text in (
        fence("systemd", "[Unit]\nDescription=x"),
        fence("python", "x" * (MAX_LINE + 1)),
        fence("python", "x = 1\n" * (MAX_BLOCK // 6 + 1)),
    ):
        shown = render(text)
        assert 'class="hl"' not in shown and "<pre><code" in shown


def test_the_terminal_shows_a_refused_lexer_or_a_big_block_as_plain_text() -> None:
    assert STYLED in render_markdown(fence("python", "def f(): pass"), 80)
    assert STYLED not in render_markdown(fence("systemd", "[Unit]\nDescription=x"), 80)
    assert STYLED not in render_markdown(fence("python", "x = 1\n" * (MAX_BLOCK // 6 + 1)), 200)
    lines = CodeLines("python")
    assert STYLED in lines.line("def f(): pass")
    assert STYLED not in lines.line("def f(): pass  # " + "x" * MAX_LINE)
    assert STYLED not in CodeLines("systemd").line("[Unit]")
    for _ in range(MAX_BLOCK // 10):
        lines.line("x = 12345")
    assert STYLED not in lines.line("def f(): pass")  # past the block's size: plain


def test_the_known_bad_case_is_quick_everywhere() -> None:
    """systemd on 2,000 spaces (about 22 s highlighted): under 20 s for all three."""
    code = (
        "from porcelain.render.codelines import CodeLines\n"
        "from porcelain.render.markdown import render_markdown\n"
        "from porcelain.serve.markdown import render\n"
        "text = '```systemd\\n' + ' ' * 2000 + 'x\\n```\\n'\n"
        "render(text); render_markdown(text, 80); CodeLines('systemd').line(' ' * 2000 + 'x')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=20)
