"""Usage errors in one line, optional values that never swallow a word, TOML echoes,
and `show`'s configuration rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.harness import User, ids_in
from tests.support.fake_messages import FakeMessages


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("qeury", "x"), "error: no such command `qeury` (did you mean `query`?)"),
        (("q", "--nwe", "x"), "error: no such option --nwe (did you mean `--new`?)"),
        (("conversation", "lss"), "error: no such command `lss` (did you mean `ls`?)"),
        (("config", "set"), "error: missing argument 'KEY'"),
    ],
)
def test_usage_errors_are_one_line_with_a_hint(
    user: User, args: tuple[str, ...], expected: str
) -> None:
    proc = user.fail(*args, code=2)
    lines = proc.stderr.splitlines()
    assert lines[0] == expected, proc.stderr
    assert len(lines) == 2 and lines[1].startswith("see `jp"), proc.stderr
    assert "Usage:" not in proc.stderr and "Error:" not in proc.stderr


def test_hostile_command_name_is_one_line(user: User) -> None:
    proc = user.fail("q\nerror: fake\x1b[31m", code=2)
    assert len(proc.stderr.splitlines()) == 2, proc.stderr


def test_bare_k_does_not_take_the_question(online: User, fake: FakeMessages) -> None:
    fake.reply_text("first")
    online.ok("q", "--new", "one")
    fake.reply_text("answered", when={"last_user_contains": "hello"})
    out = online.ok("q", "-k", "hello")
    assert "answered" in out, "-k swallowed the question"
    fake.reply_text("attached form")
    fake.reply_text("equals form")
    online.ok("q", "-kr:..-1", "still a question")
    online.ok("q", "--compact=r:..-1", "and another")


def test_bare_reset_does_not_take_the_id(user: User) -> None:
    cid = ids_in(user.ok("conversation", "new"))[-1]
    user.ok("conversation", "new")
    out = user.run("conversation", "compact", "--reset", cid)
    assert "not a conversation id" not in out.stderr, out.stderr
    assert "--reset=" not in out.stderr
    proc = user.fail("conversation", "compact", f"--reset={cid}")
    assert "--reset" in proc.stderr


def test_config_set_echoes_toml_and_takes_negative_values(user: User, tmp_path: Path) -> None:
    target = tmp_path / "c.toml"
    out = user.ok("config", "set", "--file", str(target), "conversation.tools.d.command", "date -u")
    assert out.startswith('conversation.tools.d.command = "date -u" in '), out
    out = user.ok("config", "set", "--file", str(target), "conversation.tools.d.confirm", "false")
    assert out.startswith("conversation.tools.d.confirm = false in "), out
    proc = user.fail("config", "set", "--file", str(target), "assistant.max_retries", "-5")
    assert "-5" in proc.stderr and "no such option" not in proc.stderr, proc.stderr


def test_show_names_the_model_and_what_the_conversation_records(user: User) -> None:
    user.ok("q", "--new", "-m", "offline/jp", "hello")
    out = user.ok("conversation", "show")
    rows = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    assert rows["Title"].strip() == "hello"  # untitled: the first prompt (one rule for every view)
    assert rows["State"].strip() == "live" and rows["Active"].strip() == "yes"
    assert rows["Model"].strip().startswith("offline/jp, from conversation ")
    assert rows["Recorded"].strip() == 'assistant.model.id = "offline/jp"'
    data = user.show()
    assert data["model"]["id"] == "offline/jp"
    assert data["conversation_sets"] == {"assistant.model.id": "offline/jp"}
