"""Conversation ids typed short: any unique prefix, with or without ``jp-c``,
or for an imported session the start of its hex suffix (its handle).

Pure functions over lists of ids; `targets.resolve` feeds them every id of the
store (live and archived), and `ls` shows each id's shortest unique prefix, as
git abbreviates commit ids.
"""

from __future__ import annotations

import re
from bisect import bisect_left
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


def named(text: str, ids: Iterable[str]) -> list[str]:
    """The ids ``text`` names: as a prefix (``matches``: an exact id only itself)
    or as the start of an imported session's hex suffix (a handle, ``handles``)."""
    pool = sorted(set(ids))
    prefixed = matches(text, pool)
    if prefixed == [normalize(text)]:
        return prefixed
    return sorted({*prefixed, *by_suffix(text, pool)})


def pick(text: str, ids: Iterable[str]) -> str | None:
    """The one id ``text`` names; None when none does; ``Ambiguous`` when several do."""
    found = named(text, ids)
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


# An imported session's id ends in hex digits drawn from its name
# (``jp-c<deciseconds>-<10 hex>``, domain/sessionident.py).  Sessions imported
# together start at nearly the same decisecond, so their shortest unique prefix
# runs into the hex; the start of the hex alone (at least HANDLE_DIGITS) is the
# handle a person types instead: ``jp c show 3fa9``.
HANDLE_DIGITS = 4
_HANDLE = re.compile(rf"[0-9a-f]{{{HANDLE_DIGITS},32}}")


def suffix(cid: str) -> str:
    """The part of ``cid`` after its deciseconds (``""`` for an id without one)."""
    return cid[len(PREFIX) :].partition("-")[2]


def is_handle(text: str) -> bool:
    """Whether ``text`` could be an imported session's handle (hex, long enough)."""
    return _HANDLE.fullmatch(text) is not None


def by_suffix(text: str, ids: Iterable[str]) -> list[str]:
    """The ids whose suffix starts with ``text`` (a handle), sorted."""
    if not _HANDLE.fullmatch(text):
        return []
    return sorted({cid for cid in ids if suffix(cid).startswith(text)})


def handles(ids: Iterable[str]) -> dict[str, str]:
    """For each id with a hex suffix, the shortest start of it (at least
    ``HANDLE_DIGITS``) that names it alone: no other id's suffix starts with it,
    and no id is named by it as a prefix (``3917`` beside ``jp-c3917...``).  An id
    whose every start is shared has none."""
    pool = sorted(set(ids))
    tails = sorted((suffix(cid), cid) for cid in pool if _HANDLE.fullmatch(suffix(cid)))
    bodies = sorted(cid[len(PREFIX) :] for cid in pool)
    out: dict[str, str] = {}
    for i, (tail, cid) in enumerate(tails):
        near = [tails[j][0] for j in (i - 1, i + 1) if 0 <= j < len(tails)]
        length = max([HANDLE_DIGITS, *(_common(tail, other) + 1 for other in near)])
        while length <= len(tail) and _starts_a_body(tail[:length], bodies):
            length += 1
        if length <= len(tail):
            out[cid] = tail[:length]
    return out


def _starts_a_body(text: str, bodies: Sequence[str]) -> bool:
    """Whether some id (less ``jp-c``, sorted in ``bodies``) starts with ``text``."""
    at = bisect_left(bodies, text)
    return at < len(bodies) and bodies[at].startswith(text)
