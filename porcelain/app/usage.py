"""`jp usage`: the token counts of every conversation, read from the cache's kept rows.

Each conversation tip has one kept row in the store's cache (``usage/<tip>``,
``store.local.values``): the usage entries of its whole chain
(``domain/usage_records.py``) and the time of its earliest one.  A commit never
changes, so a row never goes stale; a tip without one (new, moved, or a cache
deleted) is read from its chain once and its row kept.  So `jp usage` over
10,000 conversations that did not change reads 10,000 rows in one query and no
event (docs/performance.md).  The rows are derived data that anyone with the
git directory can write: each entry is checked (``usage_records.valid``), and a
row that fails is made again from git.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import date
from typing import Any

from gitstore import Conversation, Event, Located, Store, errors
from porcelain.app.describe import imported_facts
from porcelain.config.layers import read_layer, user_config_path
from porcelain.domain.prices import Price, user_prices
from porcelain.domain.usage_records import TIME, TOOL, Entry, read, valid
from porcelain.domain.usage_report import local_day, merge, report

VERSION = "usage-1"  # the kept rows' layout; another makes every row again
PREFIX = "usage/"


def chain_row(events: Sequence[Event], commits: Sequence[str]) -> dict[str, Any]:
    """A tip's kept row: its chain's entries and the earliest time of an entry or a kept
    record (as ccusage orders files: by their earliest line)."""
    start: Event = {}
    for event in events:
        if event.get("type") == "conversation_start":
            start = event
    origin = imported_facts(start.get("imported"))["imported_from"]
    reader = read(events, commits, origin)
    first = min((e[TIME] for e in reader.out), default=reader.earliest)
    if reader.earliest is not None and first is not None:
        first = min(first, reader.earliest)
    return {"first": first, "entries": reader.out}


def _good(row: Any) -> bool:
    if not isinstance(row, dict) or not isinstance(row.get("entries"), list):
        return False
    first = row.get("first")
    if first is not None and (not isinstance(first, int | float) or isinstance(first, bool)):
        return False
    return valid(row["entries"])


def rows(
    store: Store,
    located: Sequence[Located],
    progress: Callable[[int, int], None] | None = None,
    whole: bool = False,
) -> dict[str, dict[str, Any]]:
    """The kept row of each tip of ``located``, made (and kept) where missing; with
    ``whole`` (``located`` is every conversation), the rows of other tips are
    dropped when a row was made (a tip moved: its old row would stay for ever)."""
    tips = sorted({loc.tip for loc in located})
    kept = store.local.values([PREFIX + t for t in tips], VERSION)
    found: dict[str, dict[str, Any]] = {}
    missing = []
    for tip in tips:
        row = kept.get(PREFIX + tip)
        if row is not None and _good(row):
            found[tip] = row
        else:
            missing.append(tip)
    if len(missing) > 1:
        store.log.prefetch(missing)  # every chain cached in one pass (after a pull)
    fresh: dict[str, Any] = {}
    for done, tip in enumerate(missing, start=1):
        try:
            events, commits = store.log.read_chain(tip)
        except errors.CorruptEvent:
            continue  # a damaged chain counts nothing; `jp doctor` names it
        fresh[PREFIX + tip] = found[tip] = chain_row(events, commits)
        if progress is not None:
            progress(done, len(missing))
    if fresh:
        store.local.keep_values(VERSION, fresh)
        if whole:
            store.local.drop_values(PREFIX, [PREFIX + t for t in tips])
    return found


def in_order(
    located: Sequence[Located], kept: dict[str, dict[str, Any]]
) -> list[tuple[str, list[Entry]]]:
    """Each conversation's entries, the one whose earliest time is oldest first (as
    ccusage reads files), then by id: the order in which a key's first sighting wins."""
    ordered = sorted(
        (loc for loc in located if loc.tip in kept),
        key=lambda loc: (kept[loc.tip]["first"] is None, kept[loc.tip]["first"] or 0, loc.cid),
    )
    return [(loc.cid, kept[loc.tip]["entries"]) for loc in ordered]


def collect(
    store: Store,
    only: Sequence[Located] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[tuple[str, list[Entry]]]:
    """The entries of every conversation (live and archived), or of ``only``."""
    located = list(only) if only is not None else store.refs.list(archived=None)
    return in_order(located, rows(store, located, progress, whole=only is None))


def summary(
    store: Store,
    by: str,
    priced: Mapping[str, Price],
    since: date | None = None,
    until: date | None = None,
    tools: Collection[str] = (),
    only: Sequence[Located] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """`jp usage`'s report (``usage_report.report``) of the store, or of ``only``: the
    entries of the local days ``since`` to ``until`` (inclusive) spent by ``tools``
    (every tool when empty).  The command and the web view's usage page both ask this."""
    per_conversation = collect(store, only, progress)

    def keep(entry: Entry) -> bool:
        if tools and entry[TOOL] not in tools:
            return False
        if since is None and until is None:
            return True
        day = local_day(entry[TIME])
        return (since is None or day >= since) and (until is None or day <= until)

    result = report(merge(per_conversation), by, priced, keep)
    result["filtered"] = bool(tools or since or until or only is not None)
    return result


def prices(environ: Mapping[str, str]) -> dict[str, Price]:
    """The user's own prices (``[usage.prices."MODEL"]`` of the user's file only: a
    conversation, a pull or a store's file never sets one)."""
    return user_prices(read_layer(user_config_path(environ), missing_ok=True))


def conversation_total(conv: Conversation, environ: Mapping[str, str]) -> dict[str, Any] | None:
    """What one conversation's chain used, counted and priced as `jp usage` does (its
    forks' and other conversations' copies aside); None when it records no usage."""
    return chain_total(conv, prices(environ))


def chain_total(conv: Conversation, priced: Mapping[str, Price]) -> dict[str, Any] | None:
    """``conversation_total`` with the user's prices already read (the web view's)."""
    row = chain_row(conv.events, conv.commits)
    if not row["entries"]:
        return None
    result = report(merge([(conv.cid, row["entries"])]), "model", priced)
    models = [r["model"] for r in result["rows"] if r["model"] != "<synthetic>"]
    return {**result["total"], "models": models}
