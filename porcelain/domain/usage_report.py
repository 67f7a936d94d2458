"""`jp usage`'s rows: usage entries counted once, grouped, priced.  Pure.

Entries come per conversation, in the order ``merge`` is given them (ccusage's:
the conversation whose earliest record is oldest first); an entry whose key was
seen already is left out, so one API message split over several records, a
conversation's fork, a subagent stream and a session imported on two machines
count once.  A period is the local date of an entry's time (``TZ`` honoured).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from gitstore import format_time
from porcelain.domain.prices import Price, fast, lookup
from porcelain.domain.usage_records import (
    COUNTS,
    KEY,
    MODEL,
    PROJECT,
    SESSION,
    TIME,
    TOOL,
    Entry,
)

GROUPINGS = ("day", "week", "month", "session", "model", "project")
TOOLS = ("claude-code", "codex", "jp")
FAST_FACTOR = 6  # Anthropic's fast mode costs six times the standard price
COUNT_KEYS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")


def merge(per_conversation: Iterable[tuple[str, list[Entry]]]) -> list[tuple[str, Entry]]:
    """Every entry once (its first sighting), with the conversation it was read in."""
    seen: set[str] = set()
    out: list[tuple[str, Entry]] = []
    for cid, entries in per_conversation:
        for entry in entries:
            if entry[KEY] not in seen:
                seen.add(entry[KEY])
                out.append((cid, entry))
    return out


def local_day(seconds: float) -> date:
    """The local date of a time (the process's time zone: ``TZ``)."""
    try:
        return datetime.fromtimestamp(seconds).date()
    except (OverflowError, OSError, ValueError):
        return date(1970, 1, 1)


def period_of(by: str, cid: str, entry: Entry) -> str:
    """The row an entry belongs to under grouping ``by``."""
    if by in ("day", "week", "month"):
        day = local_day(entry[TIME])
        if by == "day":
            return day.isoformat()
        if by == "month":
            return day.strftime("%Y-%m")
        return (day - timedelta(days=day.weekday())).isoformat()  # the week's Monday
    if by == "model":
        return str(entry[MODEL] or "unknown")
    if by == "project":
        return str(entry[PROJECT] or ("jp" if entry[TOOL] == "jp" else "unknown"))
    return str(entry[SESSION] or cid)


@dataclass
class Sum:
    counts: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    cost: float = 0.0
    unpriced: set[str] = field(default_factory=set)
    models: dict[str, Sum] = field(default_factory=dict)
    first: float | None = None
    last: float | None = None

    def add(self, entry: Entry, price: Price | None) -> None:
        counts = entry[COUNTS]
        for i, value in enumerate(counts):
            self.counts[i] += value
        model = entry[MODEL]
        if price is not None:
            self.cost += price.cost(counts) * (FAST_FACTOR if fast(model) else 1)
        elif any(counts):
            self.unpriced.add(str(model or "unknown"))
        when = entry[TIME]
        self.first = when if self.first is None else min(self.first, when)
        self.last = when if self.last is None else max(self.last, when)

    def row(self) -> dict[str, Any]:
        total = sum(self.counts)
        cost = None if self.unpriced else round(self.cost, 6)
        return {
            **dict(zip(COUNT_KEYS, self.counts, strict=True)),
            "total_tokens": total,
            "cost_usd": cost,
        }


def _stamp(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    try:
        return format_time(datetime.fromtimestamp(seconds, UTC))
    except (OverflowError, OSError, ValueError):
        return None


def report(
    merged: Iterable[tuple[str, Entry]],
    by: str,
    prices: Mapping[str, Price],
    keep: Callable[[Entry], bool] = lambda _: True,
) -> dict[str, Any]:
    """``{"rows": [...], "total": {...}}``: one row per period (sorted), each with the
    four counts, ``total_tokens``, ``cost_usd`` (None when a model of it with tokens has
    no price), ``models`` (names), ``unpriced_models`` and ``breakdown`` per model."""
    found: dict[str | None, Price | None] = {}
    groups: dict[str, Sum] = {}
    whole = Sum()
    for cid, entry in merged:
        if not any(entry[COUNTS]) or not keep(entry):
            continue  # a record of no tokens (Claude Code's <synthetic> ones) adds nothing
        model = entry[MODEL]
        if model not in found:
            found[model] = lookup(model, prices)
        price = found[model]
        group = groups.setdefault(period_of(by, cid, entry), Sum())
        for target in (group, whole):
            target.add(entry, price)
        name = str(model or "unknown")
        group.models.setdefault(name, Sum()).add(entry, price)
    key = "period" if by in ("day", "week", "month") else by
    rows = []
    for period in sorted(groups):
        group = groups[period]
        rows.append(
            {
                key: period,
                **group.row(),
                "models": [m for m in sorted(group.models) if m != "<synthetic>"],
                "unpriced_models": sorted(group.unpriced),
                "breakdown": [{"model": m, **s.row()} for m, s in sorted(group.models.items())],
                "first_at": _stamp(group.first),
                "last_at": _stamp(group.last),
            }
        )
    total = {**whole.row(), "unpriced_models": sorted(whole.unpriced)}
    return {"by": by, "rows": rows, "total": total}
