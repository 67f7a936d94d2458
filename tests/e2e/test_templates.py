"""`jp q -t NAME -p KEY VALUE`: templates kept in the user's configuration, as llm
users know them, through the real SDK pointed at the loopback fake."""

from __future__ import annotations

import json

from tests.e2e.harness import User
from tests.support.fake_messages import FakeMessages

TEMPLATES = """
[assistant]
max_retries = 0

[assistant.model]
id = "anthropic/claude-main"

[templates.review]
system = "You review $lang code, tersely."
prompt = "Review this for $focus:\\n\\n$input"
model = "anthropic/claude-reviewer"
defaults = {focus = "bugs"}

[templates.haiku]
prompt = "A haiku about $topic."

[templates.plain]
system = "Answer in one line."
"""


def test_a_template_fills_the_query_its_system_and_its_model(
    online: User, fake: FakeMessages
) -> None:
    online.config(TEMPLATES)
    fake.reply_text("Looks fine.", when={"last_user_contains": "Review this"})
    online.ok("q", "--new", "-t", "review", "-p", "lang", "Rust", "fn main() {}")
    sent = fake.requests[-1]
    assert sent["model"] == "claude-reviewer"
    assert "You review Rust code, tersely." in json.dumps(sent["system"])
    request = [e for e in online.events(online.active()) if e["type"] == "chat_request"][-1]
    assert request["content"] == "Review this for bugs:\n\nfn main() {}"
    fake.reply_text("Next.", when={"last_user_contains": "Review this for speed"})
    online.ok("q", "-t", "review", "-p", "lang", "Go", "-p", "focus", "speed", "-m",
              "anthropic/claude-main", "x := 1")
    assert fake.requests[-1]["model"] == "claude-main"  # -m over the template's model
    fake.reply_text("Old pond.", when={"last_user_contains": "haiku"})
    online.ok("q", "-t", "haiku", "-p", "topic", "git")  # no TEXT: the prompt is the query
    assert fake.requests[-1]["messages"][-1]["content"][0]["text"] == "A haiku about git."
    fake.reply_text("One line.", when={"last_user_contains": "what is jp"})
    online.ok("q", "-t", "plain", "what is jp")  # no prompt: the text is the query
    assert "Answer in one line." in json.dumps(fake.requests[-1]["system"])


def test_a_template_used_wrongly_is_one_error_line(online: User, fake: FakeMessages) -> None:
    online.config(TEMPLATES)
    before = len(fake.requests)
    for args, said in (
        (["-t", "nope", "x"], "error: no template 'nope' in your configuration"),
        (["-t", "review", "x"], "error: template review needs a value for lang"),
        (["-t", "review", "-p", "lnag", "Go", "x"], "error: template review has no parameter lnag"),
        (["-p", "lang", "Go", "x"], "error: -p gives a template's parameter"),
        (["-t", "haiku"], "error: template haiku needs a value for topic"),
    ):
        proc = online.fail("q", "--new", *args, code=2)
        assert proc.stderr.startswith(said), proc.stderr
        assert "Traceback" not in proc.stderr
    assert len(fake.requests) == before  # nothing was asked


def test_a_conversation_may_set_no_template() -> None:
    """Templates are the user's: a config_delta naming one is not applied."""
    from porcelain.config.trust import conversation_may_set  # the delta's allow-list

    assert not conversation_may_set(("templates", "x", "prompt"))
    assert conversation_may_set(("conversation", "tools", "*", "enable"))
