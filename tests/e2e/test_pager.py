"""Long `print`/`show` output on a terminal goes through the pager; piped, never."""

from __future__ import annotations

from tests.e2e.harness import NO_MARKERS, User
from tests.support.terminal import run_on_terminal

PAGER = "python3 -c \"import sys; d = sys.stdin.read(); print('PAGED<<%d>>' % len(d.splitlines()))\""


def test_long_print_is_paged_on_a_terminal_only(user: User) -> None:
    cid = user.import_(NO_MARKERS)
    env = {**user.env, "JP_PAGER": PAGER, "LINES": "5"}
    code, out = run_on_terminal(("conversation", "print", cid), env, user.root)
    assert code == 0 and b"PAGED<<" in out, out
    code, out = run_on_terminal(("conversation", "print", "--no-pager", cid), env, user.root)
    assert code == 0 and b"PAGED<<" not in out, out
    code, out = run_on_terminal(("conversation", "show", cid), env, user.root)
    assert code == 0 and b"PAGED<<" in out, out
    piped = user.ok("conversation", "print", cid, env={"JP_PAGER": PAGER, "LINES": "5"})
    assert "PAGED<<" not in piped and piped.strip()


def test_short_output_and_a_missing_pager_print_directly(user: User) -> None:
    cid = user.import_(NO_MARKERS)
    env = {**user.env, "JP_PAGER": PAGER, "LINES": "500"}
    code, out = run_on_terminal(("conversation", "show", cid), env, user.root)
    assert code == 0 and b"PAGED<<" not in out and cid.encode() in out, out
    env = {**user.env, "JP_PAGER": "no-such-pager-here", "LINES": "5"}
    code, out = run_on_terminal(("conversation", "print", cid), env, user.root)
    assert code == 0 and b"turn 1" in out, out
