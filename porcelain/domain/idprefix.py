"""Conversation ids typed short: any unique prefix, with or without ``jp-c``.

Pure functions over lists of ids; `targets.resolve` feeds them every id of the
store (live and archived), and `ls` shows each id's shortest unique prefix, as
git abbreviates commit ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

PREFIX = "jp-c"
# what may follow the optional jp-c: the characters an id holds after it
_BODY = re.compile(r"[0-9][0-9a-z-]{0,60}")
SHOWN_CANDIDATES = 8


class Ambiguous(Exception):
    """A prefix that more than one id starts with."""

    def __init__(self, prefix: str, candidates: Sequence[str]) -> None:
        super().__init__(prefix)
        self.prefix = prefix
        self.candidates = list(candidates)


def normalize(text: str) -> str | None:
    """The id prefix ``text`` stands for (``jp-c`` added), or None if it cannot be one.

    ``177273``, ``jp-c177273`` and ``c177273`` all mean ``jp-c177273``.
    """
    body = text
    for lead in (PREFIX, "c"):
        if body.startswith(lead):
            body = body[len(lead) :]
            break
    if not _BODY.fullmatch(body):
        return None
    return PREFIX + body


def matches(text: str, ids: Iterable[str]) -> list[str]:
    """The ids ``text`` is a prefix of (an exact id matches only itself)."""
    wanted = normalize(text)
    if wanted is None:
        return []
    pool = sorted(set(ids))
    if wanted in pool:
        return [wanted]
    return [cid for cid in pool if cid.startswith(wanted)]


def pick(text: str, ids: Iterable[str]) -> str | None:
    """The one id ``text`` names; None when none does; ``Ambiguous`` when several do."""
    found = matches(text, ids)
    if len(found) > 1:
        raise Ambiguous(text, found)
    return found[0] if found else None


def describe_candidates(candidates: Sequence[str], limit: int = SHOWN_CANDIDATES) -> str:
    """``jp-c1, jp-c2 and 3 more`` for an error line."""
    shown = ", ".join(candidates[:limit])
    rest = len(candidates) - limit
    return f"{shown} and {rest} more" if rest > 0 else shown


def unique_lengths(ids: Iterable[str]) -> dict[str, int]:
    """For each id, the length of its shortest prefix (``jp-c`` included) that no
    other id shares; at least one character past ``jp-c``."""
    pool = sorted(set(ids))
    # in sorted order an id shares the longest prefix with a neighbour
    ends: list[str | None] = [None, *pool, None]
    return {cid: unique_length(cid, ends[i], ends[i + 2]) for i, cid in enumerate(pool)}


def unique_length(cid: str, before: str | None, after: str | None) -> int:
    """``unique_lengths``' answer for ``cid`` from its neighbours in the sorted ids."""
    shared = max(_common(cid, other) if other else 0 for other in (before, after))
    return min(max(len(PREFIX) + 1, shared + 1), len(cid))


def _common(a: str, b: str) -> int:
    """The length of the longest common prefix (a binary search over slices)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low
