"""The Markdown renderer of answers on a terminal: whole blocks, escaped first."""

from __future__ import annotations

import re

import pytest

from porcelain.render.markdown import MarkdownStream, complete_blocks, render_markdown

SGR = re.compile(r"\x1b\[[0-9;]*m")


def visible(text: str) -> str:
    return SGR.sub("", text)


@pytest.mark.parametrize(
    "text, whole",
    [
        ("no blank line yet", 0),
        ("one\n\ntwo", len("one\n\n")),
        ("one\n\ntwo\n\nthr", len("one\n\ntwo\n\n")),
        ("```\ncode\n\nmore\n", 0),  # a blank line inside a fence ends nothing
        ("```\ncode\n\nmore\n```\nafter", len("```\ncode\n\nmore\n```\n")),
        ("para\n\n\n\nnext", len("para\n\n")),
        ("para\n\n   ", len("para\n\n")),
    ],
)
def test_complete_blocks(text: str, whole: int) -> None:
    assert complete_blocks(text) == whole


def test_rendering_styles_and_drops_the_markup() -> None:
    shown = render_markdown("Use **clap** and `args`.\n\n- one\n- two\n", width=60)
    assert "\x1b[1mclap\x1b[0m" in shown
    plain = visible(shown)
    assert "**" not in plain and "`" not in plain and "• one" in plain
    assert all(line == line.rstrip() for line in plain.splitlines()), "no padding to the width"


def test_untrusted_controls_are_escaped_before_rendering() -> None:
    shown = render_markdown("**x\x1b]0;T\x07** \x9b2J [a](http://h\x1b[2J)\n", width=80)
    plain = visible(shown)
    assert not [c for c in plain if ord(c) < 0x20 and c != "\n" or 0x7F <= ord(c) <= 0x9F]
    assert "\\x1b]0;T\\x07" in plain and "\\x9b2J" in plain
    assert "\x1b]8;" not in shown, "links are text, never terminal hyperlinks"


def test_a_stream_shows_each_block_once_it_is_complete() -> None:
    stream = MarkdownStream(width=60)
    assert stream.feed("First **para") == ""
    first = stream.feed("graph**.\n\n```py\nx = 1\n\n")
    assert "paragraph" in visible(first) and "x = 1" not in first
    second = stream.feed("y = 2\n```\n")
    assert "x = 1" in visible(second) and "y = 2" in visible(second)
    assert second.startswith("\n"), "a blank line between blocks"
    assert visible(stream.flush()) == ""
    chunks = "Last words, no newline"
    assert stream.feed(chunks) == "" and "Last words" in visible(stream.flush())


def test_chunks_render_as_the_whole_text_does() -> None:
    text = "# T\n\nSome *text*.\n\n1. a\n2. b\n\nEnd.\n"
    stream = MarkdownStream(width=50)
    pieces = "".join(stream.feed(text[i : i + 3]) for i in range(0, len(text), 3)) + stream.flush()
    assert visible(pieces).split() == visible(render_markdown(text, width=50)).split()


def test_a_renderer_failure_shows_the_escaped_text(monkeypatch: pytest.MonkeyPatch) -> None:
    import rich.markdown

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("renderer bug")

    monkeypatch.setattr(rich.markdown.Markdown, "__init__", broken)
    assert render_markdown("plain **text** \x1b[2J") == "plain **text** \\x1b[2J\n"
