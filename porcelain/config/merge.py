"""Pure functions over configuration dicts: dotted keys, merging, diffing.

Merge rule: tables merge recursively, anything else replaces, except the
arrays in ``APPEND_PATHS`` (``conversation.compaction.rules``), which append
across layers.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from porcelain.errors import ConfigError

RULES_PATH: Final = ("conversation", "compaction", "rules")
APPEND_PATHS: Final = frozenset({RULES_PATH})


def split_key(key: str, source: str = "--cfg") -> tuple[str, ...]:
    """``a.b."c.d"`` -> ``("a", "b", "c.d")``; a part may be double-quoted."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False  # inside "..."
    was_quoted = False  # the current part was written in quotes
    for ch in key.strip():
        if ch == '"':
            quoted = not quoted
            was_quoted = True
        elif ch == "." and not quoted:
            parts.append(_part(current, was_quoted, key, source))
            current, was_quoted = [], False
        else:
            current.append(ch)
    if quoted:
        raise ConfigError(f"{source}: unterminated quote in key {key!r}")
    parts.append(_part(current, was_quoted, key, source))
    return tuple(parts)


def _part(chars: list[str], was_quoted: bool, key: str, source: str) -> str:
    part = "".join(chars)
    if not was_quoted:
        part = part.strip()
    if not part and not was_quoted:
        raise ConfigError(
            f"{source}: invalid key {key!r}", "write dotted keys like assistant.model.id"
        )
    return part


def nest(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """``("a", "b"), 1`` -> ``{"a": {"b": 1}}``."""
    out: Any = value
    for part in reversed(path):
        out = {part: out}
    assert isinstance(out, dict)
    return out


def lookup(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The value at ``path``, or None when any part is missing."""
    node: Any = data
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def merge(base: Mapping[str, Any], layer: Mapping[str, Any]) -> dict[str, Any]:
    """A new dict: ``layer`` on top of ``base``; neither argument is modified."""
    return _merge(base, layer, ())


def _merge(
    base: Mapping[str, Any], layer: Mapping[str, Any], path: tuple[str, ...]
) -> dict[str, Any]:
    out = copy.deepcopy(dict(base))
    for key, value in layer.items():
        here = (*path, key)
        old = out.get(key)
        if isinstance(value, Mapping) and isinstance(old, Mapping):
            out[key] = _merge(old, value, here)
        elif here in APPEND_PATHS and isinstance(value, list) and isinstance(old, list):
            out[key] = old + copy.deepcopy(value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def same(a: Any, b: Any) -> bool:
    """Equality that tells ``true`` from ``1`` and ``1`` from ``1.0``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def diff_delta(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> dict[str, Any]:
    """The part of ``wanted`` that, merged on ``current``, changes it.

    Appended arrays (compaction rules) count as already there when ``current``'s
    array ends with ``wanted``'s, so recording the same ``-c`` file on every
    query does not repeat its rules.  An explicit empty array is kept when
    ``current`` has none: it means "no rules", not "the built-in rule".
    """
    return _diff(current, wanted, ())


def _diff(
    current: Mapping[str, Any], wanted: Mapping[str, Any], path: tuple[str, ...]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in wanted.items():
        here = (*path, key)
        old = current.get(key)
        if isinstance(value, Mapping) and (old is None or isinstance(old, Mapping)):
            sub = _diff(old or {}, value, here)
            if sub:
                out[key] = sub
        elif here in APPEND_PATHS and isinstance(value, list) and isinstance(old, list):
            if value and not ends_with(old, value):
                out[key] = copy.deepcopy(value)
        elif key not in current or not same(old, value):
            out[key] = copy.deepcopy(value)
    return out


def ends_with(items: list[Any], tail: list[Any]) -> bool:
    """``items``'s last entries are ``tail``."""
    return len(tail) <= len(items) and same(items[len(items) - len(tail) :], tail)


def drop_key(data: Mapping[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """A copy of ``data`` without ``path``, and without the tables that leaves empty."""
    out = copy.deepcopy(dict(data))
    head, rest = path[0], path[1:]
    if not rest:
        out.pop(head, None)
    elif isinstance(out.get(head), Mapping):
        inner = drop_key(out[head], rest)
        if inner:
            out[head] = inner
        else:
            out.pop(head)
    return out
