"""A conversation's recorded model chooses only among the providers the user's
own configuration enables, and a model change that arrives by pull or import is
named once before it is used (docs/security.md, "recorded model")."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.harness import User, write_conversation
from tests.e2e.test_trust_config import append_with_git, delta_event
from tests.support.fake_messages import FakeMessages

MAIN = '[assistant]\nmax_retries = 0\n\n[assistant.model]\nid = "anthropic/claude-main"\n'
NAMED = "chosen by configuration it recorded elsewhere"


def pulled(user: User, tmp_path: Path, fake: FakeMessages, model: str) -> str:
    """A conversation of ``user`` to which a pull brought a delta choosing ``model``."""
    user.config(MAIN)
    fake.reply_text("Hello.", times=None)
    user.ok("q", "--new", "hello there")
    cid = user.active()
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    user.ok("remote", "add", "origin", str(remote))
    user.ok("push", "origin")
    delta = delta_event({"assistant": {"model": {"id": model}}})
    hostile = append_with_git(remote, user.env, f"refs/conversations/{cid}", delta)
    user.ok("pull", "origin")
    assert user.tip(cid) == hostile
    return cid


def test_a_pulled_model_of_a_provider_the_user_never_enabled_is_not_used(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    cid = pulled(online, tmp_path, fake, "ollama/llama3")
    proc = online.run("q", "and now")
    assert proc.returncode == 0, proc.stderr
    assert fake.requests[-1]["model"] == "claude-main", "the user's own model answers"
    assert "'ollama' is not one your configuration enables" in proc.stderr
    assert "[providers.ollama]" in proc.stderr
    shown = online.json("config", "show", "--conversation", cid)
    assert shown["assistant.model.id"]["value"] == "anthropic/claude-main"
    assert [item["key"] for item in shown["ignored"]] == ["assistant.model.id"]


def test_an_imported_model_of_a_provider_not_enabled_is_not_used(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    online.config(MAIN)
    folder = write_conversation(tmp_path / "17800000611-chosen", 2)
    entries = json.loads((folder / "events.json").read_text())
    entries.append(delta_event({"assistant": {"model": {"id": "openrouter/some/model"}}}))
    (folder / "events.json").write_text(json.dumps(entries, indent=2) + "\n")
    cid = online.import_(folder)
    online.ok("conversation", "use", cid)
    fake.reply_text("Fine.")
    proc = online.run("q", "go on")
    assert proc.returncode == 0, proc.stderr
    assert fake.requests[-1]["model"] == "claude-main"
    assert "'openrouter' is not one your configuration enables" in proc.stderr


def test_a_provider_entry_of_the_users_own_enables_it(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    pulled(online, tmp_path, fake, "ollama/llama3")
    online.config(MAIN + "\n[providers.ollama]\n")  # the explicit way to allow one
    shown = online.json("config", "show", "--conversation")
    assert shown["assistant.model.id"]["value"] == "ollama/llama3"
    assert shown["ignored"] == []


def test_a_pulled_model_change_is_named_once_before_it_is_used(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    cid = pulled(online, tmp_path, fake, "anthropic/claude-pulled")
    first = online.run("q", "first after the pull")
    assert first.returncode == 0, first.stderr
    assert fake.requests[-1]["model"] == "claude-pulled"
    notes = [line for line in first.stderr.splitlines() if NAMED in line]
    assert len(notes) == 1 and "anthropic/claude-pulled" in notes[0] and cid in notes[0]
    second = online.run("q", "second after the pull")
    assert second.returncode == 0 and NAMED not in second.stderr, second.stderr
    assert fake.requests[-1]["model"] == "claude-pulled"


def test_the_users_own_model_choice_is_neither_named_nor_refused(
    online: User, fake: FakeMessages
) -> None:
    online.config(MAIN)
    fake.reply_text("Fine.", times=None)
    online.ok("q", "--new", "-m", "anthropic/claude-other", "first")
    proc = online.run("q", "second")
    assert proc.returncode == 0 and NAMED not in proc.stderr, proc.stderr
    assert fake.requests[-1]["model"] == "claude-other"


def test_the_users_own_choice_of_a_provider_not_configured_stays_with_the_conversation(
    online: User,
) -> None:
    """``-m ollama/...`` typed by the user is theirs: recorded and accepted here, it is
    kept by the next commands although no file of theirs names ollama."""
    online.config(MAIN)
    online.run("q", "--new", "-m", "ollama/llama3", "local only")  # nothing listens there
    cid = online.active()
    shown = online.json("config", "show", "--conversation", cid)
    assert shown["assistant.model.id"]["value"] == "ollama/llama3"
    assert shown["ignored"] == []


def test_a_review_started_here_is_the_users_own(user: User, tmp_path: Path) -> None:
    source = user.import_(write_conversation(tmp_path / "17800000612-five", 5))
    user.ok("conversation", "use", source)
    user.ok("conversation", "compact", "--interactive")
    proc = user.run("q", "turns 2-3")
    assert proc.returncode == 0, proc.stderr
    assert NAMED not in proc.stderr and "ignored" not in proc.stderr, proc.stderr
