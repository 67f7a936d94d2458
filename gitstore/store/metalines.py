"""Metadata notes (``refs/notes/meta``): one JSON object per line.

``{"k": key, "v": value, "t": unix-ms, "m": machine}``; the newest line per
key wins (ties broken by machine), and two notes merge by the union of their
lines, like ``git notes merge -s cat_sort_uniq``.  (``notes`` re-exports
these names.)
"""

from __future__ import annotations

import json
from typing import Any

from gitstore.boundary import meta_item


def meta_values(text: str | None) -> dict[str, Any]:
    """The newest value of each key in a metadata note (None values mean unset).

    Lines that are not well-formed (``boundary.meta_item``) are skipped.
    """
    best: dict[str, tuple[int, str, Any]] = {}
    for line in (text or "").splitlines():
        item = meta_item(line)
        if item is None:
            continue
        key = item.key
        if key not in best or (item.stamp, item.machine) > best[key][:2]:
            best[key] = (item.stamp, item.machine, item.value)
    return {k: v[2] for k, v in best.items() if v[2] is not None}


def meta_line(key: str, value: Any, stamp_ms: int, machine: str) -> str:
    return json.dumps({"k": key, "v": value, "t": stamp_ms, "m": machine}, sort_keys=True)


def last_stamp(text: str | None, machine: str) -> int:
    """The newest stamp ``machine`` wrote into a metadata note (0 if none)."""
    best = 0
    for line in (text or "").splitlines():
        item = meta_item(line)
        if item is not None and item.machine == machine:
            best = max(best, item.stamp)
    return best


def union(a: str | None, b: str | None) -> str:
    """Union of two notes' lines, sorted and de-duplicated (cat_sort_uniq)."""
    lines = {line for line in (a or "").splitlines() + (b or "").splitlines() if line.strip()}
    return "".join(line + "\n" for line in sorted(lines))


def compact_meta(text: str, limit: int = 20) -> str:
    """Keep only the newest line per key once a note grows past ``limit`` lines."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) <= limit:
        return text
    newest: dict[str, tuple[tuple[int, str], str]] = {}
    for line in lines:
        item = meta_item(line)
        if item is None:
            continue
        rank = (item.stamp, item.machine)
        if item.key not in newest or rank > newest[item.key][0]:
            newest[item.key] = (rank, line)
    return "".join(v[1] + "\n" for v in sorted(newest.values()))
