"""Dotted keys and values as a person reads them, and the effective
configuration of a conversation key by key with the layer each value came from.

Keys and values may come from a conversation (anyone who could write it),
so both are rendered with every character that is not printable escaped:
nothing reaches a terminal raw.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any, Final

from porcelain.config.trust import NOT_ENABLED_PREFIX, Ignored

_BARE_KEY: Final = re.compile(r"[A-Za-z0-9_-]+")

IGNORED_KEY: Final = "ignored"  # the JSON key of what the trust rule left out


def _escape(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's), non-printables as \\uXXXX."""
    body = json.dumps(text, ensure_ascii=False)[1:-1]
    out = []
    for ch in body:
        if ch.isprintable():
            out.append(ch)
        elif ord(ch) > 0xFFFF:
            out.append(f"\\U{ord(ch):08x}")
        else:
            out.append(f"\\u{ord(ch):04x}")
    return '"' + "".join(out) + '"'


def key_part(part: str) -> str:
    return part if _BARE_KEY.fullmatch(part) else _escape(part)


def dotted_key(path: Sequence[str]) -> str:
    """``("conversation", "tools", "*", "enable")`` -> ``conversation.tools."*".enable``."""
    return ".".join(key_part(str(p)) for p in path) if path else "(the whole delta)"


def toml_value(value: Any) -> str:
    """A value as an inline TOML value, on one line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _escape(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{key_part(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{" + items + "}" if items else "{}"
    if value is None:
        return '"(null)"'  # JSON's null has no TOML form
    return _escape(str(value))


def printable(text: str) -> str:
    """``text`` with every non-printable character escaped (for sources and reasons)."""
    return _escape(text)[1:-1] if not text.isprintable() else text


Entry = tuple[tuple[str, ...], Any, str]


def as_json(entries: Sequence[Entry], ignored: Sequence[Ignored]) -> dict[str, Any]:
    """``{dotted key: {value, source}}``, and what was left out under ``ignored``."""
    out: dict[str, Any] = {
        dotted_key(path): {"value": value, "source": source} for path, value, source in entries
    }
    out[IGNORED_KEY] = [
        {"key": dotted_key(i.path), "value": i.value, "source": i.source, "reason": i.reason}
        for i in ignored
    ]
    return out


def as_text(entries: Sequence[Entry], ignored: Sequence[Ignored], title: str) -> list[str]:
    """One line per key: ``KEY = VALUE  # SOURCE``; what was left out, commented."""
    lines = [f"# {printable(title)}", "# KEY = VALUE  # where it comes from"]
    lines += [
        f"{dotted_key(path)} = {toml_value(value)}  # {printable(source)}"
        for path, value, source in entries
    ]
    if ignored:
        lines += [
            "",
            "# Ignored (trust rule): the conversation's recorded configuration tried to set",
            "# these keys; only your own configuration files can.",
        ]
        for item in ignored:
            lines.append(
                f"# {dotted_key(item.path)} = {toml_value(item.value)}  "
                f"# {printable(item.source)}: {printable(item.reason)}"
            )
    return lines


def warning(ignored: Sequence[Ignored], limit: int = 4) -> str:
    """The one stderr line a command prints when a delta was partly ignored."""
    for item in ignored:
        if item.reason.startswith(NOT_ENABLED_PREFIX):
            return (
                f"warning: the conversation's recorded configuration chose {dotted_key(item.path)}"
                f" = {toml_value(item.value)}, ignored: {item.reason}; "
                "see `jp config show --conversation`"
            )
    keys: list[str] = []
    for item in ignored:
        key = dotted_key(item.path)
        key = key if len(key) <= 80 else key[:77] + "..."
        if key not in keys:
            keys.append(key)
    shown = ", ".join(keys[:limit]) + (
        f" and {len(keys) - limit} more" if len(keys) > limit else ""
    )
    return (
        f"warning: the conversation's recorded configuration tried to set {shown}; "
        "ignored (trust rule: only your own configuration files can); "
        "see `jp config show --conversation`"
    )
