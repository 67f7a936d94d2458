"""The known configuration keys, their types, and validation of one layer.

Every layer (a file, the ``--cfg`` overrides, a conversation's ``config_delta``)
is validated on its own, so an error names where the bad key came from:
``/home/u/.config/jp/config.toml: unknown key assistant.modle``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final, NamedTuple

from porcelain.errors import ConfigError


class Leaf(NamedTuple):
    """A value: ``expect`` completes "KEY must be ..." in error messages."""

    expect: str
    check: Callable[[Any], bool]


class Table(NamedTuple):
    """A table with a fixed set of keys."""

    fields: Mapping[str, Node]


class MapOf(NamedTuple):
    """A table whose keys are names chosen by the user (tools)."""

    item: Node
    special: Mapping[str, Node] = {}


class TableArray(NamedTuple):
    """An array of tables (``[[conversation.compaction.rules]]``)."""

    item: Table


Node = Leaf | Table | MapOf | TableArray


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


_MODEL_ID_RE = r"[^/\s]+/\S.*"  # compiled when first used (re's cache), as _ENV_NAME_RE
ALIAS_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
PROVIDER_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]*")
PROVIDER_KINDS = ("openai", "anthropic")

STRING = Leaf("a string", lambda v: isinstance(v, str))
BOOL = Leaf("a boolean (true or false)", lambda v: isinstance(v, bool))
INT = Leaf("an integer", _is_int)
POSITIVE_INT = Leaf("an integer greater than 0", lambda v: _is_int(v) and v > 0)
NON_NEGATIVE_INT = Leaf("an integer >= 0", lambda v: _is_int(v) and v >= 0)
POSITIVE_NUMBER = Leaf("a number greater than 0", lambda v: _is_number(v) and v > 0)
INT_OR_STRING = Leaf("an integer or a string", lambda v: _is_int(v) or isinstance(v, str))
SHARE = Leaf("a number from 0 to 1", lambda v: _is_number(v) and 0 <= v <= 1)
STRINGS = Leaf(
    "an array of strings", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)
)
ANY_TABLE = Leaf("a table", lambda v: isinstance(v, dict))
MODEL_ID = Leaf(
    'a model id "provider/name"',
    lambda v: isinstance(v, str) and re.fullmatch(_MODEL_ID_RE, v) is not None,
)


def is_model_id(value: Any) -> bool:
    """``provider/name``: the form a model id has once its alias is resolved."""
    return MODEL_ID.check(value)


# A model id or the name of an alias (``assistant.model.aliases``), resolved when read.
MODEL_REF = Leaf(
    'a model id "provider/name" or an alias name',
    lambda v: is_model_id(v) or (isinstance(v, str) and ALIAS_RE.fullmatch(v) is not None),
)
COMMAND = Leaf(
    "a string or a non-empty array of strings",
    lambda v: (
        isinstance(v, str)
        or (isinstance(v, list) and bool(v) and all(isinstance(x, str) for x in v))
    ),
)

_ENV_NAME_RE = r"[A-Za-z_][A-Za-z0-9_]*"


def _env_name(v: Any) -> bool:
    return isinstance(v, str) and re.fullmatch(_ENV_NAME_RE, v) is not None


ENV_NAMES = Leaf(
    "an array of environment variable names",
    lambda v: isinstance(v, list) and all(_env_name(x) for x in v),
)
ENV_TABLE = Leaf(
    "a table of environment variable names to strings",
    lambda v: (
        isinstance(v, dict)
        and all(_env_name(k) and isinstance(x, str) and "\0" not in x for k, x in v.items())
    ),
)

_MODEL_FIELDS: dict[str, Node] = {
    "id": MODEL_REF,
    "context_window": POSITIVE_INT,
    "max_tokens": POSITIVE_INT,
    "thinking_budget": NON_NEGATIVE_INT,
}
MODEL = Table(_MODEL_FIELDS)
# ``assistant.model`` also holds the aliases: ``fast = "ollama/qwen3"``, or the name of
# another alias.  What an alias stands for is checked when it is used (resolve_model),
# so one bad alias fails only the commands that use it.
ASSISTANT_MODEL = Table({**_MODEL_FIELDS, "aliases": MapOf(STRING)})

BASE_URL = Leaf(
    'an http:// or https:// URL',
    lambda v: isinstance(v, str) and re.fullmatch(r"https?://[^\s/]+(/\S*)?", v) is not None,
)

RULE = Table(
    {
        "keep_first": INT_OR_STRING,
        "keep_last": INT_OR_STRING,
        "reasoning": STRING,
        "tool_calls": STRING,
        "summary": Table({"instructions": STRING, "context": STRING, "model": MODEL}),
    }
)

TOOL = Table(
    {
        "command": COMMAND,
        "description": STRING,
        "parameters": ANY_TABLE,
        "enable": BOOL,
        "confirm": BOOL,
        "timeout": POSITIVE_NUMBER,
        "env": ENV_TABLE,
        "pass_env": ENV_NAMES,
    }
)

# ``[providers.NAME]``: an endpoint and where its key is read from (user files only).
PROVIDER = Table(
    {
        "kind": Leaf(
            " or ".join(f'"{k}"' for k in PROVIDER_KINDS), lambda v: v in PROVIDER_KINDS
        ),
        "base_url": BASE_URL,
        "api_key_env": Leaf("an environment variable name", lambda v: _env_name(v)),
    }
)

# ``[providers.mcp.NAME]``: an MCP server jp starts over stdio (user files only;
# porcelain/app/query/mcp_tools.py).  ``env`` names the variables passed through.
MCP: Final = "mcp"  # ``providers.mcp`` holds MCP servers; it is not a model provider
MCP_SERVER_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
MCP_RUN_MODES = ("ask", "unattended", "skip")
MCP_TOOL = Table(
    {
        "enable": BOOL,
        "run": Leaf(" or ".join(f'"{m}"' for m in MCP_RUN_MODES), lambda v: v in MCP_RUN_MODES),
    }
)
MCP_SERVER = Table(
    {
        "command": STRING,
        "args": STRINGS,
        "env": ENV_NAMES,
        "enable": BOOL,
        "startup_timeout_secs": POSITIVE_NUMBER,
        "timeout": POSITIVE_NUMBER,
        "tools": MapOf(MCP_TOOL),
    }
)

# ``[usage.prices."MODEL"]``: US dollars per million tokens (the user's file only: docs/usage.md)
PRICE_VALUE = Leaf(
    "a number of US dollars per million tokens, from 0 to 1000000",
    lambda v: _is_number(v) and 0 <= v <= 1_000_000,
)
PRICE = Table(
    {
        "input": PRICE_VALUE,
        "output": PRICE_VALUE,
        "cache_write": PRICE_VALUE,
        "cache_read": PRICE_VALUE,
    }
)

# ``assistant.warm``: the warm model process (docs/models.md).
WARM = Table({"enable": BOOL, "idle_minutes": POSITIVE_NUMBER})

# ``conversation.tools."*"``: defaults for every tool.
TOOL_DEFAULTS = Table({"enable": BOOL, "confirm": BOOL, "timeout": POSITIVE_NUMBER})

# ``templates.NAME`` (`jp q -t NAME`, docs/everyday.md, Templates): the user's files only
TEMPLATE = Table(
    {"prompt": STRING, "system": STRING, "model": MODEL_REF, "defaults": MapOf(STRING)}
)

ROOT = Table(
    {
        "assistant": Table(
            {
                "model": ASSISTANT_MODEL,
                "instructions": STRING,
                "max_retries": NON_NEGATIVE_INT,
                "warm": WARM,
            }
        ),
        # model providers (read from the user's and the store's files only)
        "providers": MapOf(PROVIDER, special={MCP: MapOf(MCP_SERVER)}),
        "conversation": Table(
            {
                "compaction": Table(
                    {
                        "rules": TableArray(RULE),
                        "review": Table({"model": MODEL, "instructions": STRING}),
                        "warn_at": SHARE,
                        # the recall tool (docs/tools.md); a conversation may only turn it off
                        "recall": Table({"enable": BOOL, "max_bytes": POSITIVE_INT}),
                    }
                ),
                "tools": MapOf(TOOL, special={"*": TOOL_DEFAULTS}),
            }
        ),
        "user": Table({"name": STRING}),
        # `jp mcp serve` (docs/mcp.md): the bytes of one answer; never a conversation's
        "mcp": Table({"max_bytes": POSITIVE_INT}),
        # what tokens cost, for `jp usage` (read from the user's file only)
        "usage": Table({"prices": MapOf(PRICE)}),
        # what the store accepts and keeps (read from the user's and the store's files only)
        "store": Table({"max_event_bytes": POSITIVE_INT, "op_log_retention_days": POSITIVE_INT}),
        # what the secret scan lets through (docs/security.md); never a conversation's key
        "secrets": Table(
            {"allow": Table({"kinds": STRINGS, "hashes": STRINGS, "conversations": STRINGS})}
        ),
        # a tool's result, an import's records, redacted before they are stored (user files only)
        "redaction": Table({"on_tool_result": BOOL, "on_import": BOOL}),
        # how long a remote may say nothing before a sync gives up (docs/sync.md)
        "sync": Table({"stall_seconds": POSITIVE_INT}),
        # prompts kept by name for `jp q -t NAME` (docs/everyday.md, Templates); never a conversation's
        "templates": MapOf(TEMPLATE),
    }
)


def dotted(path: tuple[str, ...]) -> str:
    return ".".join(path)


def render(value: Any) -> str:
    """A value as a user would write it in TOML, shortened for a message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 60 else text[:56] + '..."'
    return str(value)


def node_at(path: tuple[str, ...]) -> Node | None:
    """The schema for a dotted key, or None when the key is not known."""
    node: Node = ROOT
    for part in path:
        if isinstance(node, Table):
            child = node.fields.get(part)
        elif isinstance(node, MapOf):
            child = node.special.get(part, node.item)
        else:
            return None
        if child is None:
            return None
        node = child
    return node


def leaves(data: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Each value of ``data`` that the schema treats as one (a table of tables is walked)."""
    for key, value in data.items():
        here = (*path, key)
        if isinstance(value, Mapping) and isinstance(node_at(here), Table | MapOf):
            yield from leaves(value, here)
        else:
            yield here, value


def validate(data: Mapping[str, Any], source: str) -> None:
    """Raise ConfigError naming ``source`` and the key for the first problem."""
    _check(ROOT, data, (), source)


def _check(node: Node, value: Any, path: tuple[str, ...], source: str) -> None:
    if isinstance(node, Leaf):
        if not node.check(value):
            raise _type_error(source, path, node.expect, value)
    elif isinstance(node, TableArray):
        if not isinstance(value, list):
            raise _type_error(source, path, "an array of tables", value)
        for i, item in enumerate(value):
            _check(node.item, item, (*path[:-1], f"{path[-1]}[{i}]"), source)
    else:
        if not isinstance(value, Mapping):
            raise _type_error(source, path, "a table", value)
        for key, child_value in value.items():
            child_path = (*path, key)
            if isinstance(node, MapOf):
                _check(node.special.get(key, node.item), child_value, child_path, source)
                continue
            child = node.fields.get(key)
            if child is None:
                raise unknown_key(source, child_path)
            _check(child, child_value, child_path, source)


def _type_error(source: str, path: tuple[str, ...], expect: str, value: Any) -> ConfigError:
    return ConfigError(f"{source}: {dotted(path)} must be {expect}, got {render(value)}")


def unknown_key(source: str, path: tuple[str, ...]) -> ConfigError:
    """The error for a key the schema does not know, with a suggestion."""
    parent = node_at(tuple(p.split("[", 1)[0] for p in path[:-1]))
    if isinstance(parent, TableArray):
        parent = parent.item
    known = sorted(parent.fields) if isinstance(parent, Table) else []
    import difflib  # lazy: start-up; only a mistyped key is matched, every command loads this

    close = difflib.get_close_matches(path[-1], known, n=1)
    prefix = dotted(path[:-1]) + "." if len(path) > 1 else ""
    if close:
        hint = f"did you mean {prefix}{close[0]}?"
    elif known:
        where = f"under {dotted(path[:-1])}" if len(path) > 1 else "at the top level"
        hint = f"known keys {where}: {', '.join(known)}"
    else:
        hint = None
    return ConfigError(f"{source}: unknown key {dotted(path)}", hint)
