"""`jp conversation grep`: `-l` (conversations only), `-C N` (the lines around a hit)
and hits grouped by conversation and turn on a terminal."""

from __future__ import annotations

import json

from tests.e2e.harness import OWN, RUST, User
from tests.support.terminal import raw_controls, run_on_terminal, without_styles

COMPACTED = OWN / "17800000103-with-compaction"


def test_l_prints_each_matching_conversation_once(user: User) -> None:
    rust = user.import_(RUST)
    billing = user.import_(COMPACTED)
    assert user.ok("conversation", "grep", "-l", "xdist") == f"{billing}\n"
    both = user.ok("conversation", "grep", "-l", "-i", "the").splitlines()
    assert sorted(both) == sorted([rust, billing])
    assert json.loads(user.ok("-F", "json", "conversation", "grep", "-l", "xdist")) == [billing]
    assert user.run("conversation", "grep", "-l", "no-such-words-anywhere").returncode == 1


def test_context_lines_come_from_the_same_message(user: User) -> None:
    billing = user.import_(COMPACTED)
    out = user.ok(
        "conversation", "grep", "--scope", "tool-result", "-C", "1", "PYTEST_XDIST_WORKER"
    )
    lines = out.splitlines()
    hit = lines.index(
        f'{billing}:10:tool-result:WORKER = os.environ.get("PYTEST_XDIST_WORKER", "gw0")'
    )
    assert lines[hit - 1] == f"{billing}-10-tool-result-import pytest"
    assert lines[hit + 1].startswith(f"{billing}-10-tool-result-TEST_DATABASE_URL")
    assert "--" in lines
    data = json.loads(
        user.ok("-F", "json", "conversation", "grep", "-s", "tool-result", "-C", "1", "gw0")
    )
    assert data[0]["before"] and "after" in data[0]
    assert user.fail("conversation", "grep", "-C", "-1", "x", code=2)


def test_hits_are_grouped_by_conversation_and_turn_on_a_terminal(user: User) -> None:
    billing = user.import_(COMPACTED)
    user.ok("conversation", "edit", billing, "--title", "Billing")
    code, shown = run_on_terminal(["conversation", "grep", "xdist"], user.env, user.root)
    assert code == 0
    text = without_styles(shown).decode().replace("\r\n", "\n")
    assert f"{billing}: Billing\n  turn 8\n    user: Can we run it in parallel" in text
    assert "  turn 10\n" in text
    assert f"{billing}:8:" not in text, "no ID:TURN prefix under a heading"
    piped = user.ok("conversation", "grep", "xdist")
    assert piped.startswith(f"{billing}:8:user:"), "a pipe keeps one hit per line"
    headed = user.ok("conversation", "grep", "--heading", "xdist")
    assert headed.startswith(f"{billing}: Billing\n  turn 8\n")


def test_a_hostile_title_in_a_heading_or_a_title_search_is_shown_harmless(user: User) -> None:
    billing = user.import_(COMPACTED)
    user.ok("conversation", "edit", billing, "--title", "evil \x1b]0;owned\x07\x1b[2J title")
    code, shown = run_on_terminal(["conversation", "grep", "xdist"], user.env, user.root)
    assert code == 0 and raw_controls(without_styles(shown)) == [], shown
    code, shown = run_on_terminal(["conversation", "use", "evil"], user.env, user.root)
    assert code == 0 and raw_controls(without_styles(shown)) == [], shown
    assert user.active() == billing
