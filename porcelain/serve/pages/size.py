"""``/c/ID/size``: how much of the model's window the conversation fills, turn by
turn — the provider's count where it reported one, jp's estimate otherwise
(marked as such) — with each compaction marked, drawn as an SVG."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gitstore import Conversation, Event, Kind, Store, turn_indices
from porcelain.domain.token_usage import FIELDS, MAX_COUNT
from porcelain.domain.tokens import PROVIDER_VISIBLE, event_text
from porcelain.serve.html import Markup, join, tag
from porcelain.serve.html import page as layout
from porcelain.serve.html import svg as drawing
from porcelain.serve.pages.common import load, tabs, title

WANTS_WINDOW = True  # routes.py hands this page the window of a conversation's model
Window = Callable[[Store, Conversation], tuple[str, int]]
W, H, PAD = 900, 300, 40


def _reported(event: Event) -> int | None:
    usage = (event.get("metadata") or {}).get("usage")
    if not isinstance(usage, dict):
        return None
    counts = [v for k, v in usage.items() if k in FIELDS and type(v) is int and 0 <= v <= MAX_COUNT]
    return sum(counts) if counts else None


def points(events: Sequence[Event]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per turn: the tokens the model read and wrote at it (``counted`` by the
    provider, else estimated as the visible text so far / 4); and the compactions,
    each at the turn it was applied after."""
    turns: list[dict[str, Any]] = []
    marks: list[dict[str, Any]] = []
    chars = 0
    for event, turn in zip(events, turn_indices(events), strict=True):
        while len(turns) <= turn:
            turns.append({"turn": len(turns) + 1, "tokens": 0, "counted": False})
        if event.get("type") in PROVIDER_VISIBLE:
            chars += len(event_text(event))
        found = _reported(event)
        row = turns[turn]
        if found is not None:
            row["tokens"], row["counted"] = max(found, row["tokens"] if row["counted"] else 0), True
        elif not row["counted"]:
            row["tokens"] = chars // 4
        if event.get("type") == Kind.COMPACTION:
            marks.append(
                {
                    "turn": turn + 1,
                    "from_turn": int(event.get("from_turn", 0)) + 1,
                    "to_turn": int(event.get("to_turn", 0)) + 1,
                }
            )
    return turns, marks


def api(store: Store, _query: Any, cid: str, window: Window) -> dict[str, Any]:
    conv = load(store, cid)
    model, size = window(store, conv)
    turns, marks = points(conv.events)
    return {"id": cid, "model": model, "window": size, "turns": turns, "compactions": marks}


def _compactions(marks: list[dict[str, Any]], x: Callable[[float], float]) -> list[Markup]:
    """A vertical line at the turn each compaction was applied after, labelled
    (labels one under the other, where several share a turn)."""
    out = []
    for i, m in enumerate(marks):
        at = x(m["turn"])
        out.append(tag("line", "", x1=at, y1=PAD / 2, x2=at, y2=H - PAD, class_="compaction"))
        label = f"compacted {m['from_turn']}-{m['to_turn']}"
        out.append(tag("text", label, x=at + 3, y=PAD / 2 + 10 + 12 * i, class_="label"))
    return out


def svg(data: dict[str, Any]) -> Markup:
    turns, window = data["turns"], data["window"]
    top = max(int(max([window, *(t["tokens"] for t in turns)])), 1)
    n = max(len(turns), 1)

    def x(turn: float) -> float:
        return round(PAD + (turn - 1) * (W - 2 * PAD) / max(n - 1, 1), 1)

    def y(tokens: float) -> float:
        return round(H - PAD - tokens * (H - 2 * PAD) / top, 1)

    edge = y(window)
    parts = [tag("line", "", x1=PAD, y1=edge, x2=W - PAD, y2=edge, class_="window")]
    label = f"window: {window:,} tokens ({data['model']})"
    parts.append(tag("text", label, x=PAD + 4, y=edge - 6, class_="label"))
    parts += _compactions(data["compactions"], x)
    line = " ".join(f"{x(t['turn'])},{y(t['tokens'])}" for t in turns)
    parts.append(tag("polyline", "", points=line, class_="tokens"))
    for t in turns:
        kind = "counted" if t["counted"] else "estimated"
        tip = tag("title", f"turn {t['turn']}: {t['tokens']:,} tokens ({kind})")
        parts.append(tag("circle", tip, cx=x(t["turn"]), cy=y(t["tokens"]), r=3, class_=kind))
    parts.append(tag("text", f"turns 1-{len(turns)}", x=PAD, y=H - PAD / 3, class_="label"))
    return drawing(join(parts), W, H, "chart")


def page(store: Store, query: Any, cid: str, window: Window) -> Markup:
    data = api(store, query, cid, window)
    counted = sum(1 for t in data["turns"] if t["counted"])
    legend = tag(
        "p",
        f"{counted} of {len(data['turns'])} turns counted by the provider (filled dots); the others estimated from the text (hollow dots).",
        class_="legend",
    )
    body = Markup(tabs(cid, "/size") + tag("div", svg(data), class_="figure") + legend)
    crumbs = [("/", "Conversations"), (f"/c/{cid}", title(store, cid))]
    return layout(f"Size of {title(store, cid)}", body, crumbs)
