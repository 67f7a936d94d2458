"""The -k SPEC grammar, reference cases 58-62 and the section 3.4 examples."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from porcelain.domain.compaction.bounds import Count, FromEnd, Position
from porcelain.domain.compaction.dsl import parse_spec
from porcelain.domain.compaction.overlays import ToolCalls
from porcelain.domain.compaction.ranges import RangeOverrides, resolve_rule_range
from porcelain.domain.compaction.rules import Rule, SummarySpec
from porcelain.errors import UsageError

from .builders import turns


def test_policies() -> None:  # case 58
    assert parse_spec("s") == Rule(summary=SummarySpec())
    assert parse_spec("r+t=strip") == Rule(reasoning=True, tool_calls=ToolCalls.STRIP)
    assert parse_spec("reasoning+tools=strip+summarize") == Rule(
        reasoning=True, tool_calls=ToolCalls.STRIP, summary=SummarySpec()
    )
    for text in ("t", "tools", "t=s", " t = strip "):
        assert parse_spec(text).tool_calls is ToolCalls.STRIP, text
    assert parse_spec("t=sreq").tool_calls is ToolCalls.STRIP_REQUESTS
    assert parse_spec("tools=strip-responses").tool_calls is ToolCalls.STRIP_RESPONSES
    assert parse_spec("t=o").tool_calls is ToolCalls.OMIT
    assert parse_spec("r + s").reasoning is True


def test_ranges() -> None:  # case 59
    assert parse_spec("s:..-3").keep_last == FromEnd(3)
    rule = parse_spec("r+t=strip:5..-3")
    assert (rule.keep_first, rule.keep_last) == (Position(5), FromEnd(3))
    assert (parse_spec("s:..").keep_first, parse_spec("s:..").keep_last) == (Count(0), Count(0))
    assert parse_spec("r:5..") == Rule(Position(5), Count(0), reasoning=True)
    assert parse_spec("s:5..10").keep_last == Position(10)
    assert parse_spec("s:..10").keep_first == Count(0)
    assert parse_spec("s:-10..-3").keep_first == FromEnd(10)
    assert parse_spec("s:-3") == parse_spec("s:..-3")
    assert parse_spec("r:5") == parse_spec("r:5..")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "  ",
        "x",
        "s:abc",
        "s:5..x",
        "s:0..",
        "s:0..5",
        "s:-0",
        "t=nope",
        "t=",
        "r=strip",
        "s=true",
        "r+",
        "+r",
        "r++t",
        "s:",
        "r+r",
        "t+t=o",
    ],
)
def test_errors(text: str) -> None:  # case 60
    with pytest.raises(UsageError):
        parse_spec(text)


def test_error_messages_name_the_problem() -> None:
    with pytest.raises(UsageError, match="unknown policy 'x'"):
        parse_spec("r+x")
    with pytest.raises(UsageError, match="'nope'"):
        parse_spec("t=nope")
    with pytest.raises(UsageError, match="'abc'"):
        parse_spec("s:abc")


def test_bounds_of_a_spec() -> None:  # case 61
    rule = parse_spec("r+t=strip:..-3")
    assert rule.keep_first == Count(0) and rule.keep_last == FromEnd(3)
    assert parse_spec("s").keep_first is None and parse_spec("s").keep_last is None


@pytest.mark.parametrize(
    "text, count, expected",
    [
        ("s:..-3", 20, (0, 16)),
        ("r+t:5..", 20, (4, 19)),
        ("s:5..10", 20, (4, 9)),
        ("s:..10", 20, (0, 9)),
        ("s:..", 20, (0, 19)),
        ("s:-10..-3", 20, (9, 16)),
        ("t=sres:..-3", 20, (0, 16)),
        ("s", 20, (1, 18)),
        ("r:-20", 20, None),
        ("r:-20", 30, (0, 9)),
    ],
)
def test_reference_examples(text: str, count: int, expected: tuple[int, int] | None) -> None:
    rule = parse_spec(text)
    now = datetime(2030, 1, 1, tzinfo=UTC)
    got = resolve_rule_range(turns(count), rule.keep_first, rule.keep_last, RangeOverrides(), now)
    assert got == expected
