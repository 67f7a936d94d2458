"""The offline model's summaries and plain chat; the model layer's small helpers."""

from __future__ import annotations

from typing import Any

import pytest

from porcelain.errors import ConfigError, UserError
from porcelain.models import ModelRequest, context_window, estimate_tokens, get_model
from porcelain.models.offline_summary import summarize

T = "2026-01-05T09:00:00.000000Z"


def req(text: str) -> dict[str, Any]:
    return {"timestamp": T, "type": "chat_request", "content": text}


def say(text: str) -> dict[str, Any]:
    return {"timestamp": T, "type": "chat_response", "message": text}


def call(cid: str, name: str, **args: Any) -> dict[str, Any]:
    return {"timestamp": T, "type": "tool_call_request", "id": cid, "name": name, "arguments": args}


def result(cid: str, content: str, is_error: bool = False) -> dict[str, Any]:
    return {
        "timestamp": T,
        "type": "tool_call_response",
        "id": cid,
        "content": content,
        "is_error": is_error,
    }


def export_job() -> list[dict[str, Any]]:
    return [
        req(
            "[turn 2] The nightly export job in services/export/worker.py times out after "
            "300 s on large tenants. Can you find out why and fix it?"
        ),
        {"timestamp": T, "type": "chat_response", "reasoning": "Read the worker first."},
        call("t1", "fs_read_file", path="services/export/worker.py"),
        result("t1", "def run():\n    rows = fetch_all()\n"),
        say(
            "The worker loads every row into memory. We decided to stream in batches of "
            "5000 rows instead of loading everything."
        ),
        req("[turn 3] ok, do it and run the tests"),
        call("t2", "shell", command="pytest tests/export -q"),
        result(
            "t2",
            "FAILED tests/export/test_worker.py::test_batches - AssertionError: expected 3 "
            "batches, got 2",
            is_error=True,
        ),
        say("One test fails; we must not drop the last partial batch."),
        req("[turn 4] fixed? also set the timeout to 900 s"),
        say(
            "Yes. All 14 tests pass, and the timeout is 900 s in config/export.toml. "
            "Run `git diff config/export.toml` to review."
        ),
    ]


def summary_request(events: list[dict[str, Any]], context: str = "") -> ModelRequest:
    ask = "Summarize the conversation above."
    if context:
        ask += f"\n\nAdditional context: {context}"
    return ModelRequest("offline/default", "summary prompt", events + [req(ask)], task="summary")


def test_summary_keeps_goal_paths_commands_errors_numbers_and_state() -> None:
    request = summary_request(export_job(), context="keep the batch size decision")
    response = get_model("offline/default").respond(request, lambda k, t: None)
    assert response.stop_reason == "end_turn"
    text = response.text
    assert "not a language model" in text
    assert "Goal: The nightly export job" in text and "[turn 2]" not in text
    for exact in (
        "services/export/worker.py",
        "config/export.toml",
        "tests/export/test_worker.py",
        "`pytest tests/export -q`",
        "`git diff config/export.toml`",
        "AssertionError: expected 3 batches, got 2",
        "300 s",
        "900 s",
        "5000",
        "We decided to stream in batches of 5000 rows",
        "we must not drop the last partial batch",
        "keep the batch size decision",
        "fs_read_file",
    ):
        assert exact in text, f"{exact!r} missing from:\n{text}"
    assert "Last request: fixed? also set the timeout to 900 s" in text
    assert "Last answer: Yes. All 14 tests pass" in text
    assert "Summarize the conversation above" not in text, "the instruction is not content"


def test_summary_is_deterministic() -> None:
    first = summarize(export_job())
    assert all(summarize(export_job()) == first for _ in range(3))


def test_summary_stays_short_on_a_long_conversation() -> None:
    events: list[dict[str, Any]] = []
    for n in range(1, 200):
        words = " ".join(f"word{i}" for i in range(120))
        events += [
            req(f"[turn {n}] We decided item {n} must use src/mod_{n}/file_{n}.py. {words}"),
            say(f"Done: `python -m tool --item {n}` gave error: code {n}00 ms. {words}"),
        ]
    text = summarize(events)
    assert len(text.split()) <= 400
    assert "src/mod_1/file_1.py" in text


def test_summary_of_nothing_says_so() -> None:
    assert summarize([]) == "Nothing to summarize: the range holds no messages."
    assert "Nothing" in summarize([req("Summarize the conversation above.")])


def test_plain_chat_is_honest_and_says_how_to_configure() -> None:
    request = ModelRequest("offline/default", "", [req("What is the capital of France?")])
    seen: list[tuple[str, str]] = []
    response = get_model("offline/default").respond(request, lambda k, t: seen.append((k, t)))
    text = response.text
    assert "not a language model" in text and "offline" in text
    note = "".join(t for k, t in seen if k == "note")
    assert "What is the capital of France?" in note
    assert 'assistant.model.id = "anthropic/claude-' in note and "ANTHROPIC_API_KEY" in note
    assert "ANTHROPIC_API_KEY" not in text, "the how-to is not stored as the answer"
    texts = [t for k, t in seen if k == "text"]
    assert len(texts) > 1 and "".join(texts) == text
    assert response.stop_reason == "end_turn"
    assert [e["type"] for e in response.events] == ["chat_response"]


def test_plain_chat_quotes_long_requests_briefly() -> None:
    long = "please " * 100
    seen: list[tuple[str, str]] = []
    get_model("offline/x").respond(
        ModelRequest("offline/x", "", [req(long)]), lambda k, t: seen.append((k, t))
    )
    note = "".join(t for k, t in seen if k == "note")
    assert "please please" in note and len(note) < 600


def test_get_model_refuses_unknown_providers_and_bad_ids() -> None:
    with pytest.raises(ConfigError, match="nope"):  # a configuration error: exit 3
        get_model("nope/gpt-4o")
    with pytest.raises(UserError, match="provider/name"):
        get_model("claude-sonnet")


def test_context_window() -> None:
    assert context_window("anthropic/claude-sonnet-4-5", None) == 200_000
    assert context_window("anthropic/claude-sonnet-4-5", 10_000) == 10_000
    assert context_window("offline/default", None) == 1_000_000
    assert context_window("anthropic/some-new-model", None) == 200_000


def test_estimate_tokens_counts_text_arguments_and_results() -> None:
    events = [req("a" * 40), call("t", "x", path="b" * 30), result("t", "c" * 40), say("d" * 8)]
    total = 40 + len('x {"path": "' + "b" * 30 + '"}') + 40 + 8
    assert estimate_tokens(events) == total // 4
    assert estimate_tokens([]) == 0


def test_a_transcript_in_one_request_is_read_as_the_conversation() -> None:
    transcript = "\n\n".join(
        [
            "USER: [turn 2] The export in services/export/worker.py times out after 300 s.",
            "ASSISTANT (thinking): Read the worker.",
            'TOOL CALL fs_read_file: {"path": "services/export/worker.py"}',
            "TOOL RESULT fs_read_file: def run():\n\n    rows = fetch_all()",
            "ASSISTANT: We decided to stream in batches of 5000 rows.",
            'TOOL CALL shell: {"command": "pytest tests/export -q"}',
            "TOOL ERROR shell: FAILED tests/export/test_worker.py - AssertionError: got 2",
            "USER: [turn 3] set the timeout to 900 s",
            "ASSISTANT: Done in config/export.toml.",
        ]
    )
    text = (
        f"<conversation>\n{transcript}\n</conversation>\n\n"
        "Summarize the conversation above.\n\nAdditional context: mention the batch size"
    )
    request = ModelRequest("offline/default", "prompt", [req(text)], task="summary")
    summary = get_model("offline/default").respond(request, lambda k, t: None).text
    assert "Goal: The export in services/export/worker.py times out after 300 s." in summary
    assert "<conversation>" not in summary and "USER:" not in summary
    for exact in (
        "`pytest tests/export -q`",
        "AssertionError: got 2",
        "We decided to stream in batches of 5000 rows.",
        "config/export.toml",
        "Focus asked for: mention the batch size",
        "Last request: set the timeout to 900 s",
        "Last answer: Done in config/export.toml.",
        "shell ×1",
    ):
        assert exact in summary, f"{exact!r} missing from:\n{summary}"


def test_numbers_skip_positions_but_keep_quantities() -> None:
    text = summarize([req("Look at turn 12 and line 40."), say("Port 8080 with a 250 ms timeout.")])
    numbers = next(line for line in text.splitlines() if line.startswith("Numbers:"))
    assert "Port 8080" in numbers and "250 ms" in numbers
    assert "12" not in numbers and "40" not in numbers


def test_no_heading_stands_over_nothing() -> None:
    """A lead-in ending in a colon is no decision: with only those, the section
    and its heading are left out; a real decision beside them stays."""
    only = summarize(
        [
            req("Set up tracing"),
            say("Now let's add the dev configuration:\n\nNow let's verify it compiles:"),
        ]
    )
    assert "Decisions and constraints:" not in only and "- Now let's" not in only
    both = summarize(
        [req("Set up tracing"), say("Now let's add it:\n\nWe decided to keep stdout in dev only.")]
    )
    assert "Decisions and constraints:\n- We decided to keep stdout in dev only." in both
    for text in (only, both):
        lines = text.splitlines()
        for heading, after in zip(lines, [*lines[1:], ""], strict=True):
            if heading.endswith(":") and ": " not in heading:  # a section's own heading
                assert after.startswith("- "), text
