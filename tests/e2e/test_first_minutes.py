"""The first minutes of a new user: a bare command group shows its help, a cut-off
answer is kept marked and retried in place, a confirmation nobody answers is a no."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.harness import JP, RUST, WITH_COMPACTION, User
from tests.support.fake_messages import FakeMessages
from tests.support.terminal import Terminal

INTERRUPTED_LINE = "[interrupted: the answer was cut off here]"  # what print shows after it
INTERRUPTED_NOTE = "[interrupted: this answer was cut off"  # what the model reads after it


@pytest.mark.parametrize("group", ["", "conversation", "remote", "config", "op", "model"])
def test_a_bare_group_prints_its_help_and_succeeds(user: User, group: str) -> None:
    args = [group] if group else []
    proc = user.run(*args)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", "a bare group wrote to stderr"
    assert proc.stdout.startswith("Usage: jp"), proc.stdout
    assert "Commands:" in proc.stdout
    lines = proc.stdout.splitlines()
    assert len(lines) >= 8 and max(map(len, lines)) <= 120, proc.stdout
    assert proc.stdout == user.ok(*args, "--help"), "the bare help differs from --help"


# -- a cut-off answer ----------------------------------------------------------------


def _sent(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


def _printed(user: User) -> str:
    return user.ok("conversation", "print", "--style", "full")


def test_a_broken_stream_is_kept_marked_and_retried_in_place(
    online: User, fake: FakeMessages
) -> None:
    fake.reply_drop_mid_stream("CUT-OFF-TEXT and the rest that never came")
    proc = online.run("q", "--new", "tell me a story")
    assert proc.returncode != 0, "a broken stream was reported as success"
    assert "error:" in proc.stderr and "--retry" in proc.stderr, proc.stderr
    cid = online.active()
    assert "CUT-OFF-TEXT" in _printed(online) and INTERRUPTED_LINE in _printed(online)
    (cut,) = [e for e in online.events(cid) if e.get("type") == "chat_response"]
    assert cut["metadata"]["interrupted"] == "stream"
    subjects = online.git("log", "--format=%s", f"refs/conversations/{cid}").splitlines()
    assert subjects[0].startswith("assistant [interrupted]: CUT-OFF-TEXT"), subjects
    fake.reply_text("WHOLE-ANSWER")
    online.ok("q", "--retry")
    assert [c["id"] for c in online.ls("--all")] == [cid], "retrying a cut-off answer forked"
    assert "CUT-OFF-TEXT" not in _sent(fake.requests[-1]), "the cut-off part was sent as complete"
    assert fake.requests[-1]["messages"][-1]["role"] == "user"
    printed = _printed(online)
    assert (
        printed.index("CUT-OFF-TEXT")
        < printed.index(INTERRUPTED_LINE)
        < printed.index("WHOLE-ANSWER")
    )
    fake.reply_text("ANOTHER")
    online.ok("q", "--retry")  # the newest answer is complete: the retry forks, as before
    assert len(online.ls("--all")) == 2


def test_a_new_question_after_a_cut_off_answer_sends_it_marked(
    online: User, fake: FakeMessages
) -> None:
    fake.reply_drop_mid_stream("HALF-SAID-WORD and more to come")
    online.run("q", "--new", "first question")
    fake.reply_text("fine")
    online.ok("q", "second question")
    sent = fake.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "HALF-SAID" in json.dumps(sent[1]) and INTERRUPTED_NOTE in json.dumps(sent[1])


def test_ctrl_c_on_a_terminal_keeps_the_answer_marked(online: User, fake: FakeMessages) -> None:
    fake.reply_stall_mid_stream("TYPED-SO-FAR\n\nand then a long wait for the rest")
    term = Terminal([str(JP), "q", "--new", "go slowly"], online.env, online.root)
    term.expect(b"TYPED-SO-FAR")
    term.send("\x03")  # Ctrl-C, as typed: the terminal sends SIGINT to jp
    code, shown = term.finish()
    assert code == 130, shown
    assert b"interrupted" in shown and b"Traceback" not in shown
    cid = online.active()
    (cut,) = [e for e in online.events(cid) if e.get("type") == "chat_response"]
    assert cut["metadata"]["interrupted"] == "user" and cut["message"].startswith("TYPED-SO-FAR")
    fake.reply_text("DONE-AFTER-CTRL-C")
    online.ok("q", "--retry")
    assert [c["id"] for c in online.ls("--all")] == [cid]
    assert "TYPED-SO-FAR" not in _sent(fake.requests[-1])
    assert "DONE-AFTER-CTRL-C" in _printed(online)


# -- confirmations: one rule ---------------------------------------------------------


def _compacted(user: User) -> str:
    cid = user.import_(WITH_COMPACTION)
    user.ok("conversation", "use", cid)
    assert user.show(cid)["compactions"], "setup: the fixture has a compaction"
    return cid


def _refused_for_want_of_an_answer(proc: Any) -> None:
    assert proc.returncode != 0, "a confirmation nobody answered went ahead"
    assert "--yes" in proc.stderr and "no answer" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_closed_stdin_is_a_no_for_every_confirmation(user: User) -> None:
    cid = _compacted(user)
    other = user.import_(RUST)
    chain, refs = user.commits(cid), user.refs()
    for args in (
        ("conversation", "compact", "--reset"),
        ("conversation", "rm", cid),
        ("conversation", "archive"),  # the active one
        ("conversation", "archive", cid, other),
    ):
        _refused_for_want_of_an_answer(user.run(*args, input=""))
        # a pipe with something else than y or n on it is no answer either
        _refused_for_want_of_an_answer(user.run(*args, input="\n"))
        assert user.commits(cid) == chain and user.refs() == refs, f"`jp {' '.join(args)}`"
    user.ok("conversation", "compact", "--reset", input="y\n")  # a piped y still confirms
    assert not user.show(cid)["compactions"]
    user.fail("conversation", "rm", other, input="n\n")  # a piped no refuses
    user.ok("--yes", "conversation", "archive", other)
    assert user.ref(f"refs/archive/conversations/{other}")


def test_enter_on_a_terminal_is_a_no_and_y_is_a_yes(user: User) -> None:
    cid = _compacted(user)
    chain = user.commits(cid)
    term = Terminal([str(JP), "conversation", "compact", "--reset"], user.env, user.root)
    term.expect(b"Withdraw? [y/N] ")
    term.send("\r")  # Enter: the default, which is no
    code, shown = term.finish()
    assert code == 0 and b"Nothing withdrawn" in shown, shown
    assert user.commits(cid) == chain
    term = Terminal([str(JP), "conversation", "rm", cid], user.env, user.root)
    term.expect(b"[y/N] ")
    term.send("y\r")
    code, shown = term.finish()
    assert code == 0 and b"Removed " in shown, shown
    assert user.ref(f"refs/conversations/{cid}") is None


# -- aliases -------------------------------------------------------------------------


def test_alias_chains_resolve_and_a_bad_alias_fails_only_its_own_use(
    online: User, fake: FakeMessages
) -> None:
    online.config(
        '[assistant.model]\nid = "anthropic/claude-test"\n[assistant.model.aliases]\n'
        'quick = "fast"\nfast = "anthropic/claude-chained"\n'
        'broken = "nowhere"\nloopy = "loopier"\nloopier = "loopy"\n'
    )
    fake.reply_text("chained", times=None)
    online.ok("q", "--new", "-m", "quick", "one")
    online.ok("q", "--new", "two")  # the bad aliases do not stop the default model
    assert [r["model"] for r in fake.requests] == ["claude-chained", "claude-test"]
    proc = online.run("q", "--new", "-m", "broken", "three")
    assert proc.returncode == 3 and "'broken'" in proc.stderr and "'nowhere'" in proc.stderr
    proc = online.run("q", "-m", "loopy", "four")
    assert proc.returncode == 3 and "'loopy' -> 'loopier' -> 'loopy'" in proc.stderr
    assert len(fake.requests) == 2, "a bad alias reached the provider"
    online.ok("conversation", "ls")
