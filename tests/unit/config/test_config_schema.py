"""Validation of one layer: errors name the source and the dotted key."""

from __future__ import annotations

from typing import Any

import pytest

from porcelain.config.schema import node_at, validate
from porcelain.errors import ConfigError, Exit

SRC = "/home/u/.config/jp/config.toml"


def error(data: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        validate(data, SRC)
    return info.value


def test_a_full_valid_layer_passes() -> None:
    validate(
        {
            "assistant": {
                "model": {
                    "id": "anthropic/claude-sonnet-4-5",
                    "context_window": 200_000,
                    "max_tokens": 8192,
                    "thinking_budget": 0,
                },
                "instructions": "Be brief.",
                "max_retries": 0,
            },
            "conversation": {
                "compaction": {
                    "rules": [
                        {"keep_first": 1, "keep_last": "-3", "reasoning": "strip"},
                        {
                            "tool_calls": "omit",
                            "summary": {
                                "instructions": "x",
                                "context": "y",
                                "model": {"id": "offline/x", "context_window": 10},
                            },
                        },
                    ],
                    "review": {"model": {"id": "a/b"}, "instructions": "z"},
                },
                "tools": {
                    "*": {"enable": False},
                    "ls": {
                        "command": ["ls", "-l"],
                        "description": "list",
                        "parameters": {"type": "object"},
                        "enable": True,
                        "confirm": False,
                        "timeout": 2.5,
                    },
                    "date": {"command": "date"},
                },
            },
            "user": {"name": "ann"},
        },
        SRC,
    )


def test_unknown_key_names_file_and_key_and_suggests() -> None:
    err = error({"assistant": {"modle": {"id": "a/b"}}})
    assert err.message == f"{SRC}: unknown key assistant.modle"
    assert err.hint == "did you mean assistant.model?"
    assert err.exit_code == Exit.CONFIG


def test_unknown_top_level_key_lists_known_keys() -> None:
    err = error({"zzz": 1})
    assert err.message == f"{SRC}: unknown key zzz"
    assert err.hint is not None and "assistant" in err.hint and "user" in err.hint


def test_wrong_type_message() -> None:
    err = error({"assistant": {"model": {"context_window": "big"}}})
    assert (
        err.message
        == f'{SRC}: assistant.model.context_window must be an integer greater than 0, got "big"'
    )


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (
            {"assistant": {"model": {"context_window": 0}}},
            "context_window must be an integer greater than 0, got 0",
        ),
        ({"assistant": {"model": {"context_window": True}}}, "got true"),
        (
            {"assistant": {"max_retries": -1}},
            "assistant.max_retries must be an integer >= 0, got -1",
        ),
        (
            {"assistant": {"model": {"id": "not an id"}}},
            'assistant.model.id must be a model id "provider/name" or an alias name, '
            'got "not an id"',
        ),
        ({"assistant": {"instructions": 3}}, "assistant.instructions must be a string, got 3"),
        ({"assistant": "x"}, 'assistant must be a table, got "x"'),
        ({"user": {"name": ["a"]}}, "user.name must be a string, got an array"),
        (
            {"conversation": {"tools": {"ls": {"enable": "yes"}}}},
            "conversation.tools.ls.enable must be a boolean",
        ),
        (
            {"conversation": {"tools": {"ls": {"command": []}}}},
            "conversation.tools.ls.command must be a string or a non-empty array",
        ),
        (
            {"conversation": {"tools": {"ls": {"timeout": "1s"}}}},
            "conversation.tools.ls.timeout must be a number",
        ),
        ({"conversation": {"tools": {"ls": 1}}}, "conversation.tools.ls must be a table"),
        (
            {"conversation": {"compaction": {"rules": {"keep_last": 1}}}},
            "rules must be an array of tables, got a table",
        ),
    ],
)
def test_type_errors(data: dict[str, Any], fragment: str) -> None:
    err = error(data)
    assert err.message.startswith(f"{SRC}: ")
    assert fragment in err.message


def test_rule_keys_are_checked_with_the_index() -> None:
    err = error({"conversation": {"compaction": {"rules": [{}, {"kep_last": 1}]}}})
    assert err.message == f"{SRC}: unknown key conversation.compaction.rules[1].kep_last"
    assert err.hint == "did you mean conversation.compaction.rules[1].keep_last?"


def test_rule_summary_keys_are_checked() -> None:
    err = error({"conversation": {"compaction": {"rules": [{"summary": {"prompt": "x"}}]}}})
    assert "unknown key conversation.compaction.rules[0].summary.prompt" in err.message


def test_star_tool_only_takes_defaults() -> None:
    err = error({"conversation": {"tools": {"*": {"command": "ls"}}}})
    assert err.message == f"{SRC}: unknown key conversation.tools.*.command"


def test_unknown_tool_key() -> None:
    err = error({"conversation": {"tools": {"ls": {"cmd": "ls"}}}})
    assert err.message == f"{SRC}: unknown key conversation.tools.ls.cmd"


def test_node_at() -> None:
    assert node_at(("assistant", "model", "id")) is not None
    assert node_at(("conversation", "tools", "anything", "command")) is not None
    assert node_at(("conversation", "compaction", "rules")) is not None
    assert node_at(("conversation", "compaction", "rules", "keep_last")) is None
    assert node_at(("assistant", "nope")) is None
