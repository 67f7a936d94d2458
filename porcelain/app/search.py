"""Full-text search over conversations' raw events: grep's pattern rule, the
conversations it reads and the hits it finds (`jp conversation grep`, `jp serve`)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from gitstore import Event, Located, Store, turns
from porcelain.app import listed
from porcelain.domain.grepmatch import SCOPES, compile_pattern, scoped_lines
from porcelain.domain.grepneedles import needles

__all__ = ["SCOPES", "candidates", "chain_hits", "compile_pattern", "indexed", "searched"]


def searched(store: Store, archived: bool, reviews: bool) -> list[Located]:
    """Every live conversation (and archived ones with ``archived``; archived
    reviews only with ``reviews``: they repeat their source)."""
    located = store.refs.list(archived=None if archived else False)
    if reviews or not any(loc.archived for loc in located):  # reviews are archived ones
        return located
    sources = store.notes.sources()
    return [loc for loc in located if not (loc.archived and store.notes.anchor(loc.cid) in sources)]


def candidates(
    store: Store, located: Sequence[Located], matcher: re.Pattern[str], scan: bool = False
) -> list[Located]:
    """The conversations worth reading: those the cache's full-text index says may
    hold the strings ``matcher`` requires (all of them with ``scan``)."""
    held = (
        None if scan else store.log.text_candidates([loc.tip for loc in located], needles(matcher))
    )
    return list(located) if held is None else [loc for loc in located if loc.tip in held]


def indexed(
    store: Store, matcher: re.Pattern[str], archived: bool, reviews: bool, rank: listed.Rank
) -> list[Located] | None:
    """``candidates`` of ``searched``'s conversations without listing the refs: the
    index is asked about the listing's kept rows (``listed``), up to date under the
    refs' fingerprint, so an unchanged store costs what it finds and a changed one
    what moved.  None: the kept rows or the index cannot answer (list the refs)."""
    wanted = needles(matcher)
    if not wanted or not listed.fresh(store, rank):
        return None
    kept = store.local.listing.state()
    if kept is None or kept[0] != store.refs.state():
        return None  # a row to make again, or the refs moved since
    which = (False, True) if archived else (False,)
    hide = 0 if reviews else listed.REVIEW  # reviews are archived ones: they repeat their source
    return store.log.listed_candidates(kept[0], wanted, which, hide)


def chain_hits(
    events: list[Event],
    commits: list[str],
    scopes: tuple[str, ...],
    matcher: re.Pattern[str],
    context: int = 0,
) -> Iterator[tuple[str, dict[str, object]]]:
    """(commit, hit) for each line of an event's scoped field that ``matcher`` finds,
    with ``context`` lines of that field before and after it."""
    for event, turn, commit in zip(events, turns.turn_indices(events), commits, strict=True):
        for scope, lines in scoped_lines(event, scopes):
            for n, line in enumerate(lines):
                if matcher.search(line):
                    hit: dict[str, object] = {"turn": turn + 1, "scope": scope, "text": line}
                    if context:
                        hit["before"] = lines[max(0, n - context) : n]
                        hit["after"] = lines[n + 1 : n + 1 + context]
                    yield commit, hit
