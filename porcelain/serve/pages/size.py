"""``/c/ID/size``: how much of the model's window the conversation fills, turn by
turn — the provider's count where it reported one, jp's estimate otherwise
(marked as such) — with each compaction marked, drawn as an SVG."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gitstore import Conversation, Event, Kind, Store
from gitstore import turns as store_turns
from porcelain.domain.titles import source_record
from porcelain.domain.token_usage import FIELDS, MAX_COUNT
from porcelain.domain.tokens import PROVIDER_VISIBLE, event_text
from porcelain.serve.html import Markup, join, tag
from porcelain.serve.html import page as layout
from porcelain.serve.html import svg as drawing
from porcelain.serve.pages.common import load, masked, tabs, title
from porcelain.serve.routes import Query

WANTS_WINDOW = True  # routes.py hands this page the window of a conversation's model
Window = Callable[[Store, Conversation], tuple[str, int]]
W, H, PAD = 900, 320, 40
LEFT = 76  # room for the y axis's labels
TICKS = 4  # the y axis's steps above zero


def _sum(usage: Any, fields: Sequence[str]) -> int | None:
    if not isinstance(usage, dict):
        return None
    counts = [usage[k] for k in fields if type(usage.get(k)) is int and 0 <= usage[k] <= MAX_COUNT]
    return sum(counts) if counts else None


CODEX_FIELDS = ("input_tokens", "output_tokens")  # Codex's input count holds the cached part


def _reported(event: Event) -> int | None:
    """The tokens the provider counted at this event: jp's record of a response's
    usage, else the usage an imported session's record holds (Claude Code's
    ``message.usage``, Codex's ``token_count``)."""
    found = _sum((event.get("metadata") or {}).get("usage"), FIELDS)
    if found is not None:
        return found
    record = source_record(event)
    if record is None:
        return None
    message = record.get("message")
    if record.get("type") == "assistant" and isinstance(message, dict):
        return _sum(message.get("usage"), FIELDS)
    payload = record.get("payload")
    if isinstance(payload, dict) and payload.get("type") == "token_count":
        info = payload.get("info")
        return _sum(info.get("last_token_usage") if isinstance(info, dict) else None, CODEX_FIELDS)
    return None


def points(events: Sequence[Event]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per turn: the tokens the model read and wrote at it (``counted`` by the
    provider, else estimated as the visible text so far / 4); and the compactions,
    each at the turn it was applied after."""
    turns: list[dict[str, Any]] = []
    marks: list[dict[str, Any]] = []
    chars = 0
    for event, turn in zip(events, store_turns.turn_indices(events), strict=True):
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


def api(store: Store, query: Query, cid: str, window: Window) -> dict[str, Any]:
    """The figures; the model's name (stored text) masked unless ``?secrets=1``."""
    conv = load(store, cid)
    model, size = window(store, conv)
    turns, marks = points(conv.events)
    found = {"id": cid, "model": model, "window": size, "turns": turns, "compactions": marks}
    return masked(found, query)[0]


def _compactions(marks: list[dict[str, Any]], x: Callable[[float], float]) -> list[Markup]:
    """A vertical line at the turn each compaction was applied after, labelled
    (labels one under the other, where several share a turn; right of the line,
    or left of it near the right edge, so that none is cut)."""
    out = []
    for i, m in enumerate(marks):
        at = x(m["turn"])
        out.append(tag("line", "", x1=at, y1=PAD / 2, x2=at, y2=H - PAD, class_="compaction"))
        label = f"compacted {m['from_turn']}-{m['to_turn']}"
        right = at > W - 200
        out.append(
            tag(
                "text",
                label,
                x=at - 3 if right else at + 3,
                y=PAD / 2 + 10 + 12 * (i % 8),
                class_="label",
                text_anchor="end" if right else None,
            )
        )
    return out


def round_step(top: int) -> int:
    """A round step (1, 2, 2.5 or 5 times a power of ten) that makes about TICKS steps."""
    raw = max(top / TICKS, 1)
    power: int = 10 ** (len(str(int(raw))) - 1)
    return next(max(int(m * power), 1) for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def short_count(tokens: int) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:g}M"
    return f"{tokens / 1000:g}k" if tokens >= 1000 else str(tokens)


def _axes(
    top: int, n: int, x: Callable[[float], float], y: Callable[[float], float]
) -> list[Markup]:
    """The y axis (tokens, round steps, labelled) and the x axis (turns)."""
    out = [
        tag("line", "", x1=LEFT, y1=PAD / 2, x2=LEFT, y2=H - PAD, class_="axis"),
        tag("line", "", x1=LEFT, y1=H - PAD, x2=W - PAD, y2=H - PAD, class_="axis"),
        tag("text", "tokens", x=4, y=PAD / 2 - 4, class_="label"),
    ]
    step = round_step(top)
    for value in range(0, top + 1, step):
        at = y(value)
        out.append(tag("line", "", x1=LEFT, y1=at, x2=W - PAD, y2=at, class_="grid"))
        out.append(
            tag("text", short_count(value), x=LEFT - 6, y=at + 4, class_="label", text_anchor="end")
        )
    every = max(1, -(-n // 12))
    for turn in [*range(1, n + 1, every), *([n] if (n - 1) % every else [])]:
        out.append(
            tag("text", str(turn), x=x(turn), y=H - PAD + 16, class_="label", text_anchor="middle")
        )
    out.append(tag("text", "turn", x=W - PAD, y=H - 6, class_="label", text_anchor="end"))
    return out


def svg(data: dict[str, Any]) -> Markup:
    turns, window = data["turns"], data["window"]
    highest = max(int(max([window, *(t["tokens"] for t in turns)])), 1)
    top = -(-highest // round_step(highest)) * round_step(highest)  # up to the next round step
    n = max(len(turns), 1)

    def x(turn: float) -> float:
        return round(LEFT + (turn - 1) * (W - LEFT - PAD) / max(n - 1, 1), 1)

    def y(tokens: float) -> float:
        return round(H - PAD - tokens * (H - 1.5 * PAD) / top, 1)

    parts = _axes(top, n, x, y)
    edge = y(window)
    parts.append(tag("line", "", x1=LEFT, y1=edge, x2=W - PAD, y2=edge, class_="window"))
    label = f"window: {window:,} tokens ({data['model']})"
    parts.append(tag("text", label, x=LEFT + 4, y=edge - 6, class_="label"))
    parts += _compactions(data["compactions"], x)
    line = " ".join(f"{x(t['turn'])},{y(t['tokens'])}" for t in turns)
    parts.append(tag("polyline", "", points=line, class_="tokens"))
    for t in turns:
        kind = "counted" if t["counted"] else "estimated"
        tip = tag("title", f"turn {t['turn']}: {t['tokens']:,} tokens ({kind})")
        parts.append(tag("circle", tip, cx=x(t["turn"]), cy=y(t["tokens"]), r=3, class_=kind))
    return drawing(join(parts), W, H, "chart")


def page(store: Store, query: Query, cid: str, window: Window) -> Markup:
    data = api(store, query, cid, window)
    counted = sum(1 for t in data["turns"] if t["counted"])
    legend = tag(
        "p",
        f"{counted} of {len(data['turns'])} turns counted by the provider (filled dots); the others estimated from the text (hollow dots).",
        class_="legend",
    )
    body = Markup(tabs(cid, "/size") + tag("div", svg(data), class_="figure") + legend)
    name = title(store, cid, query)
    crumbs = [("/", "Conversations"), (f"/c/{cid}", name)]
    return layout(f"Size of {name}", body, crumbs)
