"""The one title rule, and the facts an imported session's own records give it."""

from __future__ import annotations

from porcelain.domain.titles import UNTITLED, agent_type, session_facts, shown_title


def test_the_explicit_title_then_the_tools_summary_then_the_first_prompt() -> None:
    assert shown_title("Mine", "Tool's", "first") == "Mine"
    assert shown_title(None, "Tool's", "first") == "Tool's"
    assert shown_title("  ", None, "first   prompt\nhere") == "first prompt here"
    assert shown_title(None, None, "x" * 200).endswith("…")
    assert len(shown_title(None, None, "x" * 200)) == 80
    assert shown_title(None, None, "") == UNTITLED


def record(**fields: object) -> dict[str, object]:
    return {"type": "chat_request", "metadata": {"source_record": fields}}


def test_a_summary_names_its_session_only_when_its_leaf_is_one_of_its_records() -> None:
    events = [
        {
            "type": "source_record",
            "record": {"type": "summary", "summary": "Other", "leafUuid": "z"},
        },
        record(type="user", uuid="a", cwd="/home/u/proj"),
        record(type="user", uuid="b", cwd="/elsewhere"),
        {
            "type": "source_record",
            "record": {"type": "summary", "summary": "Ours", "leafUuid": "b"},
        },
    ]
    facts = session_facts(events)
    assert facts["tool_title"] == "Ours" and facts["project"] == "/home/u/proj"
    assert session_facts(events[:1])["tool_title"] is None
    assert session_facts([{"type": "chat_request", "content": "jp's own"}])["project"] is None


def test_a_subagent_takes_the_type_its_sessions_call_gave_it() -> None:
    call = {"type": "tool_use", "id": "t1", "name": "Task", "input": {"subagent_type": "Explore"}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "done"}
    events = [
        record(type="assistant", uuid="a", message={"content": [call]}),
        record(
            type="user", uuid="b", message={"content": [result]}, toolUseResult={"agentId": "a1"}
        ),
    ]
    agents = session_facts(events)["agents"]
    assert agents == {"a1": "Explore"}
    assert agent_type("a1", agents) == "Explore"
    assert agent_type("acompact-123", {}) == "compact"
    assert agent_type("a9", agents) is None
