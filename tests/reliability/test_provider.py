"""Provider faults: retried where the SDK retries, then reported in one line
(exit 4); the turn keeps its request and whatever completed; `jp q` works
afterwards.  The real SDK talks to the loopback fake of the Messages API
(tests/support/fake_messages.py), which also sends what the real API never does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.harness import ID, RUST, RUST_ID, Sandbox
from tests.support.fake_messages import FakeMessages, error_body, message, sse, sse_events

PROVIDER = 4


@pytest.fixture
def fake() -> Iterator[FakeMessages]:
    with FakeMessages() as server:
        yield server


@pytest.fixture
def box(tmp_path: Path, fake: FakeMessages) -> Sandbox:
    sandbox = Sandbox(tmp_path / "box", env=fake.env())
    sandbox.config_file.write_text('[assistant.model]\nid = "anthropic/claude-test"\n')
    sandbox.ok("init")
    sandbox.ok("conversation", "import", "--activate", str(RUST))
    return sandbox


def tail(box: Sandbox, n: int) -> list[str]:
    return box.conversations()[RUST_ID].kinds[-n:]


def works_afterwards(box: Sandbox, fake: FakeMessages) -> None:
    """The next query is sent a valid history (the fake refuses an invalid one)."""
    fake.reply_text("Back again.")
    box.ok("q", "are you there?")
    events = box.conversations()[RUST_ID].events
    assert events[-1] == {**events[-1], "type": "chat_response", "message": "Back again."}
    box.fsck()


def test_faults_one_after_another(box: Sandbox, fake: FakeMessages) -> None:
    """One conversation through every fault in turn.  Each request after a
    fault carries the history that fault left; the fake refuses an invalid
    history with 400 before any script, so every scripted error seen below
    also proves the history was valid."""
    # rate limited, then overloaded: the SDK retries, the turn completes
    fake.reply_error(429, "rate_limit_error", "slow down", retry_after_ms=10)
    fake.reply_error(529, "overloaded_error", "busy", retry_after_ms=10)
    fake.reply_text("Answered after two retries.")
    box.ok("q", "hello")
    assert len(fake.requests) == 3
    assert tail(box, 3) == ["turn_start", "chat_request", "chat_response"]

    # the stream drops mid-answer: reported, the text that arrived is kept
    fake.reply_drop_mid_stream("The first half of an answer and then the rest")
    proc = box.fail("q", "and then?")
    assert proc.returncode == PROVIDER and "broke off" in proc.stderr, proc.stderr
    events = box.conversations()[RUST_ID].events
    assert [e["type"] for e in events[-3:]] == ["turn_start", "chat_request", "chat_response"]
    assert "The first half".startswith(events[-1]["message"][:5]), events[-1]

    # a tool round completes, then the server fails past the retries
    box.config_file.write_text(
        '[assistant.model]\nid = "anthropic/claude-test"\n'
        '[conversation.tools.echo]\ncommand = ["cat"]\ndescription = "Echo"\nconfirm = false\n'
    )
    fake.reply_blocks([{"type": "tool_use", "name": "echo", "input": {"x": 1}}])
    fake.reply_error(500, "api_error", "Internal server error", retry_after_ms=10, times=3)
    proc = box.fail("q", "use the tool")
    assert proc.returncode == PROVIDER and "500 api_error" in proc.stderr, proc.stderr
    assert tail(box, 4) == ["turn_start", "chat_request", "tool_call_request", "tool_call_response"]

    # overloaded past the retries: one line with a hint, the request is kept
    fake.reply_error(529, "overloaded_error", "Overloaded", retry_after_ms=10, times=3)
    proc = box.fail("q", "still there?")
    assert proc.returncode == PROVIDER, proc.stderr
    assert "529 overloaded_error: Overloaded" in proc.stderr and "try again" in proc.stderr
    assert tail(box, 2) == ["turn_start", "chat_request"]

    # killed while the answer streams: the request is kept
    fake.reply_text("A long answer that streams in several pieces.")
    box.kill("model:streaming@2", "q", "one more")
    assert tail(box, 2) == ["turn_start", "chat_request"]
    box.fsck()

    works_afterwards(box, fake)


def test_fork_whose_compaction_fails_is_not_left_behind(box: Sandbox, fake: FakeMessages) -> None:
    fake.reply_error(400, "invalid_request_error", "no summaries today")
    before = box.refs()
    proc = box.fail("conversation", "fork", RUST_ID, "-k", "s:2..4")
    assert not ID.findall(proc.stdout)
    assert box.refs("refs/conversations") == {
        k: v for k, v in before.items() if k.startswith("refs/conversations")
    }


HALF = [sse(*event) for event in sse_events(message([{"type": "text", "text": "Half an "}]))[:4]]
MALFORMED = {
    "bad json": [*HALF, b"event: content_block_delta\ndata: {not json\n\n"],
    "error event": [*HALF, sse("error", error_body("overloaded_error", "Overloaded"))],
    "html": [b"<html><body>502 Bad Gateway</body></html>"],
}


def test_malformed_events_from_the_server(box: Sandbox, fake: FakeMessages) -> None:
    for body in sorted(MALFORMED):
        kind = "text/html" if body == "html" else "text/event-stream"
        fake.reply_raw(MALFORMED[body], content_type=kind)
        proc = box.run("q", f"hello ({body})")
        assert proc.returncode in (0, PROVIDER), (body, proc.stderr)
        assert "internal error" not in proc.stderr, (body, proc.stderr)
        assert fake.pending() == 0, f"{body}: the raw answer was not asked for"
        kinds = tail(box, 3)
        assert kinds[-2:] == ["turn_start", "chat_request"] or kinds == [
            "turn_start",
            "chat_request",
            "chat_response",
        ], (body, kinds)
    works_afterwards(box, fake)
