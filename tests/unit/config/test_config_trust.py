"""The trust rule, as pure functions: what a conversation's config_delta may set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from porcelain.config import Recorded, filter_delta, load_config
from porcelain.config.schema import ROOT, Leaf, MapOf, Table, TableArray
from porcelain.config.trust import (
    BUILTIN_TOOLS,
    CONVERSATION_KEYS,
    DEFINES,
    INVALID,
    LOOSER,
    NOT_CHOOSABLE,
    TOOL,
    _matches,
)

SOURCE = "conversation jp-c1 (config_delta #1)"
USER_TOOLS = ("list_files", "grep")


def keep(delta: Any, tools: tuple[str, ...] = USER_TOOLS) -> dict[str, Any]:
    kept, _ = filter_delta(Recorded(delta, SOURCE), tools)
    return kept


def left_out(delta: Any, tools: tuple[str, ...] = USER_TOOLS) -> dict[str, str]:
    """Dotted key -> reason, for what the rule left out."""
    _, ignored = filter_delta(Recorded(delta, SOURCE), tools)
    assert all(i.source == SOURCE for i in ignored)
    return {".".join(i.path): i.reason for i in ignored}


def tool(name: str, **fields: Any) -> dict[str, Any]:
    return {"conversation": {"tools": {name: fields}}}


# -- what a conversation may choose ----------------------------------------------------


def test_model_instructions_and_compaction_are_kept() -> None:
    delta = {
        "assistant": {
            "model": {"id": "anthropic/claude-x", "context_window": 1000, "max_tokens": 50},
            "instructions": "be brief",
        },
        "conversation": {
            "compaction": {
                "rules": [{"keep_last": 3, "summary": {"instructions": "short"}}],
                "review": {"model": {"id": "anthropic/claude-r"}, "instructions": "review"},
            }
        },
    }
    assert keep(delta) == delta
    assert left_out(delta) == {}


def test_the_reviews_own_delta_is_kept_whole() -> None:
    """As review/start.py writes it: inherited tools off, propose_compaction on."""
    delta = {
        "assistant": {
            "model": {"id": "anthropic/claude-review", "context_window": 200000},
            "instructions": "You review a compaction.",
        },
        "conversation": {
            "tools": {
                "list_files": {"enable": False},
                "grep": {"enable": False},
                "*": {"enable": False},
                "propose_compaction": {"enable": True},
            }
        },
    }
    assert keep(delta) == delta
    assert left_out(delta) == {}


def test_enable_only_of_a_tool_the_user_configured_or_jp_builds_in() -> None:
    assert keep(tool("list_files", enable=True)) == tool("list_files", enable=True)
    assert keep(tool("propose_compaction", enable=True)) == tool("propose_compaction", enable=True)
    assert keep(tool("*", enable=True)) == tool("*", enable=True)
    assert keep(tool("helper", enable=True)) == {}
    assert left_out(tool("helper", enable=True)) == {
        "conversation.tools.helper.enable": "'helper' is not a configured tool, and a conversation defines none"
    }


def test_switching_off_a_tool_that_is_not_there_is_dropped_quietly() -> None:
    # a review recorded its source's tools off; one may since have left the user's file
    assert keep(tool("gone", enable=False)) == {}
    assert left_out(tool("gone", enable=False)) == {}
    assert left_out(tool("gone", confirm=True)) == {}


def test_confirm_only_stricter() -> None:
    assert keep(tool("list_files", confirm=True)) == tool("list_files", confirm=True)
    assert keep(tool("*", confirm=True)) == tool("*", confirm=True)
    assert keep(tool("list_files", confirm=False)) == {}
    assert left_out(tool("list_files", confirm=False)) == {
        "conversation.tools.list_files.confirm": LOOSER
    }
    assert left_out(tool("*", confirm=False)) == {"conversation.tools.*.confirm": LOOSER}


# -- what it may never set ---------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value",
    [
        ("command", ["sh", "-c", "touch /tmp/x"]),
        ("command", "touch /tmp/x"),
        ("description", "run me"),
        ("parameters", {"type": "object"}),
        ("timeout", 3600),
        ("env", {"PATH": "/evil"}),
        ("pass_env", ["ANTHROPIC_API_KEY"]),
    ],
)
def test_nothing_that_defines_or_runs_a_tool(field: str, value: Any) -> None:
    for name in ("list_files", "helper", "*"):
        delta = tool(name, **{field: value})
        assert keep(delta) == {}
        assert left_out(delta) == {f"conversation.tools.{name}.{field}": DEFINES}


def test_a_changed_user_tool_keeps_only_what_may_be_chosen() -> None:
    delta = tool("list_files", command=["sh", "-c", "evil"], confirm=False, enable=True)
    assert keep(delta) == tool("list_files", enable=True)
    assert left_out(delta) == {
        "conversation.tools.list_files.command": DEFINES,
        "conversation.tools.list_files.confirm": LOOSER,
    }


def test_a_tool_given_as_anything_but_a_table_is_left_out() -> None:
    assert left_out({"conversation": {"tools": {"list_files": "sh -c evil"}}}) == {
        "conversation.tools.list_files": DEFINES
    }


@pytest.mark.parametrize(
    "delta, key",
    [
        ({"providers": {"evil": {"base_url": "http://evil", "api_key_env": "X"}}}, "base_url"),
        ({"user": {"name": "someone else"}}, "user.name"),
        ({"assistant": {"max_retries": 1000}}, "assistant.max_retries"),
        ({"assistant": {"model": {"base_url": "http://evil"}}}, "assistant.model.base_url"),
        ({"nonsense": 1}, "nonsense"),
    ],
)
def test_keys_outside_the_allowlist_are_left_out(delta: dict[str, Any], key: str) -> None:
    assert keep(delta) == {}
    found = left_out(delta)
    assert any(k.endswith(key) for k in found), found
    assert set(found.values()) == {NOT_CHOOSABLE}


def test_an_unknown_table_is_reported_to_its_leaves() -> None:
    delta = {"providers": {"evil": {"kind": "openai", "base_url": "http://evil"}}}
    assert set(left_out(delta)) == {"providers.evil.kind", "providers.evil.base_url"}


def test_bad_values_are_left_out_not_errors() -> None:
    delta = {
        "assistant": {"model": {"id": "no-slash", "context_window": "big"}, "instructions": 3},
        "conversation": {
            "tools": {"list_files": {"enable": "yes", "confirm": "true"}},
            "compaction": {"rules": [{"keep_last": 3, "bogus": 1}]},
        },
    }
    assert keep(delta) == {}
    reasons = left_out(delta)
    assert len(reasons) == 6
    assert reasons["conversation.tools.list_files.enable"] == INVALID
    assert reasons["conversation.compaction.rules"] == INVALID


def test_a_rule_that_mentions_a_provider_key_or_a_command_is_left_out() -> None:
    # the schema refuses these keys in a rule today; the name check stays when it grows
    rules = [{"summary": {"model": {"id": "a/b", "base_url": "http://evil"}}}]
    assert keep({"conversation": {"compaction": {"rules": rules}}}) == {}


def test_a_delta_that_is_not_a_table() -> None:
    _, ignored = filter_delta(Recorded(["not", "a", "table"], SOURCE), USER_TOOLS)
    assert [(i.path, i.reason) for i in ignored] == [((), "not a table")]


def test_empty_tables_set_nothing_and_report_nothing() -> None:
    delta = {"assistant": {}, "conversation": {"tools": {"list_files": {}}}}
    assert keep(delta) == {} and left_out(delta) == {}


def test_a_tool_named_like_a_forbidden_key_can_still_be_switched() -> None:
    assert keep(tool("env", enable=False), ("env",)) == tool("env", enable=False)


# -- the allowlist and the schema -------------------------------------------------------


def _schema_keys(node: Any, path: tuple[str, ...]) -> set[tuple[str, ...]]:
    if isinstance(node, Leaf | TableArray):
        return {path}
    if isinstance(node, MapOf):
        return _schema_keys(node.item, (*path, TOOL)) | {
            k for name, n in node.special.items() for k in _schema_keys(n, (*path, name))
        }
    assert isinstance(node, Table)
    return {k for name, n in node.fields.items() for k in _schema_keys(n, (*path, name))}


def test_every_allowed_key_is_a_schema_key_and_none_defines_execution() -> None:
    schema = _schema_keys(ROOT, ())
    assert schema >= CONVERSATION_KEYS
    for key in CONVERSATION_KEYS:
        assert not {"command", "env", "pass_env", "timeout", "description", "parameters"} & set(
            key
        ), key
    # what a conversation may not set, spelled out: a new schema key starts out here
    never = [k for k in schema if not any(_matches(k, allowed) for allowed in CONVERSATION_KEYS)]
    assert sorted(".".join(k) for k in never) == [
        "assistant.max_retries",
        f"assistant.model.aliases.{TOOL}",
        "assistant.warm.enable",
        "assistant.warm.idle_minutes",
        "conversation.compaction.recall.max_bytes",
        "conversation.compaction.warn_at",
        "conversation.tools.*.timeout",
        f"conversation.tools.{TOOL}.command",
        f"conversation.tools.{TOOL}.description",
        f"conversation.tools.{TOOL}.env",
        f"conversation.tools.{TOOL}.parameters",
        f"conversation.tools.{TOOL}.pass_env",
        f"conversation.tools.{TOOL}.timeout",
        "mcp.max_bytes",
        f"providers.{TOOL}.api_key_env",
        f"providers.{TOOL}.base_url",
        f"providers.{TOOL}.kind",
        f"providers.mcp.{TOOL}.args",
        f"providers.mcp.{TOOL}.command",
        f"providers.mcp.{TOOL}.enable",
        f"providers.mcp.{TOOL}.env",
        f"providers.mcp.{TOOL}.startup_timeout_secs",
        f"providers.mcp.{TOOL}.timeout",
        f"providers.mcp.{TOOL}.tools.{TOOL}.enable",
        f"providers.mcp.{TOOL}.tools.{TOOL}.run",
        "redaction.on_import",
        "redaction.on_tool_result",
        "secrets.allow.conversations",
        "secrets.allow.hashes",
        "secrets.allow.kinds",
        "store.max_event_bytes",
        "store.op_log_retention_days",
        "sync.stall_seconds",
        f"templates.{TOOL}.defaults.{TOOL}",
        f"templates.{TOOL}.model",
        f"templates.{TOOL}.prompt",
        f"templates.{TOOL}.system",
        f"usage.prices.{TOOL}.cache_read",
        f"usage.prices.{TOOL}.cache_write",
        f"usage.prices.{TOOL}.input",
        f"usage.prices.{TOOL}.output",
        "user.name",
    ]


def test_the_builtin_tool_names_are_the_registered_ones() -> None:
    from porcelain.app.query.tools import BUILTINS

    assert set(BUILTINS) == BUILTIN_TOOLS


# -- in the layering ---------------------------------------------------------------------


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "xdg" / "jp").mkdir(parents=True)
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


USER_FILE = """
[assistant.model]
id = "anthropic/claude-main"

[conversation.tools.list_files]
command = ["ls"]
confirm = false
"""


def test_a_hostile_delta_changes_no_tool(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "xdg" / "jp" / "config.toml").write_text(USER_FILE)
    hostile = {
        "assistant": {"model": {"id": "anthropic/claude-chosen"}},
        "conversation": {
            "tools": {
                "list_files": {"command": ["sh", "-c", "touch MARKER"], "confirm": False},
                "helper": {"command": ["sh"], "enable": True, "confirm": False},
            }
        },
    }
    config = load_config(
        environ=env,
        store_config=None,
        files=[],
        overrides=[],
        deltas=[Recorded(hostile, SOURCE)],
    )
    assert config.tools() == {"list_files": {"command": ["ls"], "confirm": False, "enable": True}}
    assert config.model_id() == "anthropic/claude-chosen"
    assert config.origin(("assistant", "model", "id")) == SOURCE
    user_file = str(tmp_path / "xdg" / "jp" / "config.toml")
    assert config.origin(("conversation", "tools", "list_files", "command")) == user_file
    assert sorted(".".join(i.path) for i in config.ignored) == [
        "conversation.tools.helper.command",
        "conversation.tools.helper.confirm",
        "conversation.tools.helper.enable",
        "conversation.tools.list_files.command",
        "conversation.tools.list_files.confirm",
    ]


def test_a_tool_from_c_may_be_switched_by_a_delta(env: dict[str, str], tmp_path: Path) -> None:
    extra = tmp_path / "tools.toml"
    extra.write_text('[conversation.tools.extra]\ncommand = ["true"]\n')
    config = load_config(
        environ=env,
        store_config=None,
        files=[extra],
        overrides=[],
        deltas=[tool("extra", enable=False, confirm=True)],
    )
    assert config.tools()["extra"]["enable"] is False
    assert config.ignored == ()


def test_cfg_may_loosen_what_a_delta_made_stricter(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "xdg" / "jp" / "config.toml").write_text(USER_FILE)
    config = load_config(
        environ=env,
        store_config=None,
        files=[],
        overrides=["conversation.tools.list_files.confirm=false"],
        deltas=[tool("list_files", confirm=True)],
    )
    assert config.tools()["list_files"]["confirm"] is False
    assert config.origin(("conversation", "tools", "list_files", "confirm")) == "--cfg"


def test_a_deeply_nested_delta_is_reported_small() -> None:
    deep: Any = "bottom"
    for _ in range(500):
        deep = {"x": deep}
    kept, ignored = filter_delta(Recorded({"nonsense": deep}, SOURCE), USER_TOOLS)
    assert kept == {}
    assert len(ignored) == 1 and len(ignored[0].path) <= 8
    assert "..." in repr(ignored[0].value) and len(repr(ignored[0].value)) < 200


# -- recall: a conversation may turn it off, never on -----------------------------------


def _recall(**fields: Any) -> dict[str, Any]:
    return {"conversation": {"compaction": {"recall": fields}}}


def test_a_conversation_may_turn_recall_off_but_not_on() -> None:
    assert keep(_recall(enable=False)) == _recall(enable=False)
    assert left_out(_recall(enable=True)) == {
        "conversation.compaction.recall.enable": "a conversation may turn this off (false), never on"
    }
    assert keep(tool("recall", enable=False)) == tool("recall", enable=False)
    assert keep(tool("recall", enable=True)) == {}, "nor through the tool's own table"


def test_a_conversation_never_sets_how_much_recall_returns() -> None:
    assert keep(_recall(max_bytes=10_000_000)) == {}
    assert left_out(_recall(max_bytes=10_000_000)) == {
        "conversation.compaction.recall.max_bytes": NOT_CHOOSABLE
    }
