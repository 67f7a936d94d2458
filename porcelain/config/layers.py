"""Reading the layers and stacking them into a ``Config``.

Lowest first: built-in defaults, the user's config file, the store's config
file, the conversation's ``config_delta`` events (what the trust rule lets a
conversation set), ``-c PATH`` files, then ``--cfg KEY=VALUE``.  The
environment is only read through ``environ``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from porcelain.config.merge import RULES_PATH, ends_with, lookup, merge, nest, split_key
from porcelain.config.model import Config
from porcelain.config.schema import MCP, Leaf, TableArray, node_at, validate
from porcelain.config.toolenv import check_tool_env
from porcelain.config.trust import (
    TOOLS_PATH,
    Ignored,
    Recorded,
    enabled_providers,
    filter_delta,
    removals,
    turned_off,
    without_removals,
)
from porcelain.domain.defaults import default_model
from porcelain.domain.places import user_config_path as user_config_path
from porcelain.errors import ConfigError

OVERRIDE_SOURCE = "--cfg"


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """Parse TOML; a syntax error names ``source`` and TOML's line and column."""
    import tomllib  # lazy: a command with no config file to read parses no TOML (start-up)

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML: {exc}", "fix the syntax at that line")


def read_text(path: Path, *, missing_ok: bool) -> str | None:
    """The file's text, None when it is missing and ``missing_ok``."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if missing_ok:
            return None
        raise ConfigError(f"{path}: no such config file")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}")


def read_layer(path: Path, *, missing_ok: bool) -> dict[str, Any]:
    """A config file as a validated layer; a missing file is ``{}`` if allowed."""
    text = read_text(path, missing_ok=missing_ok)
    if text is None:
        return {}
    data = parse_toml(text, str(path))
    validate(data, str(path))
    return data


def parse_value(raw: str, path: tuple[str, ...]) -> Any:
    """A TOML value when ``raw`` parses as one, else the string itself.

    Where the key takes a string (``user.name=123``) and the parsed value is
    not acceptable, the raw text is used; a single table given for the rules
    array becomes a one-rule array.
    """
    import tomllib  # lazy: as in parse_toml

    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw
    node = node_at(path)
    if isinstance(node, Leaf) and not node.check(value) and node.check(raw):
        return raw
    if isinstance(node, TableArray) and isinstance(value, dict):
        return [value]
    return value


def parse_override(text: str) -> dict[str, Any]:
    """``KEY=VALUE`` -> a nested one-key layer (not yet validated)."""
    key, sep, raw = text.partition("=")
    if not sep:
        raise ConfigError(
            f"{OVERRIDE_SOURCE}: expected KEY=VALUE, got {text!r}",
            "for example: --cfg assistant.model.id=anthropic/claude-sonnet-4-5",
        )
    path = split_key(key, OVERRIDE_SOURCE)
    return nest(path, parse_value(raw.strip(), path))


def cli_layers(files: Sequence[Path], overrides: Sequence[str]) -> dict[str, Any]:
    """The ``-c`` files then the ``--cfg`` overrides, merged; ``{}`` when none."""
    return cli_merged(named_cli_layers(files, overrides))


def named_cli_layers(
    files: Sequence[Path], overrides: Sequence[str]
) -> list[tuple[dict[str, Any], str]]:
    """Each ``-c`` file (named ``-c PATH``) then each ``--cfg``, validated."""
    out = [(read_layer(Path(path), missing_ok=False), f"-c {path}") for path in files]
    for text in overrides:
        layer = parse_override(text)
        validate(layer, OVERRIDE_SOURCE)
        out.append((layer, OVERRIDE_SOURCE))
    return out


def load_config(
    *,
    environ: Mapping[str, str],
    store_config: Path | None,
    files: Sequence[Path],
    overrides: Sequence[str],
    deltas: Sequence[Mapping[str, Any] | Recorded] = (),
) -> Config:
    """Every layer, lowest first, validated and merged.

    The conversation's deltas go through the trust rule (``trust.py``): only
    what a conversation may set is merged, the rest is in ``ignored``.  A
    plain mapping in ``deltas`` is checked as a delta from elsewhere (its model
    ids only among the providers the user's layers enable); a ``Recorded``
    marked ``own`` is the user's own.  When
    a conversation already recorded the command line's compaction rules
    (from the same ``-c`` file), they are not appended twice.
    """
    config = Config.defaults()
    user_path = user_config_path(environ)
    config = config.with_layer(read_layer(user_path, missing_ok=True), str(user_path))
    if store_config is not None:
        layer = read_layer(store_config, missing_ok=True)
        config = config.with_layer(layer, str(store_config))
    cli = named_cli_layers(files, overrides)
    tools = set(config.tools()) | {name for layer, _ in cli for name in _tool_names(layer)}
    own = merge(config.data, cli_merged(cli))
    servers = lookup(own, ("providers", MCP))  # a conversation may choose among their tools
    tools |= {f"mcp.{name}.*" for name in servers} if isinstance(servers, dict) else set()
    enabled = enabled_providers(own, default_model(bool(environ.get("ANTHROPIC_API_KEY"))))
    off = turned_off(own)
    ignored: list[Ignored] = []
    below = config  # what a removal marker (a null) goes back to
    for i, delta in enumerate(deltas, start=1):
        recorded = delta if isinstance(delta, Recorded) else Recorded(delta, _delta_name(i))
        kept, left = filter_delta(recorded, tools, enabled, off)
        ignored += left
        for path in removals(kept):
            config = config.restored(path, below)
        config = config.with_layer(without_removals(kept), recorded.source)
    for layer, name in _without_recorded_rules(config, cli):
        config = config.with_layer(layer, name)
    check_tool_env(config.data, config.origin)
    return config.with_ignored(tuple(ignored))


def _delta_name(i: int) -> str:
    return f"conversation config_delta #{i}"


def _tool_names(layer: Mapping[str, Any]) -> list[str]:
    tools = lookup(layer, TOOLS_PATH)
    return [name for name in tools if name != "*"] if isinstance(tools, dict) else []


def _without_recorded_rules(
    config: Config, cli: list[tuple[dict[str, Any], str]]
) -> list[tuple[dict[str, Any], str]]:
    """``cli``, minus its rules when the configuration already ends with them."""
    wanted = lookup(cli_merged(cli), RULES_PATH)
    current = lookup(config.data, RULES_PATH)
    if not (isinstance(wanted, list) and wanted and isinstance(current, list)):
        return cli
    if not ends_with(current, wanted):
        return cli
    return [(_drop(layer, RULES_PATH), name) for layer, name in cli]


def cli_merged(cli: Sequence[tuple[Mapping[str, Any], str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for layer, _ in cli:
        out = merge(out, layer)
    return out


def _drop(layer: Mapping[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    out = copy.deepcopy(dict(layer))
    node: Any = out
    for part in path[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(path[-1], None)
    return out
