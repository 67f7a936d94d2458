"""Grep hits, one per event: a commit shared by a source, its forks and a
review is one hit naming every conversation that holds it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def merge_hits(
    found: Iterable[tuple[str, str, dict[str, Any]]], age: Callable[[str], Any]
) -> list[dict[str, Any]]:
    """``found``: (conversation id, commit, hit) in search order.  One hit per
    commit and line, its ``id`` the oldest conversation holding it (by ``age``),
    ``ids`` all of them, oldest first; hits keep the order they were first found."""
    merged: dict[tuple[str, int, str, str], dict[str, Any]] = {}
    for cid, commit, hit in found:
        key = (commit, hit["turn"], hit["scope"], hit["text"])
        entry = merged.get(key)
        if entry is None:
            merged[key] = {**hit, "id": cid, "ids": [cid], "commit": commit}
        elif cid not in entry["ids"]:
            entry["ids"].append(cid)
    out = list(merged.values())
    for entry in out:
        entry["ids"].sort(key=lambda c: (age(c), c))
        entry["id"] = entry["ids"][0]
    return out


def hit_line(hit: dict[str, Any]) -> str:
    """``ID:TURN:SCOPE:TEXT``; the other holders after the id, comma-separated."""
    return f"{','.join(hit['ids'])}:{hit['turn']}:{hit['scope']}:{hit['text']}"
