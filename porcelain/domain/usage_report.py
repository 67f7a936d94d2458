"""`jp usage`'s rows: usage entries counted once, grouped, priced.  Pure.

Entries come per conversation, in the order ``merge`` is given them (ccusage's:
the conversation whose earliest record is oldest first); an entry whose key was
seen already is left out, so one API message split over several records, a
conversation's fork, a subagent stream and a session imported on two machines
count once.  A period is the local date of an entry's time (``TZ`` honoured).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from gitstore import format_time
from porcelain.domain.prices import TIER, Price, fast, lookup
from porcelain.domain.usage_records import (
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
DAY = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})")
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


def parse_day(text: str) -> date:
    """``YYYY-MM-DD`` (or ``YYYYMMDD``) as a date; ValueError for anything else."""
    found = DAY.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"{text!r} is not a date: write YYYY-MM-DD")
    try:
        return date(*(int(g) for g in found.groups()))
    except ValueError:
        raise ValueError(f"{text!r} is not a date: write YYYY-MM-DD") from None


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

    def add(self, part: list[Any], model: str, price: Price | None) -> None:
        """One model's summed entries: four counts, the first and last time, and the
        counts' part beyond a request's ``TIER``."""
        counts = part[:4]
        for i, value in enumerate(counts):
            self.counts[i] += value
        if price is not None:
            self.cost += price.cost(counts, part[6:]) * (FAST_FACTOR if fast(model) else 1)
        elif any(counts):
            self.unpriced.add(model)
        self.first = part[4] if self.first is None else min(self.first, part[4])
        self.last = part[5] if self.last is None else max(self.last, part[5])

    def row(self) -> dict[str, Any]:
        total = sum(self.counts)
        cost = None if self.unpriced else round(self.cost, 6)
        return {
            **dict(zip(COUNT_KEYS, self.counts, strict=True)),
            "total_tokens": total,
            "cost_usd": cost,
        }


def _summed(
    merged: Iterable[tuple[str, Entry]], by: str, keep: Callable[[Entry], bool]
) -> dict[tuple[str, str], list[Any]]:
    """Per period and model: the four counts summed, the first and last time, and the
    counts beyond one request's ``TIER`` summed (one pass, no pricing: a price is
    linear in those sums, so it is applied to them)."""
    out: dict[tuple[str, str], list[Any]] = {}
    for cid, entry in merged:
        if not keep(entry):
            continue
        _, when, model, _, _, _, i, o, w, r = entry  # one unpacking: this runs per entry
        key = (period_of(by, cid, entry), model or "unknown")
        part = out.get(key)
        if part is None:
            part = out[key] = [0, 0, 0, 0, when, when, 0, 0, 0, 0]
        part[0] += i
        part[1] += o
        part[2] += w
        part[3] += r
        if when < part[4]:
            part[4] = when
        elif when > part[5]:
            part[5] = when
        if i > TIER or o > TIER or w > TIER or r > TIER:  # rare: a long-context request
            for n, value in enumerate((i, o, w, r)):
                part[6 + n] += max(0, value - TIER)
    return out


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
    groups: dict[str, Sum] = {}
    whole = Sum()
    for (period, model), part in _summed(merged, by, keep).items():
        price = lookup(model if model != "unknown" else None, prices)
        group = groups.setdefault(period, Sum())
        for target in (group, whole, group.models.setdefault(model, Sum())):
            target.add(part, model, price)
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
