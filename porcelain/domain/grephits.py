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


def plain_lines(hit: dict[str, Any], separated: bool = False) -> list[str]:
    """The hit's line, with its context lines around it marked as grep marks them
    (``ID-TURN-SCOPE-TEXT``) and a ``--`` after each hit when ``separated``."""
    ids = ",".join(hit["ids"])
    around = f"{ids}-{hit['turn']}-{hit['scope']}-"
    out = [around + line for line in hit.get("before", [])]
    out.append(hit_line(hit))
    out += [around + line for line in hit.get("after", [])]
    return [*out, "--"] if separated else out


def grouped_lines(hits: list[dict[str, Any]], titles: dict[str, str]) -> list[str]:
    """Hits under a heading per conversation (in the order first found) and per turn."""
    order: dict[str, list[dict[str, Any]]] = {}
    for hit in hits:
        order.setdefault(",".join(hit["ids"]), []).append(hit)
    out: list[str] = []
    for ids, group in order.items():
        title = titles.get(group[0]["id"], "")
        if out:
            out.append("")
        out.append(f"{ids}: {title}" if title else ids)
        turn = None
        for hit in sorted(group, key=lambda h: h["turn"]):
            if hit["turn"] != turn:
                turn = hit["turn"]
                out.append(f"  turn {turn}")
            scope = hit["scope"]
            out += [f"    {scope}- {line}" for line in hit.get("before", [])]
            out.append(f"    {scope}: {hit['text']}")
            out += [f"    {scope}- {line}" for line in hit.get("after", [])]
    return out
