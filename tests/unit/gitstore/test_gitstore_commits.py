"""gitstore.commits: the readable subject, body, trailer and author of each event commit."""

from __future__ import annotations

from typing import Any

import pygit2
import pytest

from gitstore.events.commits import SUBJECT_WIDTH, author_name, body, message, subject
from gitstore.store.core import Store
from tests.unit.gitstore.builders import T0, start, turn


def ev(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "timestamp": T0, **fields}


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (ev("chat_request", content="set up the project"), "user: set up the project"),
        (ev("chat_request", content="  first line  \nsecond line"), "user: first line"),
        (ev("chat_request", content="spread   over\tspaces"), "user: spread over spaces"),
        (ev("chat_request", content=""), "user: (empty)"),
        (ev("chat_response", message="Created src/main.rs"), "assistant: Created src/main.rs"),
        (ev("chat_response", reasoning="Let me think"), "reasoning: Let me think"),
        (ev("chat_response", data={"a": 1}), "assistant: (structured data)"),
        (
            ev("tool_call_request", id="t1", name="fs_read_file", arguments={"path": "a.rs"}),
            'tool call fs_read_file: {"path": "a.rs"}',
        ),
        (ev("turn_start"), "turn: start"),
        (ev("compaction", from_turn=1, to_turn=16, summary={"summary": "S"}), "compaction: summarize turns 2-17"),
        (ev("compaction", from_turn=2, to_turn=2, summary={"summary": "S"}), "compaction: summarize turn 3"),
        (
            ev("compaction", from_turn=1, to_turn=7, reasoning="strip", tool_calls={"policy": "strip"}),
            "compaction: strip reasoning + tools on turns 2-8",
        ),
        (ev("compaction", from_turn=0, to_turn=0), "compaction: strip no policy on turn 1"),
        (ev("compaction_reset"), "compaction: reset all"),
        (ev("compaction_reset", withdraw=[0, 2]), "compaction: withdraw 1, 3"),
        (
            ev("config_delta", delta={"assistant": {"model": {"id": "a/b"}, "instructions": "x"}}),
            "config: assistant.instructions, assistant.model.id",
        ),
        (ev("config_delta", delta={}), "config: (empty)"),
        (ev("conversation_start", conversation_id="jp-c1"), "start: conversation jp-c1"),
        (
            ev("conversation_start", conversation_id="jp-c2", forked_from={"conversation_id": "jp-c1"}),
            "start: conversation jp-c2, forked from jp-c1",
        ),
        (
            ev("conversation_start", conversation_id="jp-c3", review={"source_id": "jp-c1"}),
            "start: review jp-c3 of jp-c1",
        ),
        (ev("inquiry_request", id="q", source={}, question={"text": "Apply?"}), "inquiry: Apply?"),
        (ev("inquiry_response", id="q", answer=True), "inquiry answer: true"),
        (ev("turn_rating", stars=5), "turn_rating: (kept from a newer writer)"),
        (ev("source_record", record={"type": "progress", "data": {}}), "record: progress"),
        (ev("source_record", record={"data": "\n\x1b"}), "record: (untyped)"),
    ],
)
def test_subjects_read_as_a_transcript(event: dict[str, Any], expected: str) -> None:
    assert subject(event) == expected


def test_omitting_tools_says_so() -> None:
    line = subject(ev("compaction", from_turn=0, to_turn=3, tool_calls={"policy": "omit"}))
    assert line.startswith("compaction: ") and "omit tools" in line and line.endswith("turns 1-4")


def test_tool_results_name_their_tool() -> None:
    ok = ev("tool_call_response", id="t1", content="fine", is_error=False)
    bad = ev("tool_call_response", id="t1", content="boom", is_error=True)
    assert subject(ok, {"t1": "cargo_test"}) == "tool cargo_test: ok"
    assert subject(bad, {"t1": "cargo_test"}) == "tool cargo_test: error"


def test_long_first_lines_are_cut_to_the_subject_width() -> None:
    text = "word " * 40
    line = subject(ev("chat_request", content=text))
    assert len(line) <= len("user: ") + SUBJECT_WIDTH
    assert line.endswith("...") and line.startswith("user: word word")
    args = {"content": "x" * 500}
    assert len(subject(ev("tool_call_request", id="t", name="fs", arguments=args))) <= SUBJECT_WIDTH


def test_body_holds_long_or_multiline_text_and_a_trailer() -> None:
    short = ev("chat_request", content="short")
    assert body(short) == ""
    assert message(short) == "user: short\n\nJp-Event: chat_request\n"
    long = ev("chat_response", message="line one\nline two\n")
    assert body(long) == "line one\nline two\n"
    assert message(long) == "assistant: line one\n\nline one\nline two\n\nJp-Event: chat_response\n"
    summary = ev("compaction", from_turn=0, to_turn=1, summary={"summary": "s " * 50})
    assert body(summary).strip() == ("s " * 50).strip()
    assert body(ev("turn_start")) == ""


@pytest.mark.parametrize(
    ("kind", "who"),
    [
        ("chat_request", "user"),
        ("turn_start", "user"),
        ("inquiry_response", "user"),
        ("chat_response", "assistant"),
        ("tool_call_request", "assistant"),
        ("tool_call_response", "tool"),
        ("compaction", "jp"),
        ("config_delta", "jp"),
        ("conversation_start", "jp"),
    ],
)
def test_authors_are_the_speakers(kind: str, who: str) -> None:
    assert author_name({"type": kind}) == who


def test_commits_carry_the_event_time_and_speaker(store: Store) -> None:
    events = [start("jp-c1", 0), *turn(1, 60)]
    tip = store.log.create("jp-c1", events, None, "test")
    commit = store.repo[tip].peel(pygit2.Commit)
    assert commit.author.name == "assistant" and commit.author.time == 1767603600 + 62
    assert commit.committer.time == commit.author.time
    assert commit.message == "assistant: A1\n\nJp-Event: chat_response\n"
    assert [e.name for e in commit.tree] == ["event.json"]


def test_a_response_in_the_same_batch_names_its_tool(store: Store) -> None:
    call = ev("tool_call_request", id="t9", name="cargo_test", arguments={})
    result = ev("tool_call_response", id="t9", content="ok", is_error=False)
    tip = store.log.create("jp-c1", [start("jp-c1"), call, result], None, "test")
    assert store.repo[tip].peel(pygit2.Commit).message.startswith("tool cargo_test: ok")


def test_a_response_appended_later_names_its_tool(store: Store) -> None:
    tip = store.log.create("jp-c1", [start("jp-c1")], None, "test")
    tip = store.log.append("jp-c1", [ev("tool_call_request", id="t9", name="cargo_test", arguments={})], tip, "t")
    tip = store.log.append("jp-c1", [ev("tool_call_response", id="t9", content="ok", is_error=False)], tip, "t")
    assert store.repo[tip].peel(pygit2.Commit).message.startswith("tool cargo_test: ok")


@pytest.mark.parametrize(
    "stamp",
    [
        "2025-01-06T09:00:31.123456Z",
        "2024-02-29T23:59:59.999999Z",  # a leap day, the last microsecond
        "1970-01-01T00:00:00.000000Z",
        "1969-12-31T23:59:59.500000Z",  # before 1970: truncated towards zero, as int() does
        "1969-12-31T23:59:59.000000Z",
        "0001-01-01T00:00:00.000001Z",
        "9999-12-31T23:59:59.999999Z",  # the float of its microseconds rounds up a second
        "2025-01-06T09:00:31Z",  # forms the stored one is not: read as before
        "2025-01-06 09:00:31.123456",
        "2025-01-06T10:00:31.123456+01:00",
    ],
)
def test_commit_time_of_a_stamp_is_the_parsed_ones(stamp: str) -> None:
    """The author and committer time read from the stored form's fields is what
    parsing the stamp into a datetime gives, to the second."""
    from gitstore.events import parse_time
    from gitstore.store.ground import _epoch

    assert _epoch(stamp) == int(parse_time(stamp).timestamp())


@pytest.mark.parametrize(
    "stamp", ["2025-02-30T09:00:31.123456Z", "2025-13-01T09:00:31.123456Z", "2025-01-06T24:00:00.000000Z"]
)
def test_commit_time_of_an_impossible_stamp_is_refused(stamp: str) -> None:
    from gitstore.store.ground import _epoch

    with pytest.raises(ValueError):
        _epoch(stamp)
