"""get_value / set_value on one file, atomic writes, show."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

import pytest

from porcelain.config import Config, get_value, set_value, show
from porcelain.errors import ConfigError

COMMENTED = """\
# my jp settings
[assistant]
instructions = "be brief"  # keep it short

[assistant.model]
# the model I like
id = "anthropic/claude-sonnet-4-5"
"""


def test_set_value_keeps_comments_and_layout(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(COMMENTED)
    assert set_value(path, "assistant.model.context_window", "200000") == 200_000
    text = path.read_text()
    assert text.startswith(COMMENTED)
    assert text.endswith("context_window = 200000\n")
    set_value(path, "assistant.instructions", "be kind")
    text = path.read_text()
    assert 'instructions = "be kind"  # keep it short' in text
    assert "# the model I like" in text


def test_set_value_creates_file_and_dirs(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "config.toml"
    set_value(path, "assistant.model.id", "anthropic/x")
    set_value(path, "conversation.tools.ls.command", '["ls", "-l"]')
    set_value(path, "conversation.tools.*.enable", "false")
    data = tomllib.loads(path.read_text())
    assert data == {
        "assistant": {"model": {"id": "anthropic/x"}},
        "conversation": {"tools": {"ls": {"command": ["ls", "-l"]}, "*": {"enable": False}}},
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_set_value_parses_toml_else_string(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    assert set_value(path, "user.name", "123") == "123"
    assert set_value(path, "assistant.max_retries", "0") == 0
    assert set_value(path, "conversation.tools.x.confirm", "true") is True
    assert set_value(path, "assistant.instructions", "two words") == "two words"
    assert get_value(path, "assistant.max_retries") == 0
    assert get_value(path, "user.name") == "123"


def test_set_rules(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    set_value(path, "conversation.compaction.rules", '[{keep_last = 2, reasoning = "strip"}]')
    assert get_value(path, "conversation.compaction.rules") == [
        {"keep_last": 2, "reasoning": "strip"}
    ]


def test_rules_cannot_be_addressed_inside(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="rules is an array of tables; set it whole"):
        set_value(tmp_path / "c.toml", "conversation.compaction.rules.keep_last", "2")


def test_set_value_validates_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(COMMENTED)
    with pytest.raises(ConfigError) as info:
        set_value(path, "assistant.model.context_window", "big")
    assert info.value.message == (
        f'{path}: assistant.model.context_window must be an integer greater than 0, got "big"'
    )
    with pytest.raises(ConfigError, match=f"^{path}: unknown key assistant.modle$"):
        set_value(path, "assistant.modle.id", "a/b")
    assert path.read_text() == COMMENTED
    assert os.listdir(tmp_path) == ["config.toml"]


def test_set_value_through_a_non_table(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('conversation = "oops"\n')
    with pytest.raises(ConfigError, match="conversation"):
        set_value(path, "conversation.tools.ls.command", "ls")


def test_set_value_on_invalid_toml_names_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[assistant\n")
    with pytest.raises(ConfigError, match=r"invalid TOML: .*line 1"):
        set_value(path, "user.name", "x")


def test_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.toml"
    path.write_text(COMMENTED)

    def boom(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(ConfigError, match="cannot write: No space left on device"):
        set_value(path, "user.name", "x")
    assert path.read_text() == COMMENTED
    assert os.listdir(tmp_path) == ["config.toml"]  # the temporary file is gone


def test_write_keeps_mode_and_symlink(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "jp.toml"
    real.parent.mkdir()
    real.write_text(COMMENTED)
    real.chmod(0o600)
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    set_value(link, "user.name", "ann")
    assert link.is_symlink()
    assert get_value(real, "user.name") == "ann"
    assert stat.S_IMODE(real.stat().st_mode) == 0o600


def test_get_value_missing(tmp_path: Path) -> None:
    assert get_value(tmp_path / "none.toml", "user.name") is None
    path = tmp_path / "config.toml"
    path.write_text(COMMENTED)
    assert get_value(path, "user.name") is None
    assert get_value(path, "assistant.model") == {"id": "anthropic/claude-sonnet-4-5"}
    with pytest.raises(ConfigError, match="unknown key user.nmae"):
        get_value(path, "user.nmae")


def test_show_round_trips() -> None:
    config = Config.defaults().with_layer(
        {
            "assistant": {"model": {"id": "a/b"}},
            "conversation": {
                "compaction": {"rules": [{"keep_last": 2, "summary": {"context": "c"}}]},
                "tools": {"*": {"enable": False}, "ls": {"command": ["ls"]}},
            },
        },
        "l",
    )
    text = show(config)
    assert tomllib.loads(text) == config.data
    assert "built-in rule" not in text


def test_show_mentions_the_built_in_rule() -> None:
    text = show(Config.defaults())
    assert "# conversation.compaction.rules: none configured" in text
    assert 'reasoning = "strip"' in text
    assert tomllib.loads(text) == Config.defaults().data
