"""The offline model in a compaction review: every directive form, merging, replies."""

from __future__ import annotations

from typing import Any

import pytest

from porcelain.models import ModelRequest, ModelResponse, ToolSpec, get_model
from porcelain.models.offline_review import merge, parse_directives

T = "2026-01-05T09:00:00.000000Z"
PROPOSE = ToolSpec("propose_compaction", "Record a compaction proposal.", {"type": "object"})
OPENING = {
    "from_turn": 2,
    "to_turn": 17,
    "summary": "DRAFT-SUMMARY-ONE",
    "reasoning": None,
    "tool_calls": None,
}


def req(text: str) -> dict[str, Any]:
    return {"timestamp": T, "type": "chat_request", "content": text}


def say(text: str) -> dict[str, Any]:
    return {"timestamp": T, "type": "chat_response", "message": text}


def proposal(
    cid: str, args: dict[str, Any], answer: str = "Proposed.", error: bool = False
) -> list[dict[str, Any]]:
    return [
        {
            "timestamp": T,
            "type": "tool_call_request",
            "id": cid,
            "name": "propose_compaction",
            "arguments": args,
        },
        {
            "timestamp": T,
            "type": "tool_call_response",
            "id": cid,
            "content": answer,
            "is_error": error,
        },
    ]


def review_history(turns: int = 20) -> list[dict[str, Any]]:
    """A review as jp builds it: marked source turns, then the opening proposal."""
    events: list[dict[str, Any]] = []
    for n in range(1, turns + 1):
        events += [
            req(f"[turn {n}] Question T{n:02d}: handle <<Q{n:02d}>>."),
            say(f"Answer for turn {n:02d}."),
        ]
    return events + proposal("toolu_open", OPENING, "Proposed: compact turns 2-17 of 20")


def ask(
    message: str, history: list[dict[str, Any]] | None = None, schema: dict[str, Any] | None = None
) -> ModelResponse:
    events = (review_history() if history is None else history) + [req(message)]
    tool = PROPOSE if schema is None else ToolSpec("propose_compaction", "", schema)
    request = ModelRequest("offline/default", "review instructions", events, [tool])
    return get_model("offline/default").respond(request, lambda kind, text: None)


def proposed(message: str, **kw: Any) -> dict[str, Any]:
    response = ask(message, **kw)
    assert response.stop_reason == "tool_use", response.events[0].get("message")
    text, call = response.events
    assert text["type"] == "chat_response" and text["message"]
    assert call["type"] == "tool_call_request" and call["name"] == "propose_compaction"
    arguments: dict[str, Any] = call["arguments"]
    return arguments


@pytest.mark.parametrize(
    "message",
    [
        "turns 4-17",
        "Turns 4 - 17 please",
        "turns 4 to 17",
        "turn 4 to turn 17",
        "from 4 to 17",
        "from turn 4 to turn 17",
        "turns 4..17",
        "start at 4 and stop at 17",
    ],
)
def test_range_forms(message: str) -> None:
    args = proposed(message)
    assert (args["from_turn"], args["to_turn"]) == (4, 17)
    assert args["summary"] == "DRAFT-SUMMARY-ONE", "the rest of the proposal is kept"


@pytest.mark.parametrize(
    "message, to_turn",
    [
        ("keep the last 3", 17),
        ("keep last 5 turns", 15),
        ("Keep the last three", 17),
        ("keep only the last 1", 19),
    ],
)
def test_keep_the_last_counts_from_the_highest_marker(message: str, to_turn: int) -> None:
    args = proposed(message)
    assert args["to_turn"] == to_turn and args["from_turn"] == 2


@pytest.mark.parametrize("message, from_turn", [("keep the first 3", 4), ("keep first two", 3)])
def test_keep_the_first(message: str, from_turn: int) -> None:
    assert proposed(message)["from_turn"] == from_turn


def test_keep_first_and_last_together() -> None:
    args = proposed("keep the first 1 and keep the last 2")
    assert (args["from_turn"], args["to_turn"]) == (2, 18)


def test_summary_replaces_and_its_text_runs_to_the_end() -> None:
    args = proposed("turns 3-12, summary: Turns 1-3 set up the repo.\nWe chose sqlite.")
    assert args["summary"] == "Turns 1-3 set up the repo.\nWe chose sqlite."
    assert (args["from_turn"], args["to_turn"]) == (3, 12), "ranges inside the text are text"


def test_add_appends_a_sentence() -> None:
    args = proposed("add: the retry count stays at 3")
    assert args["summary"] == "DRAFT-SUMMARY-ONE. The retry count stays at 3."


def test_add_without_a_summary_starts_one() -> None:
    history = review_history() + proposal(
        "p2", {"from_turn": 2, "to_turn": 17, "reasoning": "strip"}
    )
    args = proposed("add: Keep the retry decision.", history=history)
    assert args["summary"] == "Keep the retry decision."
    assert "reasoning" not in args, "a summary makes the policies moot"


def test_no_summary_with_policies() -> None:
    args = proposed("no summary, strip reasoning, tools strip-responses")
    assert "summary" not in args
    assert args["reasoning"] == "strip" and args["tool_calls"] == "strip-responses"


def test_a_policy_alone_drops_the_standing_summary_and_says_so() -> None:
    response = ask("strip reasoning")
    args = response.events[1]["arguments"]
    assert args == {"from_turn": 2, "to_turn": 17, "reasoning": "strip"}
    assert "dropped the summary" in response.events[0]["message"]


@pytest.mark.parametrize(
    "message, mode",
    [
        ("tools strip", "strip"),
        ("tools omit", "omit"),
        ("tools strip-requests", "strip-requests"),
        ("tools strip-responses", "strip-responses"),
        ("tools: sres", "strip-responses"),
        ("tool calls strip_requests", "strip-requests"),
        ("omit tools", "omit"),
        ("strip tool responses", "strip-responses"),
    ],
)
def test_tool_modes(message: str, mode: str) -> None:
    assert proposed(message)["tool_calls"] == mode


def test_keep_reasoning_and_tools_clear_the_policies() -> None:
    history = review_history() + proposal(
        "p2", {"from_turn": 2, "to_turn": 17, "reasoning": "strip", "tool_calls": "omit"}
    )
    args = proposed("don't strip reasoning, tools keep", history=history)
    assert args == {"from_turn": 2, "to_turn": 17}


def test_boolean_reasoning_schema_gets_a_boolean() -> None:
    schema = {"type": "object", "properties": {"reasoning": {"type": "boolean"}}}
    assert proposed("no summary, strip reasoning", schema=schema)["reasoning"] is True


def test_starts_from_the_latest_accepted_proposal() -> None:
    history = review_history()
    history += proposal("p2", {"from_turn": 3, "to_turn": 15, "summary": "SECOND"})
    history += proposal(
        "p3",
        {"from_turn": 3, "to_turn": 25, "summary": "BAD"},
        "the conversation has 20 turns, `to_turn` was 25",
        error=True,
    )
    args = proposed("add: One more fact.", history=history)
    assert args == {"from_turn": 3, "to_turn": 15, "summary": "SECOND. One more fact."}


def test_the_call_is_deterministic() -> None:
    a, b = ask("turns 4-17"), ask("turns 4-17")
    assert a.events[1]["id"] == b.events[1]["id"]
    assert a.events[1]["id"].startswith("toolu_")
    assert a.events[0]["message"] == b.events[0]["message"]


def test_recorded_result_is_quoted() -> None:
    history = review_history() + [req("turns 4-17")]
    history += proposal(
        "p2",
        {"from_turn": 4, "to_turn": 17, "summary": "S"},
        "Proposed: compact turns 4-17 of 20 (summarize)",
    )
    request = ModelRequest("offline/x", "", history, [PROPOSE])
    response = get_model("offline/x").respond(request, lambda k, t: None)
    assert response.stop_reason == "end_turn"
    assert response.events[0]["message"].startswith(
        "Recorded. Proposed: compact turns 4-17 of 20 (summarize)."
    )


def test_refused_result_gives_the_error_and_a_hint() -> None:
    history = review_history() + [req("turns 4-25")]
    history += proposal(
        "p2",
        {"from_turn": 4, "to_turn": 25},
        "the conversation has 20 turns, `to_turn` was 25",
        error=True,
    )
    request = ModelRequest("offline/x", "", history, [PROPOSE])
    text = get_model("offline/x").respond(request, lambda k, t: None).events[0]["message"]
    assert "`to_turn` was 25" in text and "turns 2-15" in text


def test_no_directive_explains_what_it_understands() -> None:
    seen: list[tuple[str, str]] = []
    events = review_history() + [req("What do you think about the draft?")]
    request = ModelRequest("offline/default", "", events, [PROPOSE])
    response = get_model("offline/default").respond(request, lambda k, t: seen.append((k, t)))
    assert response.stop_reason == "end_turn" and len(response.events) == 1
    text = response.events[0]["message"]
    assert "turns 2-17" in text, "it shows the standing proposal"
    note = "".join(t for k, t in seen if k == "note")
    assert "not a language model" in note
    for word in ("turns 4-17", "keep the last", "summary:", "add:", "strip reasoning", "omit"):
        assert word in note, "the directives are explained to the person"
        assert word not in text, "the explanation is not stored as the answer"
    assert len(text) < 120, text


def test_each_note_says_what_happened_once_and_one_turn_reads_turn_n() -> None:
    text = ask("strip reasoning").events[0]["message"]
    assert "dropped the summary" in text
    assert "wrote the summary again" not in text, "the summary was dropped, not written"
    one = ask("turns 3-3").events[0]["message"]
    assert "turns 3-3" not in one and "Understood: turn 3." in one and "Proposing turn 3" in one


def test_keep_last_without_markers_is_explained() -> None:
    history = [req("hello"), say("hi")] + proposal("p", {"from_turn": 1, "to_turn": 2})
    response = ask("keep the last 1", history=history)
    assert "markers" in response.events[0]["message"]


def test_text_streams_in_chunks_and_the_tool_is_announced() -> None:
    seen: list[tuple[str, str]] = []
    request = ModelRequest("offline/x", "", review_history() + [req("turns 4-17")], [PROPOSE])
    response = get_model("offline/x").respond(request, lambda k, t: seen.append((k, t)))
    texts = [t for k, t in seen if k == "text"]
    assert len(texts) > 1 and "".join(texts) == response.events[0]["message"]
    assert seen[-1] == ("tool", "propose_compaction")


def test_parse_directives_ignores_plain_chat() -> None:
    assert not parse_directives("Looks good to me, thanks!").any
    assert not parse_directives("What does turn 5 say?").any


def test_keep_the_last_moves_a_start_that_would_come_after_the_end() -> None:
    args, notes = merge(
        {"from_turn": 2, "to_turn": 2, "summary": "S"},
        parse_directives("keep the last 2"),
        highest=3,
    )
    assert (args["from_turn"], args["to_turn"]) == (1, 1)
    assert any("starts at turn 1" in n for n in notes)
    args, _ = merge(
        {"from_turn": 2, "to_turn": 2}, parse_directives("start at 2, keep the last 2"), highest=3
    )
    assert (args["from_turn"], args["to_turn"]) == (2, 1), "an explicit start is the user's"
