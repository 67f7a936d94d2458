"""The offline model's plain `recall` directives, read as tool arguments."""

from __future__ import annotations

import pytest

from porcelain.models.offline_recall import after_recall, answer_to, directive


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ("recall turns 3-5", {"from_turn": 3, "to_turn": 5}),
        ("please Recall turn 4", {"from_turn": 4, "to_turn": 4}),
        ("recall turns 2 to 7", {"from_turn": 2, "to_turn": 7}),
        ('recall "src/f04.rs"', {"query": "src/f04.rs"}),
        ('recall turns 3-5 "error"', {"from_turn": 3, "to_turn": 5, "query": "error"}),
        ("recall “the path”", {"query": "the path"}),
    ],
)
def test_a_directive_becomes_the_tools_arguments(text: str, arguments: dict[str, object]) -> None:
    assert directive(text) == arguments


@pytest.mark.parametrize("text", ["what did we say in turns 3-5?", "recall", "turns 3-5", ""])
def test_a_message_without_a_directive_asks_for_nothing(text: str) -> None:
    assert directive(text) is None


def test_only_the_result_of_its_own_recall_is_answered() -> None:
    call = {"type": "tool_call_request", "id": "c1", "name": "recall", "arguments": {}}
    other = {"type": "tool_call_request", "id": "c2", "name": "date", "arguments": {}}
    result = {"type": "tool_call_response", "id": "c1", "content": "FACT", "is_error": False}
    assert after_recall([call, result]) == result
    assert after_recall([other, {**result, "id": "c2"}]) is None
    assert "FACT" in answer_to(result)
    assert answer_to({**result, "is_error": True}).startswith("The recall was refused: FACT")
