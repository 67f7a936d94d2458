"""Reading and editing one config file, and rendering a ``Config`` as TOML.

Edits go through tomlkit so the user's comments and layout survive; the new
file is validated before it is written, and written atomically.
"""

from __future__ import annotations

import os
import stat
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions

from gitstore import errors, files
from porcelain.config.layers import parse_toml, parse_value, read_text
from porcelain.config.merge import RULES_PATH, lookup, split_key
from porcelain.config.model import DEFAULT_RULE, Config
from porcelain.config.schema import TableArray, node_at, unknown_key, validate
from porcelain.config.toolenv import check_tool_env
from porcelain.errors import ConfigError


def _known_path(path: Path, dotted_key: str) -> tuple[str, ...]:
    parts = split_key(dotted_key, str(path))
    for end in range(1, len(parts) + 1):
        node = node_at(parts[:end])
        if node is None:
            raise unknown_key(str(path), parts[:end])
        if isinstance(node, TableArray) and end < len(parts):
            key = ".".join(parts[:end])
            raise ConfigError(
                f"{path}: {key} is an array of tables; set it whole",
                f"for example: {key} '[{{keep_last = 3, reasoning = \"strip\"}}]'",
            )
    return parts


def get_value(path: Path, dotted_key: str) -> Any:
    """The value of a known key in one file; None when the file or key is missing."""
    parts = _known_path(path, dotted_key)
    text = read_text(path, missing_ok=True)
    if text is None:
        return None
    return lookup(parse_toml(text, str(path)), parts)


def set_value(path: Path, dotted_key: str, raw_value: str) -> Any:
    """Set a key in one file, keeping comments; returns the value written.

    ``raw_value`` is read as a TOML value when it parses, else as a string.
    The file and its directories are created when missing.
    """
    parts = _known_path(path, dotted_key)
    value = parse_value(raw_value.strip(), parts)
    text = read_text(path, missing_ok=True) or ""
    parse_toml(text, str(path))  # syntax errors with TOML's line and column
    try:
        doc = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}")
    _set_in(doc, parts, value, path)
    new_text = tomlkit.dumps(doc)
    data = parse_toml(new_text, str(path))
    validate(data, str(path))
    check_tool_env(data, lambda _: str(path))
    atomic_write(path, new_text)
    return value


def _set_in(doc: MutableMapping[str, Any], parts: tuple[str, ...], value: Any, path: Path) -> None:
    node: MutableMapping[str, Any] = doc
    for i, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            node[part] = tomlkit.table(is_super_table=True)
            child = node[part]
        if not isinstance(child, MutableMapping):
            where = ".".join(parts[: i + 1])
            raise ConfigError(
                f"{path}: {where} is not a table", f"remove or fix {where} in {path} first"
            )
        node = child
    node[parts[-1]] = value


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path``'s content by ``text``: a temporary file, then a rename.

    A symlinked config file (dotfile managers) stays a symlink: its target is
    replaced.  The file's permission bits are kept.
    """
    target = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o644
        files.write_atomic(target, text, durable=True, mode=mode)
    except (OSError, errors.EnvironmentFault) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else exc.detail
        raise ConfigError(f"{path}: cannot write: {reason or exc}") from None


def show(config: Config) -> str:
    """The merged configuration as TOML; notes the built-in rule when it applies."""
    text = tomlkit.dumps(config.data)
    if lookup(config.data, RULES_PATH) is None:
        rule = ", ".join(f"{k} = {tomlkit.item(v).as_string()}" for k, v in DEFAULT_RULE.items())
        note = (
            "# conversation.compaction.rules: none configured; the built-in rule applies:\n"
            f"# {{ {rule} }}\n"
        )
        text = f"{text.rstrip()}\n\n{note}" if text.strip() else note
    return text
