"""Another tool's TOML file edited in place (Codex's config.toml for `jp mcp install`):
tomlkit keeps every comment and the layout of what is not changed."""

from __future__ import annotations

from typing import Any

import tomlkit
import tomlkit.exceptions


def parse(text: str) -> Any:
    """The document; ``ValueError`` with the parser's words when it is not TOML."""
    try:
        return tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise ValueError(str(exc)) from None


def put(doc: Any, key: str, name: str, value: dict[str, Any] | None) -> None:
    """``[key.name]`` set to ``value`` (a super-table ``key`` made when missing), or
    removed when ``value`` is None."""
    if value is None:
        if key in doc and name in doc[key]:
            del doc[key][name]
        return
    if key not in doc:
        doc[key] = tomlkit.table(is_super_table=True)
    table = tomlkit.table()
    for field, item in value.items():
        table[field] = item
    doc[key][name] = table


def plain(value: Any) -> Any:
    """A tomlkit item as plain Python."""
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def dumps(doc: Any) -> str:
    return tomlkit.dumps(doc)
