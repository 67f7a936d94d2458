"""Stacking the layers: order, rule append, --cfg parsing, deltas, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from porcelain.config import cli_layers, load_config, parse_override, user_config_path
from porcelain.errors import ConfigError


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def user_file(env: dict[str, str], text: str) -> Path:
    return write(Path(env["XDG_CONFIG_HOME"]) / "jp" / "config.toml", text)


def rule(n: int) -> str:
    return f"[[conversation.compaction.rules]]\nkeep_last = {n}\n"


# -- user_config_path --------------------------------------------------------


def test_user_config_path_prefers_xdg() -> None:
    path = user_config_path({"XDG_CONFIG_HOME": "/x", "HOME": "/h"})
    assert path == Path("/x/jp/config.toml")


def test_user_config_path_falls_back_to_home() -> None:
    assert user_config_path({"HOME": "/h"}) == Path("/h/.config/jp/config.toml")
    assert user_config_path({"HOME": "/h", "XDG_CONFIG_HOME": ""}) == Path(
        "/h/.config/jp/config.toml"
    )
    # relative XDG paths are ignored, as the XDG spec says
    assert user_config_path({"HOME": "/h", "XDG_CONFIG_HOME": "rel"}) == Path(
        "/h/.config/jp/config.toml"
    )


# -- load_config -------------------------------------------------------------


def test_defaults_only_when_no_files(env: dict[str, str], tmp_path: Path) -> None:
    config = load_config(
        environ=env, store_config=tmp_path / "store" / "jp" / "config.toml", files=[], overrides=[]
    )
    assert config.model_id() is None
    assert config.max_retries() == 2
    assert config.get("assistant.model.max_tokens") == 8192
    assert config.sources[0] == "default"


def test_layer_order(env: dict[str, str], tmp_path: Path) -> None:
    user_file(
        env,
        'assistant.model.id = "user/m"\nassistant.instructions = "user"\n'
        'user.name = "u"\nassistant.max_retries = 5\n',
    )
    store = write(
        tmp_path / "store.toml",
        'assistant.model.id = "store/m"\nassistant.instructions = "store"\nuser.name = "s"\n',
    )
    cfile = write(tmp_path / "c.toml", 'assistant.model.id = "file/m"\n')
    config = load_config(
        environ=env,
        store_config=store,
        files=[cfile],
        overrides=["assistant.model.id=cli/m"],
        deltas=[{"assistant": {"instructions": "delta", "model": {"id": "delta/m"}}}],
    )
    assert config.model_id() == "cli/m"
    assert config.instructions() == "delta"
    assert config.user_name() == "s"
    assert config.max_retries() == 5
    assert config.get("assistant.model.max_tokens") == 8192


def test_file_layer_beats_delta_and_cfg_beats_file(env: dict[str, str], tmp_path: Path) -> None:
    a = write(tmp_path / "a.toml", "assistant.model.context_window = 10\nuser.name = 'a'\n")
    b = write(tmp_path / "b.toml", "assistant.model.context_window = 20\n")
    config = load_config(
        environ=env,
        store_config=None,
        files=[a, b],
        overrides=["user.name=cli"],
        deltas=[{"assistant": {"model": {"context_window": 5}}, "user": {"name": "d"}}],
    )
    assert config.context_window() == 20
    assert config.user_name() == "cli"


def test_rules_append_across_layers(env: dict[str, str], tmp_path: Path) -> None:
    user_file(env, rule(1))
    store = write(tmp_path / "store.toml", rule(2))
    a = write(tmp_path / "a.toml", rule(4))
    b = write(tmp_path / "b.toml", rule(5))
    config = load_config(
        environ=env,
        store_config=store,
        files=[a, b],
        overrides=["conversation.compaction.rules=[{keep_last = 6}]"],
        deltas=[{"conversation": {"compaction": {"rules": [{"keep_last": 3}]}}}],
    )
    assert [r["keep_last"] for r in config.rules()] == [1, 2, 3, 4, 5, 6]


def test_rules_default_dropped_when_any_layer_defines_one(env: dict[str, str]) -> None:
    default = load_config(environ=env, store_config=None, files=[], overrides=[])
    assert default.rules() == [
        {"keep_first": 1, "keep_last": 1, "reasoning": "strip", "tool_calls": "strip"}
    ]
    user_file(env, rule(7))
    config = load_config(environ=env, store_config=None, files=[], overrides=[])
    assert config.rules() == [{"keep_last": 7}]


def test_recorded_cli_rules_are_not_appended_twice(env: dict[str, str], tmp_path: Path) -> None:
    heavy = write(tmp_path / "heavy.toml", rule(9))
    recorded = cli_layers([heavy], [])
    config = load_config(
        environ=env, store_config=None, files=[heavy], overrides=[], deltas=[recorded]
    )
    assert [r["keep_last"] for r in config.rules()] == [9]


def test_missing_c_file_is_an_error(env: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nope.toml: no such config file"):
        load_config(environ=env, store_config=None, files=[tmp_path / "nope.toml"], overrides=[])


def test_invalid_toml_names_file_line_and_column(env: dict[str, str]) -> None:
    path = user_file(env, 'user.name = "a"\nassistant.model.id = \n')
    with pytest.raises(ConfigError) as info:
        load_config(environ=env, store_config=None, files=[], overrides=[])
    assert info.value.message.startswith(f"{path}: invalid TOML: ")
    assert "line 2" in info.value.message and "column" in info.value.message


def test_unknown_key_in_store_config_names_it(env: dict[str, str], tmp_path: Path) -> None:
    store = write(tmp_path / "s" / "config.toml", "[assistant]\nmodle = 1\n")
    with pytest.raises(ConfigError) as info:
        load_config(environ=env, store_config=store, files=[], overrides=[])
    assert info.value.message == f"{store}: unknown key assistant.modle"


def test_bad_type_in_user_config_names_it(env: dict[str, str]) -> None:
    path = user_file(env, '[assistant.model]\ncontext_window = "big"\n')
    with pytest.raises(ConfigError) as info:
        load_config(environ=env, store_config=None, files=[], overrides=[])
    assert info.value.message.startswith(f"{path}: assistant.model.context_window must be")
    assert info.value.message.endswith('got "big"')


def test_a_bad_delta_is_ignored_and_named_not_an_error(env: dict[str, str]) -> None:
    config = load_config(
        environ=env,
        store_config=None,
        files=[],
        overrides=[],
        deltas=[{}, {"foo": 1, "assistant": {"model": {"context_window": "big"}}}],
    )
    assert config.context_window() is None
    assert [(i.path, i.source) for i in config.ignored] == [
        (("foo",), "conversation config_delta #2"),
        (("assistant", "model", "context_window"), "conversation config_delta #2"),
    ]


def test_non_utf8_file(env: dict[str, str]) -> None:
    path = user_file(env, "")
    path.write_bytes(b"user.name = '\xff'\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(environ=env, store_config=None, files=[], overrides=[])


def test_environment_is_only_read_through_environ(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "elsewhere"))
    write(tmp_path / "elsewhere" / "jp" / "config.toml", "user.name = 'wrong'\n")
    user_file(env, "user.name = 'right'\n")
    config = load_config(environ=env, store_config=None, files=[], overrides=[])
    assert config.user_name() == "right"


# -- --cfg parsing -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("assistant.model.id=anthropic/x", {"assistant": {"model": {"id": "anthropic/x"}}}),
        ("assistant.model.context_window=1000", {"assistant": {"model": {"context_window": 1000}}}),
        (
            "conversation.tools.ls.enable=false",
            {"conversation": {"tools": {"ls": {"enable": False}}}},
        ),
        (
            "conversation.tools.*.confirm=true",
            {"conversation": {"tools": {"*": {"confirm": True}}}},
        ),
        ('assistant.instructions="a = b"', {"assistant": {"instructions": "a = b"}}),
        ("assistant.instructions=be brief", {"assistant": {"instructions": "be brief"}}),
        ("user.name=", {"user": {"name": ""}}),
        # a key that takes a string keeps the raw text when TOML reads another type
        ("user.name=123", {"user": {"name": "123"}}),
        ("user.name=true", {"user": {"name": "true"}}),
        (
            'conversation.tools.ls.command=["ls", "-l"]',
            {"conversation": {"tools": {"ls": {"command": ["ls", "-l"]}}}},
        ),
        (
            "conversation.tools.ls.timeout=1.5",
            {"conversation": {"tools": {"ls": {"timeout": 1.5}}}},
        ),
        (
            'conversation.tools."my.tool".enable=true',
            {"conversation": {"tools": {"my.tool": {"enable": True}}}},
        ),
        # one table given for the rules array is one rule
        (
            "conversation.compaction.rules={keep_last = 3}",
            {"conversation": {"compaction": {"rules": [{"keep_last": 3}]}}},
        ),
        (" user.name = ann ", {"user": {"name": "ann"}}),
    ],
)
def test_parse_override(text: str, expected: dict[str, Any]) -> None:
    assert parse_override(text) == expected


def test_override_without_equals() -> None:
    with pytest.raises(ConfigError, match="expected KEY=VALUE"):
        parse_override("assistant.model.id")


@pytest.mark.parametrize("text", ["=1", "a..b=1", ".a=1", "a.=1", 'a."b=1'])
def test_override_bad_key(text: str) -> None:
    with pytest.raises(ConfigError, match="--cfg"):
        parse_override(text)


def test_override_bad_type_names_cfg_and_key() -> None:
    with pytest.raises(ConfigError) as info:
        cli_layers([], ["assistant.model.context_window=big"])
    assert info.value.message == (
        '--cfg: assistant.model.context_window must be an integer greater than 0, got "big"'
    )


def test_override_unknown_key() -> None:
    with pytest.raises(ConfigError, match="^--cfg: unknown key assistant.modle$"):
        cli_layers([], ["assistant.modle.id=a/b"])


def test_cli_layers(tmp_path: Path) -> None:
    assert cli_layers([], []) == {}
    a = write(tmp_path / "a.toml", rule(1) + "[assistant]\ninstructions = 'a'\n")
    b = write(tmp_path / "b.toml", rule(2))
    assert cli_layers([a, b], ["assistant.instructions=cli"]) == {
        "conversation": {"compaction": {"rules": [{"keep_last": 1}, {"keep_last": 2}]}},
        "assistant": {"instructions": "cli"},
    }
