"""A query that cannot reach its model fails before anything is written, and
Ctrl-C says what it kept.

The checks that need no model run first (provider known, model id well
formed, credentials present, JP_HEAD free to move): a refused `jp q` moves no
tip, and a refused `jp q --new` creates no conversation and writes no note.
Once the request is committed a provider failure keeps it (the design).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.harness import ID, RUST, RUST_ID, Sandbox
from tests.support.fake_messages import FakeMessages

INTERRUPTED = 130


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    box = Sandbox(tmp_path_factory.mktemp("precheck") / "box")
    box.ok("init")
    box.ok("conversation", "import", "--activate", str(RUST))
    return box


@pytest.fixture
def box(template: Sandbox, tmp_path: Path) -> Sandbox:
    return template.copy(tmp_path / "box")


@pytest.fixture
def fake() -> Iterator[FakeMessages]:
    with FakeMessages() as server:
        yield server


def refused_twice_leaves_all_as_it_was(box: Sandbox, *args: str, words: str) -> None:
    """``jp q args`` and ``jp q --new args`` (three times each) write nothing at all."""
    before, head = box.refs(), box.head()
    for _ in range(3):  # retries must not pile up unanswered turns
        proc = box.fail("q", *args, "SHOULD-NOT-BE-STORED")
        assert words in proc.stderr, proc.stderr
        proc = box.fail("q", "--new", *args, "SHOULD-NOT-BE-STORED")
        assert words in proc.stderr, proc.stderr
        assert not ID.findall(proc.stdout)
    assert box.refs() == before, "a refused query moved a ref (a tip, a note, a new conversation)"
    assert box.head() == head
    assert "SHOULD-NOT-BE-STORED" not in box.git("log", "-p", "--all")


def test_no_api_key_for_an_anthropic_model(box: Sandbox) -> None:
    box.config_file.write_text('[assistant.model]\nid = "anthropic/claude-test"\n')
    refused_twice_leaves_all_as_it_was(box, words="no Anthropic API key")


def test_an_unknown_provider(box: Sandbox) -> None:
    refused_twice_leaves_all_as_it_was(box, "-m", "nowhere/model", words="unknown model provider")


def test_a_model_id_without_a_provider(box: Sandbox) -> None:
    refused_twice_leaves_all_as_it_was(box, "-m", "just-a-name", words="provider/name")


def test_a_model_pinned_earlier_that_cannot_run_now(box: Sandbox, fake: FakeMessages) -> None:
    """`-m` recorded the model in the conversation; without the key it cannot run."""
    fake.reply_text("Pinned.")
    box.ok("q", "-m", "anthropic/claude-test", "pin it", env=fake.env())
    tip = box.conversations()[RUST_ID].tip
    proc = box.fail("q", "now without the key")
    assert "no Anthropic API key" in proc.stderr
    assert box.conversations()[RUST_ID].tip == tip, "the refused query committed its request"


def test_a_leftover_jp_head_lock(box: Sandbox) -> None:
    lock = box.store / "JP_HEAD.lock"
    lock.write_text("")
    before = box.refs()
    for args in (["q", "--new", "my words"], ["conversation", "new"]):
        proc = box.fail(*args)
        assert "JP_HEAD" in proc.stderr and str(lock) in proc.stderr, proc.stderr
    assert box.refs() == before, "a conversation was created although JP_HEAD could not move"
    proc = box.run("q", "on the active one still works")
    assert proc.returncode == 0, proc.stderr
    lock.unlink()
    box.ok("q", "--new", "and now a new one")


def test_a_provider_failure_after_the_request_keeps_it(box: Sandbox, fake: FakeMessages) -> None:
    box.config_file.write_text('[assistant.model]\nid = "anthropic/claude-test"\n')
    fake.reply_error(400, "invalid_request_error", "no")
    proc = box.fail("q", "kept words", env=fake.env())
    assert proc.returncode == 4
    events = box.conversations()[RUST_ID].events
    assert events[-1]["type"] == "chat_request" and events[-1]["content"] == "kept words"


# -- Ctrl-C ------------------------------------------------------------------------------


def test_ctrl_c_while_the_answer_streams(box: Sandbox) -> None:
    before = box.conversations()[RUST_ID].events
    proc = box.run("q", "stop it", env={"JP_FAULT": "model:streaming:int"})
    assert proc.returncode == INTERRUPTED, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines[-1] == (
        f"interrupted: the request and 0 events of the answer are saved in {RUST_ID}; "
        "`jp q --retry` answers it again"
    ), proc.stderr
    assert "\n\n" not in proc.stderr
    after = box.conversations()[RUST_ID].events
    assert after[: len(before)] == before
    assert [e["type"] for e in after[len(before) :]] == ["turn_start", "chat_request"]


def test_ctrl_c_before_the_request_is_stored(box: Sandbox) -> None:
    before = box.refs()
    proc = box.run("q", "stop it", env={"JP_FAULT": "append:objects-written:int"})
    assert proc.returncode == INTERRUPTED, proc.stderr
    assert f"interrupted: nothing of this query was saved in {RUST_ID}" in proc.stderr
    assert box.refs() == before


def test_ctrl_c_keeps_what_the_real_sdk_streamed(box: Sandbox, fake: FakeMessages) -> None:
    """A tool round completed, then Ctrl-C while the next answer streams: the tool
    call, its result and the text that had arrived are kept, and said so."""
    box.config_file.write_text(
        '[assistant.model]\nid = "anthropic/claude-test"\n'
        '[conversation.tools.echo]\ncommand = ["cat"]\ndescription = "Echo"\nconfirm = false\n'
    )
    fake.reply_blocks([{"type": "tool_use", "name": "echo", "input": {"x": 1}}])
    fake.reply_text("The answer arrives in three pieces of text.")
    proc = box.run("q", "use the tool", env={**fake.env(), "JP_FAULT": "model:streaming@3:int"})
    assert proc.returncode == INTERRUPTED, proc.stderr
    kinds = box.conversations()[RUST_ID].kinds
    assert kinds[-5:] == [
        "turn_start",
        "chat_request",
        "tool_call_request",
        "tool_call_response",
        "chat_response",
    ], kinds
    assert f"the request and 3 events of the answer are saved in {RUST_ID}" in proc.stderr
    fake.reply_text("Back.")
    box.ok("q", "are you there?", env=fake.env())
