"""The review page names one turn `turn N`, a range `turns A-B`, as print does."""

from __future__ import annotations

from porcelain.serve.pages.review import _proposal, _span


def test_one_turn_is_turn_n_and_a_range_keeps_its_dash() -> None:
    one = {"number": 1, "from_turn": 3, "to_turn": 3, "author": "jp", "summary": "s"}
    shown = str(_proposal(one, None))
    assert "Proposal 1: turn 3, by jp" in shown and "turns 3-3" not in shown
    assert _span({"from_turn": 2, "to_turn": 6}) == "turns 2-6"
