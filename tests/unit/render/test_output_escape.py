"""Untrusted text on a terminal: every control character escaped, visibly.

``escape_untrusted`` and ``UntrustedStream`` are pure; ``Output`` is driven
with streams that claim to be a terminal (or not).
"""

from __future__ import annotations

import io
import json

import pytest

from porcelain.render.output import Output, UntrustedStream, escape_untrusted, untrusted_field

TITLE_ATTACK = "\x1b]0;PWNED\x07"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def raw_controls(text: str) -> list[str]:
    """Control characters a terminal would act on (newline and tab aside)."""
    return [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


@pytest.mark.parametrize("code", [c for c in range(0x20) if c not in (0x09, 0x0A)])
def test_every_c0_character_but_newline_and_tab_is_escaped(code: int) -> None:
    shown = escape_untrusted(f"a{chr(code)}b")
    assert not raw_controls(shown)
    assert shown.startswith("a") and shown.endswith("b") and len(shown) > 3


@pytest.mark.parametrize("code", range(0x7F, 0xA0))
def test_del_and_every_c1_character_is_escaped(code: int) -> None:
    assert escape_untrusted(f"a{chr(code)}b") == f"a\\x{code:02x}b"


def test_the_visible_forms() -> None:
    assert escape_untrusted(TITLE_ATTACK + "title") == "\\x1b]0;PWNED\\x07title"
    assert escape_untrusted("\x1b[2J\x1b[H") == "\\x1b[2J\\x1b[H"  # clear the screen
    assert escape_untrusted("\x1b]52;c;cHduZWQ=\x07") == "\\x1b]52;c;cHduZWQ=\\x07"  # clipboard
    assert escape_untrusted("\x9b31m") == "\\x9b31m"  # C1 CSI
    assert escape_untrusted("safe\rEVIL") == "safe\\rEVIL"  # a bare CR overwrites the line
    assert escape_untrusted("\x00\x7f") == "\\x00\\x7f"


def test_newline_tab_and_windows_line_ends_pass_in_multi_line_text() -> None:
    text = "line one\n\tindented\r\nline three\n"
    assert escape_untrusted(text) == text
    plain = "ordinary text, ünïcödé, emoji \U0001f600 and a \\x1b written out"
    assert escape_untrusted(plain) is plain


def test_one_line_escapes_newline_tab_and_separators_too() -> None:
    shown = escape_untrusted("a\nb\tc\r\nd\u2028e\u2029f\x85g", one_line=True)
    assert shown == "a\\nb\\tc\\r\\nd\\u2028e\\u2029f\\x85g"


def test_a_field_never_holds_a_line_break_but_keeps_the_rest_for_the_stream() -> None:
    field = untrusted_field("real\njp-c1  1  2  fake\ttab\x0bvt\x0cff\x1cfs\u2028ls\x1b")
    assert "\n" not in field and "\t" not in field
    assert field.splitlines() == [field]  # Python's own idea of a line break
    assert field.endswith("\x1b"), "ESC is left to Output, which escapes it on a terminal only"
    assert untrusted_field(None) == "None" and untrusted_field("plain") == "plain"


@pytest.mark.parametrize("cut", range(1, len(TITLE_ATTACK)))
def test_a_sequence_split_across_chunks_is_escaped(cut: int) -> None:
    stream = UntrustedStream(terminal=True)
    shown = stream.feed("before " + TITLE_ATTACK[:cut]) + stream.feed(TITLE_ATTACK[cut:] + " after")
    shown += stream.flush()
    assert shown == "before \\x1b]0;PWNED\\x07 after"


def test_a_stream_in_one_character_chunks() -> None:
    text = "a\x1b[31mred\x1b[0m\r\nnext\rover\x07\r"
    stream = UntrustedStream(terminal=True)
    shown = "".join(stream.feed(c) for c in text) + stream.flush()
    assert shown == escape_untrusted(text)
    assert shown == "a\\x1b[31mred\\x1b[0m\r\nnext\\rover\\x07\\r"


def test_a_cr_at_the_end_of_a_chunk_waits_for_the_next() -> None:
    stream = UntrustedStream(terminal=True)
    assert stream.feed("line\r") == "line"
    assert stream.feed("\nmore") == "\r\nmore"
    assert stream.feed("x\r") == "x"
    assert stream.feed("y") == "\\ry"
    assert stream.flush() == ""


def test_a_stream_that_is_not_a_terminal_passes_every_byte() -> None:
    stream = UntrustedStream(terminal=False)
    assert stream.feed(TITLE_ATTACK + "\r") == TITLE_ATTACK + "\r"
    assert stream.flush() == ""


def test_output_escapes_on_a_terminal_only() -> None:
    tty, tty_err = Terminal(), Terminal()
    out = Output(out=tty, err=tty_err)
    out.line(TITLE_ATTACK)
    out.lines(["a\x07", "b"])
    out.write("\x1b[2J")
    out.write_err("\x9b")
    out.note("note \x1b")
    out.error("quoting \x1b]0;x\x07", "hint \x07")
    for text in (tty.getvalue(), tty_err.getvalue()):
        assert not raw_controls(text), text
    assert "PWNED" in tty.getvalue() and "error: quoting \\x1b]0;x\\x07" in tty_err.getvalue()

    piped, piped_err = io.StringIO(), io.StringIO()
    out = Output(out=piped, err=piped_err)
    out.line(TITLE_ATTACK)
    out.note("note \x1b")
    assert piped.getvalue() == TITLE_ATTACK + "\n", "piped text stays byte-exact"
    assert piped_err.getvalue() == "note \x1b\n"


def test_confirm_escapes_the_question_on_a_terminal() -> None:
    err = Terminal()
    answer = Output(out=Terminal(), err=err).confirm("Delete \x1b]0;x\x07?", io.StringIO("y\n"))
    assert answer and not raw_controls(err.getvalue())


@pytest.mark.parametrize("stream", [Terminal, io.StringIO])
def test_json_is_exact_json_and_never_raw_control_characters(stream: type[io.StringIO]) -> None:
    value = {"title": TITLE_ATTACK + "\x7f\x9b\u2028\n\ttab", "ok": "ünï"}
    out = stream()
    Output(fmt="json", out=out).data(value)
    text = out.getvalue()
    assert json.loads(text) == value
    assert not raw_controls(text.replace("\n", ""))
    assert "ünï" in text, "JSON keeps non-ASCII text readable"
