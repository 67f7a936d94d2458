"""Config accessors, with_layer, merge and diff_delta."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from porcelain.config import DEFAULTS, Config, diff_delta, merge, validate
from porcelain.errors import ConfigError


def test_defaults_are_valid_and_have_no_model() -> None:
    validate(DEFAULTS, "defaults")
    config = Config.defaults()
    assert config.model_id() is None
    assert config.max_tokens() == 8192
    assert config.max_retries() == 2
    assert config.context_window() is None
    assert config.thinking_budget() is None


def test_with_layer_returns_a_new_config() -> None:
    base = Config.defaults()
    top = base.with_layer({"assistant": {"model": {"id": "a/b"}}}, "delta")
    assert base.model_id() is None
    assert top.model_id() == "a/b"
    assert top.get("assistant.model.max_tokens") == 8192
    assert top.sources == ("default", "delta")


def test_with_layer_validates_with_its_name() -> None:
    with pytest.raises(ConfigError, match="^delta 3: unknown key x$"):
        Config.defaults().with_layer({"x": 1}, "delta 3")


def test_data_and_get_are_copies() -> None:
    config = Config.defaults().with_layer({"conversation": {"tools": {"a": {"command": "x"}}}}, "l")
    config.data["assistant"]["max_retries"] = 99
    config.get("conversation.tools")["a"]["command"] = "y"
    assert config.max_retries() == 2
    assert config.get("conversation.tools.a.command") == "x"


def test_get_default() -> None:
    config = Config.defaults()
    assert config.get("assistant.nope") is None
    assert config.get("assistant.model.id", "offline/x") == "offline/x"
    assert config.get("assistant.max_retries.deeper", 1) == 1


def test_review_model_falls_back_to_assistant() -> None:
    config = Config.defaults().with_layer(
        {"assistant": {"model": {"id": "a/main", "context_window": 100}}}, "l"
    )
    assert config.review_model_id() == "a/main"
    assert config.review_context_window() == 100
    other = config.with_layer(
        {"conversation": {"compaction": {"review": {"model": {"id": "a/other"}}}}}, "l2"
    )
    assert other.review_model_id() == "a/other"
    assert other.review_context_window() is None  # another model's window is unknown
    sized = other.with_layer(
        {"conversation": {"compaction": {"review": {"model": {"context_window": 7}}}}}, "l3"
    )
    assert sized.review_context_window() == 7


def test_rules_explicit_empty_means_none() -> None:
    config = Config.defaults().with_layer({"conversation": {"compaction": {"rules": []}}}, "l")
    assert config.rules() == []


def test_tools_fill_defaults_from_star() -> None:
    config = Config.defaults().with_layer(
        {
            "conversation": {
                "tools": {
                    "*": {"enable": False},
                    "ls": {"command": "ls"},
                    "date": {"command": "date", "enable": True, "confirm": False},
                }
            }
        },
        "l",
    )
    assert config.tools() == {
        "ls": {"command": "ls", "enable": False, "confirm": True},
        "date": {"command": "date", "enable": True, "confirm": False},
    }
    assert Config.defaults().tools() == {}


def test_tools_merge_per_key_across_layers() -> None:
    config = (
        Config.defaults()
        .with_layer({"conversation": {"tools": {"ls": {"command": "ls", "timeout": 5}}}}, "a")
        .with_layer({"conversation": {"tools": {"ls": {"enable": False}}}}, "b")
    )
    assert config.tools()["ls"] == {"command": "ls", "timeout": 5, "enable": False, "confirm": True}


# -- merge / diff_delta ------------------------------------------------------


def test_merge_tables_recursive_scalars_replace_arrays_replace() -> None:
    base = {"a": {"b": 1, "c": [1, 2]}, "d": 1}
    layer = {"a": {"c": [3]}, "d": {"e": 1}}
    assert merge(base, layer) == {"a": {"b": 1, "c": [3]}, "d": {"e": 1}}
    assert base == {"a": {"b": 1, "c": [1, 2]}, "d": 1}


def test_diff_delta() -> None:
    current = {"assistant": {"model": {"id": "a/b", "context_window": 10}, "max_retries": 2}}
    wanted = {"assistant": {"model": {"id": "a/b", "context_window": 20}, "instructions": "x"}}
    assert diff_delta(current, wanted) == {
        "assistant": {"model": {"context_window": 20}, "instructions": "x"}
    }
    assert diff_delta(current, {"assistant": {"model": {"id": "a/b"}}}) == {}
    assert diff_delta(current, {}) == {}


def test_diff_delta_tells_types_apart() -> None:
    assert diff_delta({"a": 1}, {"a": True}) == {"a": True}
    assert diff_delta({"a": 1}, {"a": 1.0}) == {"a": 1.0}


def test_diff_delta_rules() -> None:
    r1, r2 = {"keep_last": 1}, {"keep_last": 2}
    rules = ("conversation", "compaction", "rules")

    def cfg(*items: dict[str, Any]) -> dict[str, Any]:
        return {rules[0]: {rules[1]: {rules[2]: list(items)}}}

    assert diff_delta(cfg(r1, r2), cfg(r2)) == {}
    assert diff_delta(cfg(r1, r2), cfg(r1, r2)) == {}
    assert diff_delta(cfg(r2), cfg(r1)) == cfg(r1)
    assert diff_delta({}, cfg(r1)) == cfg(r1)
    assert diff_delta({}, cfg()) == cfg()  # "no rules" is a change from "default rule"
    assert diff_delta(cfg(r1), cfg()) == {}


_scalars = st.one_of(st.integers(-3, 3), st.booleans(), st.sampled_from(["x", "y"]))
_keys = st.sampled_from(["a", "b", "c"])
_tables = st.recursive(
    _scalars,
    lambda inner: st.dictionaries(_keys, inner, max_size=3),
    max_leaves=8,
)
_docs = st.dictionaries(_keys, _tables, max_size=3)


def _pruned(value: Any) -> Any:
    """Empty tables change nothing a key lookup can see."""
    if not isinstance(value, dict):
        return value
    out = {k: _pruned(v) for k, v in value.items()}
    return {k: v for k, v in out.items() if v != {}}


@given(_docs, _docs)
def test_diff_delta_has_the_same_effect_as_wanted(
    current: dict[str, Any], wanted: dict[str, Any]
) -> None:
    delta = diff_delta(current, wanted)
    assert _pruned(merge(current, delta)) == _pruned(merge(current, wanted))
    assert diff_delta(merge(current, wanted), wanted) == {}


def _aliased(**aliases: str) -> Config:
    return Config.defaults().with_layer({"assistant": {"model": {"aliases": aliases}}}, "file")


def test_an_alias_may_name_another_alias() -> None:
    config = _aliased(fast="local", local="anthropic/claude-x")
    assert config.resolve_model("fast") == "anthropic/claude-x"
    assert config.resolve_model("local") == "anthropic/claude-x"
    assert config.resolve_model("openai/gpt") == "openai/gpt"


def test_an_alias_loop_is_an_error_naming_the_loop() -> None:
    config = _aliased(a="b", b="c", c="a")
    with pytest.raises(ConfigError, match="the model alias 'a' loops: 'a' -> 'b' -> 'c' -> 'a'"):
        config.resolve_model("a")


def test_a_bad_alias_fails_only_where_it_is_used() -> None:
    config = _aliased(good="anthropic/claude-x", broken="no-such", odd="not an id!")
    assert config.resolve_model("good") == "anthropic/claude-x"  # the others do not matter
    for name, value in (("broken", "no-such"), ("odd", "not an id!")):
        with pytest.raises(ConfigError, match=f"the model alias '{name}'.*'{value}'"):
            config.resolve_model(name)
    with pytest.raises(ConfigError, match="'nope' is not a model id"):
        config.resolve_model("nope")
