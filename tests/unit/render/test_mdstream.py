"""An answer rendered as it streams: blocks as they complete, code lines as they
arrive, each line scanned once, and nothing but jp's styles reaching the terminal."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from porcelain.render.codelines import CodeLines, language
from porcelain.render.markdown import render_markdown
from porcelain.render.mdstream import MarkdownStream, render_answer

SGR = re.compile(r"\x1b\[[0-9;]*m")


def visible(text: str) -> str:
    return SGR.sub("", text)


def raw_controls(shown: str) -> list[str]:
    return [
        c for c in visible(shown) if (ord(c) < 0x20 and c not in "\n") or 0x7F <= ord(c) <= 0x9F
    ]


def test_a_stream_shows_each_block_once_it_is_complete() -> None:
    stream = MarkdownStream(width=60)
    assert stream.feed("First **para") == "" and stream.holding
    first = stream.feed("graph**.\n\nNext")
    assert "paragraph" in visible(first) and "Next" not in first
    second = stream.feed(" one.\n\n")
    assert visible(second) == "\nNext one.\n", "a blank line between blocks"
    assert not stream.holding and visible(stream.flush()) == ""
    assert stream.feed("Last words, no newline") == ""
    assert "Last words" in visible(stream.flush())


def test_an_answer_cut_off_keeps_the_lines_of_its_rest() -> None:
    """The held paragraph of an answer that broke off is shown line for line, styled;
    a whole answer's paragraph is joined as Markdown joins it."""
    text = "Done:\n\nfirst **step**\nsecond step\nthird st"
    stream = MarkdownStream(width=60)
    shown = stream.feed(text) + stream.flush(cut=True)
    assert visible(shown) == "Done:\n\nfirst step\nsecond step\nthird st\n"
    assert "\x1b[1mstep\x1b[0m" in shown  # still Markdown: bold is bold
    whole = MarkdownStream(width=60)
    assert visible(whole.feed(text) + whole.flush()).endswith("first step second step third st\n")
    hostile = MarkdownStream(width=60)
    assert raw_controls(hostile.feed("a\x1b[2J\nb\x07") + hostile.flush(cut=True)) == []


def test_code_lines_show_as_they_complete() -> None:
    stream = MarkdownStream(width=60)
    assert "Intro" in visible(stream.feed("Intro\n```python\n"))
    assert stream.feed("x = ") == "", "a line still arriving waits"
    assert visible(stream.feed("1\n")) == " x = 1\n"
    assert visible(stream.feed("\n")) == "\n", "a blank line inside code is code"
    assert visible(stream.feed("y = 2\n```\n")) == " y = 2\n"
    assert visible(stream.feed("after\n\n")) == "\nafter\n"


def test_code_lines_are_highlighted_and_escaped() -> None:
    lines = CodeLines("python")
    shown = lines.line("def f(): return '\x1b]0;T\x07'")
    assert "\x1b[94mdef\x1b[0m" in shown, "keywords styled as rich styles them"
    assert raw_controls(shown) == [] and "\\x1b]0;T\\x07" in visible(shown)
    assert CodeLines("no-such-language").line("\x9b2J plain") == " \\x9b2J plain\n"
    assert language("python title=x") == "python" and language("\x1b[2J") == ""


def test_a_fence_inside_a_list_stays_part_of_its_item() -> None:
    text = "1. Run:\n\n   ```sh\n   cargo run\n\n   cargo test\n   ```\n2. Done\n"
    shown = visible(render_answer(text, width=60))
    assert "cargo run" in shown and "cargo test" in shown and "```" not in shown


def test_chunks_render_as_the_whole_text_does() -> None:
    text = "# T\n\nSome *text*.\n\n1. a\n2. b\n\n```js\nlet a = 1;\n```\nEnd.\n"
    for size in (1, 3, 7):
        stream = MarkdownStream(width=50)
        pieces = "".join(stream.feed(text[i : i + size]) for i in range(0, len(text), size))
        assert pieces + stream.flush() == render_answer(text, width=50)


def test_each_character_is_scanned_once_however_the_chunks_fall() -> None:
    body = "".join(f"line {n} = {n} * 2\n" for n in range(2000))
    text = f"Here:\n\n```python\n{body}```\n\nDone.\n"
    for size in (1, 7, 4096):
        stream = MarkdownStream(width=80)
        shown = "".join(stream.feed(text[i : i + size]) for i in range(0, len(text), size))
        shown += stream.flush()
        assert stream.work == len(text), "one pass over the text, not one per chunk"
        assert visible(shown).count("\n line ") == 2000


def test_a_long_unfinished_line_is_not_rescanned() -> None:
    stream = MarkdownStream(width=80)
    for _ in range(5000):
        assert stream.feed("word ") == ""
    assert stream.work == 0, "nothing is scanned before its line ends"
    assert visible(stream.flush()).count("word") == 5000


PIECES = st.sampled_from(
    [
        "word", "other", "*", "**", "_", "`", "```", "~~~", "# ", "> ", "- ", "1. ", "  ",
        "    ", "[", "](", ")", "<", ">", "<http://x/", "%1B", "%07", "%C2%9B", "%5D",
        "&#x1b;", "&#155;", "&amp;", "\\", "!", "<b>", "</b>", "<div>", "\n", "\n\n",
        "\x1b", "\x1b]0;t\x07", "\x1b]52;c;eA==\x07", "\x1b[2J", "\x9b", "\x07", "\r",
        "\x00", "\x7f", "\u2028", "\t",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@example(["```\n", "\tword"], 1)  # a tab in a streamed code line
@given(st.lists(PIECES, max_size=60), st.integers(min_value=1, max_value=9))
def test_no_control_but_styles_ever_reaches_the_terminal(pieces: list[str], size: int) -> None:
    text = "".join(pieces)
    stream = MarkdownStream(width=60)
    shown = "".join(stream.feed(text[i : i + size]) for i in range(0, len(text), size))
    shown += stream.flush()
    assert raw_controls(shown) == [], f"{text!r} -> {shown!r}"
    assert raw_controls(render_markdown(text, width=40)) == []


WORDS = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta"]), min_size=1, max_size=4)
MARKS = st.sampled_from(["", "> ", "- ", "  - ", "1. ", ">> ", "    ", "# ", "* "])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(MARKS, max_size=12), WORDS), min_size=1, max_size=30))
def test_every_word_of_nested_text_is_shown(lines: list[tuple[list[str], list[str]]]) -> None:
    text = "".join("".join(marks) + " ".join(ws) + "\n" for marks, ws in lines)
    wanted = sorted(w for _, ws in lines for w in ws)
    shown = visible(render_answer(text, width=60))
    assert sorted(re.findall(r"alpha|beta|gamma|delta", shown)) == wanted, (text, shown)
