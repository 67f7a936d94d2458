"""`jp config unset --conversation KEY` and `jp q -m default`: a conversation's
recorded choice dropped by a new config_delta whose null means "back to the
layers below"; undoable, and a pulled null only ever removes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.e2e.harness import User
from tests.e2e.test_trust_config import append_with_git, delta_event

MODEL = "assistant.model.id"


def model_source(user: User) -> tuple[str, str]:
    entry = user.json("config", "show", "--conversation")[MODEL]
    return str(entry["value"]), str(entry["source"])


def test_unset_takes_the_model_back_to_the_users_file(user: User) -> None:
    user.ok("config", "set", MODEL, "offline/echo")
    user.ok("q", "-m", "offline/chosen", "hello")
    assert model_source(user)[0] == "offline/chosen"

    out = user.ok("config", "unset", "--conversation", MODEL)
    assert "no longer sets it" in out and str(user.config_file) in out
    assert model_source(user) == ("offline/echo", str(user.config_file))
    deltas = [e["delta"] for e in user.events(user.active()) if e["type"] == "config_delta"]
    assert deltas[-1] == {"assistant": {"model": {"id": None}}}
    assert "offline/echo" in user.json("q", "again")["model"]

    again = user.fail("config", "unset", "--conversation", MODEL, code=1)
    assert "records no assistant.model.id" in again.stderr


def test_unset_is_undone_by_undo(user: User) -> None:
    user.ok("config", "set", MODEL, "offline/echo")
    user.ok("q", "-m", "offline/chosen", "hello")
    cid = user.active()
    before = user.tip(cid)
    user.ok("config", "unset", "--conversation", MODEL, "-i", cid)
    user.ok("undo")
    assert user.tip(cid) == before
    assert model_source(user)[0] == "offline/chosen"


def test_unset_refuses_what_a_conversation_never_records(user: User) -> None:
    user.ok("q", "--new", "hello")
    tip = user.tip(user.active())
    for key in ("providers.anthropic.api_key", "conversation.tools.x.command", "nonsense"):
        proc = user.fail("config", "unset", "--conversation", key, code=2)
        assert "is not a key a conversation records" in proc.stderr
    proc = user.fail("config", "unset", MODEL, code=2)
    assert "--conversation" in proc.stderr
    assert user.tip(user.active()) == tip


def test_dash_m_default_drops_the_recorded_model_once(user: User) -> None:
    user.ok("config", "set", MODEL, "offline/echo")
    user.ok("q", "-m", "offline/chosen", "hello")
    first = user.json("q", "-m", "default", "back to mine")
    assert first["model"] == "offline/echo"
    recorded = [e for e in first["events"] if e["type"] == "config_delta"]
    assert [e["delta"] for e in recorded] == [{"assistant": {"model": {"id": None}}}]
    second = user.json("q", "-m", "default", "still mine")
    assert second["model"] == "offline/echo"
    assert not [e for e in second["events"] if e["type"] == "config_delta"]
    assert model_source(user) == ("offline/echo", str(user.config_file))


def test_a_pulled_null_only_removes(user: User, tmp_path: Path) -> None:
    user.config(
        '[assistant.model]\nid = "offline/echo"\n\n'
        '[conversation.tools.list_files]\ncommand = ["true"]\nconfirm = true\n'
    )
    user.ok("q", "--new", "hello")
    cid = user.active()
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    user.ok("remote", "add", "origin", str(remote))
    user.ok("push", "origin")
    hostile = {
        "assistant": None,  # a whole table: not a key a conversation sets
        "conversation": {"tools": {"list_files": {"confirm": None, "command": None}}},
        "providers": {"anthropic": {"api_key": None}},
    }
    append_with_git(remote, user.env, f"refs/conversations/{cid}", delta_event(hostile))
    user.ok("pull", "origin")
    shown = user.json("config", "show", "--conversation", cid)
    assert shown[MODEL]["value"] == "offline/echo"
    assert shown["conversation.tools.list_files.confirm"]["value"] is True
    assert shown["conversation.tools.list_files.command"]["value"] == ["true"]
    ignored = {item["key"] for item in shown["ignored"]}
    assert {"assistant", "conversation.tools.list_files.command"} <= ignored
    assert "providers.anthropic.api_key" in ignored
