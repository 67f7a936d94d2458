"""The recall tool's pure part: which turns are compacted, the model's request
read and checked, the events selected, the answer bounded (no git, no model)."""

from __future__ import annotations

import pytest

from porcelain.domain.compaction.overlays import ToolCalls
from porcelain.domain.compaction.projection import SUMMARY_REQUEST, project
from porcelain.domain.recall import (
    RecallError,
    compacted_turns,
    parse_request,
    recall,
    render,
    select,
    summary_note,
)
from porcelain.domain.stream import Stream

from .compaction.builders import comp, turns, two_turns


def six_with_summary() -> Stream:
    """Six turns (q0..q5 / m0..m5); turns 2-4 (1-based) summarized."""
    return Stream([*turns(6), comp(1, 3, summary="short")])


def test_the_compacted_turns_are_those_a_standing_overlay_covers() -> None:
    assert compacted_turns(six_with_summary()) == [1, 2, 3]
    assert compacted_turns(Stream(turns(3))) == []
    mixed = Stream([*turns(6), comp(0, 0, reasoning=True), comp(4, 9, tools=ToolCalls.OMIT)])
    assert compacted_turns(mixed) == [0, 4, 5], "a range past the end stops at the last turn"


def test_a_range_is_one_based_and_inclusive() -> None:
    query = parse_request({"from_turn": 2, "to_turn": 4}, six_with_summary())
    assert query.turns == range(1, 4) and query.matcher is None
    assert parse_request({"from_turn": 3}, six_with_summary()).turns == range(2, 3)
    assert parse_request({"to_turn": 3}, six_with_summary()).turns == range(2, 3)


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"from_turn": 5, "to_turn": 6}, "turns 5-6 are not compacted"),
        ({"from_turn": 1}, "turn 1 is not compacted"),
        ({"from_turn": 3, "to_turn": 9}, "turn 9 does not exist: this conversation has 6 turns"),
        ({"from_turn": 4, "to_turn": 2}, "not a range of turns"),
        ({"from_turn": 0}, "not a range of turns"),
        ({"from_turn": "2"}, "from_turn must be a whole number"),
        ({"from_turn": True}, "from_turn must be a whole number"),
        ({}, "give from_turn and to_turn, or a query"),
        ({"query": 7}, "query must be a string"),
        ({"query": "(", "regex": True}, "not a valid regular expression"),
        ({"query": "x" * 1001}, "longer than 1000 characters"),
        ({"from_turn": 10**30}, "does not exist"),
    ],
)
def test_a_request_that_cannot_be_answered_says_why(
    arguments: dict[str, object], said: str
) -> None:
    with pytest.raises(RecallError) as caught:
        parse_request(arguments, six_with_summary())
    assert said in str(caught.value)


def test_an_error_names_the_turns_that_can_be_recalled() -> None:
    with pytest.raises(RecallError, match="the compacted turns are turns 2-4"):
        parse_request({"from_turn": 6}, six_with_summary())


def test_nothing_compacted_is_an_error_whatever_is_asked() -> None:
    with pytest.raises(RecallError, match="no turn of this conversation is compacted"):
        parse_request({"query": "q1"}, Stream(turns(3)))


def test_a_range_selects_every_event_of_its_turns() -> None:
    stream = six_with_summary()
    chosen = select(stream, parse_request({"from_turn": 2, "to_turn": 3}, stream))
    assert [(turn, e.get("content") or e.get("message")) for turn, e in chosen] == [
        (1, "q1"),
        (1, "m1"),
        (2, "q2"),
        (2, "m2"),
    ]


def test_a_query_searches_only_the_compacted_turns_with_greps_case_rule() -> None:
    stream = six_with_summary()
    found = select(stream, parse_request({"query": "M"}, stream))
    assert found == [], "an upper-case letter matches case exactly"
    found = select(stream, parse_request({"query": "m"}, stream))
    assert [turn for turn, _ in found] == [1, 2, 3], "m0 and m5 are not compacted"
    both = select(stream, parse_request({"from_turn": 3, "to_turn": 4, "query": "q"}, stream))
    assert [e["content"] for _, e in both] == ["q2", "q3"]
    regex = select(stream, parse_request({"query": "^m[23]$", "regex": True}, stream))
    assert [e["message"] for _, e in regex] == ["m2", "m3"]


def test_tool_calls_and_reasoning_come_back_whole() -> None:
    stream = Stream([*two_turns(), comp(0, 1, tools=ToolCalls.STRIP, reasoning=True)])
    text = recall({"query": "main.rs"}, stream, 10_000)
    assert 'tool call fs_create_file (id tc1): {"path": "src/main.rs"}' in text
    assert "assistant: Created src/main.rs" in text
    text = recall({"from_turn": 1}, stream, 10_000)
    assert "reasoning: I should create a file" in text
    assert "tool result (id tc1): file created" in text


def test_the_answer_is_bounded_and_says_it_was_cut() -> None:
    stream = Stream([*turns(40), comp(0, 39, summary="all")])
    whole = recall({"from_turn": 1, "to_turn": 40}, stream, 1_000_000)
    assert "[recall: cut" not in whole and "[turn 40]" in whole
    cut = recall({"from_turn": 1, "to_turn": 40}, stream, 200)
    body = cut.split("\n", 1)[1].rsplit("\n[recall:", 1)[0]
    assert len(body.encode()) <= 200 + len(" [...]\n")
    assert "[recall: cut to 200 of" in cut and "Ask for fewer turns" in cut
    assert "[turn 40]" not in cut


def test_a_cut_never_splits_a_character() -> None:
    stream = Stream([*turns(1), comp(0, 0, summary="s")])
    stream.events[1]["content"] = "é" * 100
    text = render(
        select(stream, parse_request({"from_turn": 1}, stream)),
        parse_request({"from_turn": 1}, stream),
        25,
    )
    assert "\ufffd" not in text and "[recall: cut to 25" in text


def test_no_match_is_an_answer_not_an_error() -> None:
    stream = six_with_summary()
    assert "No event of the compacted turns 2-4" in recall({"query": "zzz"}, stream, 1000)


def test_the_summary_block_names_its_turns_when_a_heading_is_given() -> None:
    events = [*turns(6), comp(1, 3, summary="short")]
    plain = [e.get("content") for e in project(events).events if e["type"] == "chat_request"]
    assert SUMMARY_REQUEST in plain
    noted = project(events, summary_note).events
    requests = [e.get("content") for e in noted if e["type"] == "chat_request"]
    assert requests[1] == summary_note(1, 3)
    assert "turns 2-4" in requests[1] and "recall tool" in requests[1]
    assert SUMMARY_REQUEST not in requests


SENTENCE = "This is an ordinary sentence that a model wrote, and it ends in punctuation!"


def test_a_pattern_that_backtracks_without_end_on_re_answers_at_once() -> None:
    """`^(\\w+\\s?)*$` on a sentence ending in punctuation is exponential on Python's
    `re`; the model's pattern runs on a bounded engine (run in a child: a regression
    would never end, and the timeout fails it)."""
    import subprocess
    import sys

    code = (
        "from porcelain.domain.recall import recall\n"
        "from porcelain.domain.stream import Stream\n"
        "from tests.unit.domain.compaction.builders import comp, turns\n"
        f"events = turns(4); events[2]['message'] = {SENTENCE!r} * 3\n"
        "stream = Stream([*events, comp(0, 2, summary='s')])\n"
        "print(recall({'query': r'^(\\w+\\s?)*$', 'regex': True}, stream, 1000))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert "user: q0" in done.stdout and "ordinary sentence" not in done.stdout


def test_a_model_pattern_over_its_budget_is_a_plain_error() -> None:
    from porcelain.domain import recall as module

    stream = Stream([*turns(3), comp(0, 1, summary="s")])
    query = parse_request({"query": "(.*a){12}$", "regex": True}, stream)
    slow = module.Bounded(query.matcher._pattern, 0.0)  # type: ignore[union-attr]
    with pytest.raises(RecallError, match="took more than .* fixed string"):
        slow.search("a" * 50 + "b")
    assert query.matcher is not None and query.matcher.search("m0") is None
    with pytest.raises(RecallError, match="not a valid regular expression"):
        parse_request({"query": "(unclosed", "regex": True}, stream)
