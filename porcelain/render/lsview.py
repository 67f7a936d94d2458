"""What `jp conversation ls` keeps, in which order, and how a row reads.

Pure functions over the rows of `describe.listing`; the command only wires
flags to them.  Titles, labels and ids that a remote sent are untrusted:
every field of a row is made one-line and escaped here, before any styling is
added, so a title can neither fake a row nor drive the terminal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any
from unicodedata import east_asian_width

from gitstore import parse_time
from porcelain.domain.titles import shown_title
from porcelain.errors import UsageError
from porcelain.render.output import escape_untrusted

SORTS = ("activity", "created", "id", "turns", "title")
_DURATION = re.compile(r"([0-9]{1,6})\s*(s|m|h|d|w)")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_LABEL = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")

Style = Callable[[str, str], str]


def plain(prefix: str, rest: str) -> str:
    return prefix + rest


def highlighted(prefix: str, rest: str) -> str:
    """The unique prefix bold, the rest dim (what a colour terminal shows)."""
    return (
        f"\x1b[1;35m{prefix}\x1b[0m\x1b[2m{rest}\x1b[0m" if rest else f"\x1b[1;35m{prefix}\x1b[0m"
    )


def shown_id(cid: str, cut: int, handle: str | None, style: Style) -> str:
    """An id in the list with what a person types of it marked: its shortest unique
    prefix (``cut`` characters), or an imported session's handle (the start of its
    hex suffix) where that is shorter to type than the prefix without ``jp-c``."""
    if not handle or len(handle) >= cut - 4 or style is plain:
        return style(cid[:cut], cid[cut:])
    start = len(cid) - len(cid.rpartition("-")[2])
    return f"\x1b[2m{cid[:start]}\x1b[0m" + style(handle, cid[start + len(handle) :])


def parse_since(text: str, now: datetime) -> datetime:
    """``30m``, ``2h``, ``3d``, ``1w`` ago, or a date / RFC 3339 time."""
    found = _DURATION.fullmatch(text.strip())
    if found:
        return now - timedelta(seconds=int(found.group(1)) * _UNITS[found.group(2)])
    try:
        return parse_time(text if "T" in text or " " in text.strip() else text + "T00:00:00Z")
    except (ValueError, OverflowError):
        raise UsageError(
            f"--since {text!r}: not a duration or a time",
            "give e.g. --since 3d, --since 12h, --since 2026-01-05",
        ) from None


def parse_label(spec: str) -> tuple[str, str | None]:
    key, eq, value = spec.partition("=")
    if not _LABEL.fullmatch(key):
        raise UsageError(f"--label {spec!r}: not a label", "labels look like KEY or KEY=VALUE")
    return key, (value if eq else None)


@lru_cache(maxsize=65536)
def _moment(stamp: str) -> datetime | None:
    """A stored time: RFC 3339 through the C parser, anything else through jp's."""
    try:
        found = datetime.fromisoformat(stamp)
        return found if found.tzinfo else found.replace(tzinfo=UTC)
    except ValueError:
        pass
    try:
        return parse_time(stamp)
    except (ValueError, OverflowError):
        return None


def activity(row: dict[str, Any]) -> datetime | None:
    """When a conversation last changed: its last event, else its creation."""
    for key in ("last_event_at", "created_at"):
        stamp = row.get(key)
        if isinstance(stamp, str) and stamp:
            found = _moment(stamp)
            if found is not None:
                return found
    return None


def rank(row: dict[str, Any]) -> float:
    """Where a row sorts by activity (after ``pinned``, before its id): its time."""
    when = activity(row)
    return when.timestamp() if when else float("-inf")


def keep(
    rows: Sequence[dict[str, Any]],
    *,
    pinned: bool = False,
    labels: Sequence[tuple[str, str | None]] = (),
    title: str | None = None,
    since: datetime | None = None,
) -> list[dict[str, Any]]:
    """The rows every filter accepts (they AND)."""
    needle = title.casefold() if title else None
    out = []
    for row in rows:
        if pinned and not row.get("pinned"):
            continue
        have = row.get("labels") or {}
        if any(k not in have or (v is not None and have[k] != v) for k, v in labels):
            continue
        if needle is not None and needle not in str(row.get("title") or "").casefold():
            continue
        if since is not None:
            when = activity(row)
            if when is None or when < since:
                continue
        out.append(row)
    return out


def order(rows: Sequence[dict[str, Any]], key: str, reverse: bool) -> list[dict[str, Any]]:
    """Sorted by ``key``; the default order (activity) keeps pinned and then the
    active conversation last, where the eye lands, as JP lists them."""

    if key == "activity":  # each row's time read once, not once a comparison
        whens = {id(r): activity(r) for r in rows}

    def by(row: dict[str, Any]) -> Any:
        if key == "created":
            return str(row.get("created_at") or "")
        if key == "id":
            return str(row["id"])
        if key == "turns":
            return int(row.get("turns") or 0)
        if key == "title":
            return str(row.get("title") or "").casefold()
        when = whens[id(row)]
        return when.timestamp() if when else float("-inf")

    out = sorted(rows, key=lambda r: (by(r), str(r["id"])), reverse=reverse)
    if key == "activity" and not reverse:
        out.sort(key=lambda r: (bool(r.get("active")), bool(r.get("pinned"))))
    return out


def age(row: dict[str, Any], now: datetime) -> str:
    """``5m ago``, ``3h ago``, ``2d ago``, ``4w ago``, or the date beyond a year."""
    when = activity(row)
    if when is None:
        return "-"
    seconds = max(0, int((now - when).total_seconds()))
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            if unit == "w" and seconds >= 52 * size:
                return f"{when.year:04d}-{when.month:02d}-{when.day:02d}"
            return f"{seconds // size}{unit} ago"
    return "just now"


def safe(text: Any) -> str:
    """Untrusted text for one cell: one line, no control character."""
    return escape_untrusted(str(text), one_line=True)


def title_of(row: dict[str, Any]) -> str:
    """The row's title by the one rule (``porcelain/domain/titles.py``)."""
    return shown_title(row.get("title"), row.get("tool_title"), row.get("preview"))


def keep_imported(
    rows: list[dict[str, Any]], tool: str | None, *, agents: bool
) -> list[dict[str, Any]]:
    """Rows of sessions imported from ``tool`` (all rows when None); a subagent
    stream's or a rewind branch's only with ``agents`` (`ls --all`)."""
    out = []
    for row in rows:
        origin = row.get("imported_from") or {}
        if (origin.get("agent") or origin.get("branch")) and not agents:
            continue
        if tool is None or origin.get("tool") == tool:
            out.append(row)
    return out


def markers(row: dict[str, Any], *, show_archived: bool) -> str:
    """``[pinned] [fork of X] ...`` before the title."""
    tags = []
    if row.get("unreadable"):
        tags.append("[unreadable]")
    if show_archived and row.get("archived"):
        tags.append("[archived]")
    if row.get("pinned"):
        tags.append("[pinned]")
    if row.get("source_id"):
        tags.append(f"[review of {safe(row['source_id'])}]")
    elif row.get("forked_from"):
        tags.append(f"[fork of {safe(row['forked_from'])}]")
    if row.get("diverged_from"):
        tags.append(f"[diverged from {safe(row['diverged_from'])}]")
    origin = row.get("imported_from")
    if isinstance(origin, dict) and origin.get("tool"):
        agent = " subagent" if origin.get("agent") else ""
        agent += f" {safe(str(origin['agent_type']))}" if origin.get("agent_type") else ""
        agent += " rewind" if origin.get("branch") else ""
        if origin.get("tool_branch_of"):
            agent += ", the tool's branch"
        tags.append(f"[{safe(str(origin['tool']))}{agent}]")
    return " ".join(tags)


def fit(text: str, room: int) -> str:
    """``text`` cut to ``room`` terminal cells (a wide character takes two), with an
    ellipsis when cut; left whole when there is hardly room for anything."""
    if room < 8:
        return text
    cells = [2 if east_asian_width(c) in "WF" else 1 for c in text]
    if sum(cells) <= room:
        return text
    kept: list[str] = []
    used = 0
    for char, size in zip(text, cells, strict=True):
        if used + size > room - 1:
            break
        kept.append(char)
        used += size
    return "".join(kept).rstrip() + "…"


def table(
    rows: Sequence[dict[str, Any]],
    unique: dict[str, int],
    now: datetime,
    *,
    style: Style = plain,
    show_archived: bool = False,
    columns: int | None = None,
) -> list[str]:
    """The text of `ls`: a header and one line per row; with ``columns`` (a terminal's
    width) a title too long for the line is cut with an ellipsis, so that no row wraps
    into the next one's columns."""
    ids = [safe(r["id"]) for r in rows]
    width = max(len(cid) for cid in ids)
    ages = [age(r, now) for r in rows]
    age_width = max(3, *(len(a) for a in ages))
    out = [f"{'ID':<{width}}  {'AGE':<{age_width}}  {'TURNS':>5}  TITLE"]
    for row, cid, when in zip(rows, ids, ages, strict=True):
        cut = unique.get(row["id"], len(cid))
        shown = shown_id(cid, cut, row.get("handle"), style) + " " * (width - len(cid))
        mark = "*" if row.get("active") else " "
        title = safe(title_of(row))
        text = " ".join(t for t in (markers(row, show_archived=show_archived), title) if t)
        if columns is not None:
            text = fit(text, columns - (width + age_width + 13))
        out.append(f"{shown}{mark} {when:<{age_width}}  {row.get('turns', 0):>5}  {text}".rstrip())
    return out


def picker(rows: Sequence[dict[str, Any]], now: datetime) -> list[str]:
    """The choices of `use` on a terminal: numbered, most recent first, the active
    one marked *."""
    out = []
    for number, row in enumerate(rows, start=1):
        mark = "*" if row.get("active") else " "
        title = safe(title_of(row))
        out.append(f"{number:>3}{mark} {safe(row['id'])}  {age(row, now):<9} {title}".rstrip())
    return out
