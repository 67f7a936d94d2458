"""The Markdown renderer of answers on a terminal: escaped before parsing, after
parsing and after rendering; nothing of the answer hidden."""

from __future__ import annotations

import re

import pytest

from porcelain.render.markdown import MAX_DEPTH, only_styles, render_markdown
from porcelain.render.mdstream import render_answer

SGR = re.compile(r"\x1b\[[0-9;]*m")


def visible(text: str) -> str:
    return SGR.sub("", text)


def raw_controls(shown: str) -> list[str]:
    """Control characters left once jp's own styles (SGR) are taken out."""
    return [
        c for c in visible(shown) if (ord(c) < 0x20 and c not in "\n") or 0x7F <= ord(c) <= 0x9F
    ]


def words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9]+", text)


def test_rendering_styles_and_drops_the_markup() -> None:
    shown = render_markdown("Use **clap** and `args`.\n\n- one\n- two\n", width=60)
    assert "\x1b[1mclap\x1b[0m" in shown
    plain = visible(shown)
    assert "**" not in plain and "`" not in plain and "• one" in plain
    assert all(line == line.rstrip() for line in plain.splitlines()), "no padding to the width"


def test_untrusted_controls_are_escaped_before_rendering() -> None:
    shown = render_markdown("**x\x1b]0;T\x07** \x9b2J [a](http://h\x1b[2J)\n", width=80)
    assert raw_controls(shown) == []
    plain = visible(shown)
    assert "\\x1b]0;T\\x07" in plain and "\\x9b2J" in plain
    assert "\x1b]8;" not in shown, "links are text, never terminal hyperlinks"


HOSTILE = [
    pytest.param("<http://x/%1B]0;PWNED%07>\n", "%1B]0;PWNED%07", id="autolink-osc-title"),
    pytest.param("<http://x/%C2%9B2J>\n", "%C2%9B2J", id="autolink-c1-csi"),
    pytest.param("<mailto:a%1B]52;c;ZXZpbA==%07@x>\n", "%1B]52;c;", id="autolink-osc52"),
    pytest.param("<a%1B[2J@example.com>\n", "%1B[2J", id="email-autolink"),
    pytest.param("<%1B]0;x%07>\n", "%1B]0;x%07", id="not-an-autolink"),
    pytest.param("[t](http://x/%1B]8;;http://evil%1B%5C)\n", "http://x/", id="link-target"),
    pytest.param("x\x1b]52;c;ZXZpbA==\x07y\n", "\\x1b]52;c;ZXZpbA==\\x07", id="raw-osc52"),
    pytest.param("&#x1b;]0;T&#7; &#155;2J\n", "]0;T", id="entities"),
    pytest.param("```\n\x1b[2J\x9b31m\n```\n", "\\x1b[2J\\x9b31m", id="raw-in-code"),
    pytest.param("<div>\x1b]0;T\x07</div>\n", "\\x1b]0;T\\x07", id="html-block"),
    pytest.param("![%1B]0;T%07](http://i/%1B)\n", "]0;T", id="image"),
]


@pytest.mark.parametrize("text, shown_as", HOSTILE)
def test_hostile_markdown_reaches_the_terminal_escaped(text: str, shown_as: str) -> None:
    for shown in (render_markdown(text, width=80), render_answer(text, width=80)):
        assert raw_controls(shown) == [], f"raw controls from {text!r}: {shown!r}"
        assert shown_as in visible(shown)


def test_autolinks_are_shown_as_written() -> None:
    shown = visible(render_markdown("see <http://example.com/a%20b>\n", width=80))
    assert "http://example.com/a%20b" in shown


def test_a_smuggled_style_from_the_parser_is_escaped_too() -> None:
    assert only_styles("\x1b[1mok\x1b[0m \x1b]0;T\x07 \x9b2J") == (
        "\x1b[1mok\x1b[0m \\x1b]0;T\\x07 \\x9b2J"
    )


@pytest.mark.parametrize("levels", [5, 10, 11, 20, 40])
def test_deep_lists_show_every_word(levels: int) -> None:
    text = "".join("  " * i + f"- word{i}\n" for i in range(levels))
    shown = visible(render_answer(text, width=80))
    assert [f"word{i}" for i in range(levels)] == [w for w in words(shown) if w.startswith("word")]


@pytest.mark.parametrize("levels", [5, 19, 20, 21, 40, 200])
def test_deep_quotes_show_every_word(levels: int) -> None:
    text = "".join(">" * (i + 1) + f" quote{i}\n" for i in range(levels))
    shown = visible(render_answer(text, width=80))
    assert [f"quote{i}" for i in range(levels)] == [
        w for w in words(shown) if w.startswith("quote")
    ]


def test_a_block_too_deep_for_the_terminal_is_shown_as_its_source() -> None:
    text = "".join(">" * (i + 1) + f" q{i}\n" for i in range(MAX_DEPTH + 1))
    assert visible(render_markdown(text, width=200)) == text
    shallow = "> > two levels\n"
    assert ">" not in visible(render_markdown(shallow, width=200)), "rendered as quotes"
    assert visible(render_markdown(shallow, width=20)).strip().endswith("two levels")


def test_deep_emphasis_and_links_keep_their_words() -> None:
    text = "*" * 60 + "deep" + "*" * 60 + " " + "[" * 30 + "inner" + "]" * 30 + "\n"
    shown = visible(render_markdown(text, width=80))
    assert "deep" in shown and "inner" in shown


def test_raw_html_is_shown_not_hidden() -> None:
    shown = visible(render_answer("<details>\nsecret plan\n</details>\n\na <b>bold</b> b\n"))
    assert "secret plan" in shown and "<details>" in shown and "<b>bold</b>" in shown


def test_a_renderer_failure_shows_the_escaped_text(monkeypatch: pytest.MonkeyPatch) -> None:
    import rich.markdown

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("renderer bug")

    monkeypatch.setattr(rich.markdown.Markdown, "__init__", broken)
    assert render_markdown("plain **text** \x1b[2J") == "plain **text** \\x1b[2J\n"


def test_a_table_too_wide_for_the_terminal_is_shown_as_its_source() -> None:
    head = "| " + " | ".join(f"column{i} longword{i}" for i in range(8)) + " |\n"
    table = head + "|" + "---|" * 8 + "\n| " + " | ".join(f"v{i}" for i in range(8)) + " |\n"
    narrow = visible(render_markdown(table, width=40))
    assert narrow == table, "every cell whole, not cut short with an ellipsis"
    for columns in (20, 60, 100, 200):  # rendered where it fits, never cut short
        assert "\u2026" not in render_markdown(table, width=columns)
    wide = visible(render_markdown("| a | b |\n|---|---|\n| 1 | 2 |\n", width=40))
    assert "|" not in wide and "1" in wide, "a table that fits is rendered"


def test_a_link_definition_is_shown_not_swallowed() -> None:
    shown = visible(render_markdown("[a]: http://hidden.example\n\nsee [x][a]\n", width=80))
    assert "http://hidden.example" in shown and "[x][a]" in shown
