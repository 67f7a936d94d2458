"""`jp conversation ls` on a narrow terminal: a long title is cut with an ellipsis, so
no row wraps into the next; piped, titles stay whole."""

from __future__ import annotations

from tests.e2e.harness import JP, User
from tests.support.terminal import Terminal, without_styles

LONG = "A very long title about setting up the retry policy of the billing client " * 2


def test_a_long_title_is_cut_to_the_terminal_width(user: User) -> None:
    user.ok("q", "--new", "hi")
    user.ok("conversation", "edit", "--title", LONG.strip())
    session = Terminal([str(JP), "conversation", "ls"], user.env, user.root, columns=60)
    code, shown = session.finish()
    assert code == 0, shown
    lines = [ln for ln in without_styles(shown).decode().replace("\r\n", "\n").splitlines() if ln]
    assert lines[0].startswith("ID") and len(lines) == 2, lines
    assert len(lines[1]) <= 60 and lines[1].endswith("…"), lines[1]
    assert LONG.strip() in user.ok("conversation", "ls"), "piped, the title stays whole"
