"""Cut-off answers: marked when kept, left out or marked when sent, unfinished for --retry."""

from __future__ import annotations

from gitstore import Event, make
from gitstore.events.commits import subject
from porcelain.app.query.retry import state
from porcelain.domain.interrupted import INTERRUPTED_NOTE, for_the_model, is_interrupted, mark
from porcelain.domain.view import model_events
from porcelain.render.transcripts import INTERRUPTED_LINE, transcript

T = "2026-01-05T09:00:00.000000Z"


def _asked(*answer: Event) -> list[Event]:
    return [make.turn_start(T), make.chat_request(T, "tell me"), *answer]


def test_mark_keeps_only_answers_and_names_the_cause() -> None:
    call = {"type": "tool_call_request", "timestamp": T, "id": "c1", "name": "x", "arguments": {}}
    message = {**make.chat_message(T, "half"), "metadata": {"usage": {"output_tokens": 3}}}
    (marked,) = mark([message, call], "stream")
    assert marked["metadata"] == {"usage": {"output_tokens": 3}, "interrupted": "stream"}
    assert "interrupted" not in message["metadata"], "mark changed the event it was given"
    assert is_interrupted(marked) and not is_interrupted(message)


def test_the_newest_cut_off_answer_is_not_sent_and_leaves_the_turn_unfinished() -> None:
    events = _asked(*mark([make.chat_message(T, "half an answer")], "user"))
    assert [e["type"] for e in model_events(events)] == ["chat_request"]
    assert state(events) == "unfinished"
    assert state(_asked(make.chat_message(T, "whole"))) == "answered"


def test_a_cut_off_answer_followed_by_a_retry_is_left_out() -> None:
    events = [
        *_asked(*mark([make.chat_message(T, "half")], "stream")),
        make.chat_message(T, "whole"),
    ]
    assert [e.get("message") for e in for_the_model(events)] == [None, None, "whole"]
    assert state(events) == "answered"


def test_a_cut_off_answer_before_a_new_request_is_sent_marked() -> None:
    cut = mark([make.chat_reasoning(T, "thinking"), make.chat_message(T, "half")], "stream")
    events = [*_asked(*cut), make.turn_start(T), make.chat_request(T, "next")]
    sent = model_events(events)
    assert [e["type"] for e in sent] == ["chat_request", "chat_response", "chat_request"]
    assert sent[1]["message"] == f"half\n\n{INTERRUPTED_NOTE}"
    assert "interrupted" not in sent[1].get("metadata", {})


def test_print_and_git_log_say_it_was_cut_off() -> None:
    (cut,) = mark([make.chat_message(T, "half")], "stream")
    for style in ("chat", "brief", "full"):
        lines = transcript(_asked(cut), style)
        assert lines[lines.index("half") + 1] == INTERRUPTED_LINE, lines
    rendered = transcript(_asked(cut), "chat", markdown=lambda text: text)
    assert INTERRUPTED_LINE in rendered
    assert subject(cut) == "assistant [interrupted]: half"
    assert subject(make.chat_message(T, "whole")) == "assistant: whole"
