"""The removal marker: a null in a conversation's delta takes a key back to the
layers below the deltas, and only for a key a conversation may set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from porcelain.config import Config, Recorded, filter_delta, load_config

USER = '[assistant.model]\nid = "offline/mine"\n'


def configured(tmp_path: Path, *deltas: dict[str, Any]) -> Config:
    user = tmp_path / "config" / "jp" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(USER)
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    return load_config(environ=env, store_config=None, files=[], overrides=[], deltas=deltas)


def test_a_null_goes_back_to_the_users_file_and_a_later_choice_wins(tmp_path: Path) -> None:
    chosen = {"assistant": {"model": {"id": "offline/chosen"}}}
    dropped = {"assistant": {"model": {"id": None}}}
    config = configured(tmp_path, chosen, dropped)
    assert config.model_id() == "offline/mine"
    assert config.origin(("assistant", "model", "id")).endswith("config.toml")
    again = configured(tmp_path, chosen, dropped, {"assistant": {"model": {"id": "offline/b"}}})
    assert again.model_id() == "offline/b"


def test_a_null_with_nothing_below_leaves_the_key_unset(tmp_path: Path) -> None:
    config = configured(
        tmp_path, {"assistant": {"instructions": "x"}}, {"assistant": {"instructions": None}}
    )
    assert config.get("assistant.instructions") is None


def test_a_null_only_removes_keys_a_conversation_may_set() -> None:
    hostile = {
        "assistant": {"model": None, "instructions": None},
        "providers": {"anthropic": {"api_key": None}},
        "conversation": {"tools": {"shell": {"command": None, "enable": None}}},
    }
    kept, ignored = filter_delta(Recorded(hostile, "pulled"), ["shell"])
    assert kept == {
        "assistant": {"instructions": None},
        "conversation": {"tools": {"shell": {"enable": None}}},
    }
    left = {".".join(item.path) for item in ignored}
    assert {
        "assistant.model",
        "providers.anthropic.api_key",
        "conversation.tools.shell.command",
    } <= left
