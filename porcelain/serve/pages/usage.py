"""``/usage``: what every session spent, day by day and model by model — the
figures `jp usage --by day` gives (``app.usage.summary``: one counting), drawn
as stacked bars (an SVG jp makes, no script) over a table; ``since``, ``until``
(local dates) and ``tool`` (repeatable) filter as the command's options do."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gitstore import Store
from porcelain.app.usage import summary
from porcelain.domain.prices import Price
from porcelain.domain.usage_report import TOOLS, parse_day
from porcelain.render.usageview import cost
from porcelain.serve.html import Markup, esc, join, tag, void
from porcelain.serve.html import page as layout
from porcelain.serve.html import svg as drawing
from porcelain.serve.pages.common import masked
from porcelain.serve.pages.size import round_step, short_count
from porcelain.serve.routes import BadRequest, Query, one

WANTS_PRICES = True  # routes.py hands this page the user's prices
W, H, PAD, LEFT = 900, 300, 40, 76
# one colour per model, in the order of their names (the eleventh takes the first's again)
COLOURS = (
    "#3b6ea8",
    "#e0a030",
    "#4f9a5a",
    "#c0504d",
    "#8064a2",
    "#4bacc6",
    "#9c6b3c",
    "#d36fa5",
    "#7f7f7f",
    "#b5b82c",
)
COUNTS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
HEAD = ("Day", "Models", "Input", "Output", "Cache write", "Cache read", "Total", "Cost")


def _filters(query: Query) -> dict[str, Any]:
    """``since``, ``until`` (dates) and ``tools``, as `jp usage` takes them; a 400 otherwise."""
    days = {}
    for name in ("since", "until"):
        text = one(query, name).strip()
        try:
            days[name] = parse_day(text) if text else None
        except ValueError as exc:
            raise BadRequest(f"{name}: {exc}") from None
    if days["since"] and days["until"] and days["since"] > days["until"]:
        raise BadRequest(f"since {days['since']} is after until {days['until']}")
    tools = sorted({t for t in query.get("tool", []) if t})
    for t in tools:
        if t not in TOOLS:
            raise BadRequest(f"tool: {t!r} is not one of {', '.join(TOOLS)}")
    return {**days, "tools": tools}


def api(store: Store, query: Query, prices: Mapping[str, Price]) -> dict[str, Any]:
    """`jp usage --by day -F json`'s rows under ``rows``, with the ``total``."""
    wanted = _filters(query)
    result = summary(store, "day", prices, wanted["since"], wanted["until"], wanted["tools"])
    shown = {k: (v.isoformat() if k != "tools" and v else v) for k, v in wanted.items()}
    return masked({**result, **shown}, query)[0]  # model names are stored text


def _price(row: Mapping[str, Any]) -> str:
    """The cost in dollars, or "no price (MODEL...)": never a guess."""
    if row["cost_usd"] is not None:
        return cost(row["cost_usd"])
    return f"no price ({', '.join(row.get('unpriced_models') or [])})"


def _colours(rows: list[dict[str, Any]]) -> dict[str, str]:
    """A colour for each model that used a token (Claude Code's empty ``<synthetic>``
    records draw nothing)."""
    names = sorted({b["model"] for r in rows for b in r["breakdown"] if b["total_tokens"]})
    return {name: COLOURS[i % len(COLOURS)] for i, name in enumerate(names)}


def _axes(top: int, y: Callable[[float], float]) -> list[Markup]:
    out = [
        tag("line", "", x1=LEFT, y1=PAD / 2, x2=LEFT, y2=H - PAD, class_="axis"),
        tag("line", "", x1=LEFT, y1=H - PAD, x2=W - PAD, y2=H - PAD, class_="axis"),
        tag("text", "tokens", x=4, y=PAD / 2 - 4, class_="label"),
    ]
    for value in range(0, top + 1, round_step(top)):
        at = y(value)
        out.append(tag("line", "", x1=LEFT, y1=at, x2=W - PAD, y2=at, class_="grid"))
        out.append(
            tag("text", short_count(value), x=LEFT - 6, y=at + 4, class_="label", text_anchor="end")
        )
    return out


def svg(rows: list[dict[str, Any]], colours: Mapping[str, str]) -> Markup:
    """One bar a day, its height the day's tokens, one segment per model (a tooltip
    each: the model, its tokens, its cost)."""
    highest = max([1, *(int(r["total_tokens"]) for r in rows)])
    top = -(-highest // round_step(highest)) * round_step(highest)
    n = max(len(rows), 1)
    slot = (W - LEFT - PAD) / n

    def y(tokens: float) -> float:
        return round(H - PAD - tokens * (H - 1.5 * PAD) / top, 1)

    parts = _axes(top, y)
    every = max(1, -(-n // 10))  # at most about ten day labels
    for i, row in enumerate(rows):
        x, below = LEFT + i * slot + slot * 0.15, 0
        for part in row["breakdown"]:
            if not part["total_tokens"]:
                continue
            tip = tag(
                "title",
                f"{row['period']} · {part['model']}: {part['total_tokens']:,} tokens, {_price(part)}",
            )
            above = below + part["total_tokens"]
            parts.append(
                tag(
                    "rect",
                    tip,
                    x=round(x, 1),
                    y=y(above),
                    width=round(max(slot * 0.7, 1), 1),
                    height=max(round(y(below) - y(above), 1), 1),  # a few tokens still show
                    fill=colours[part["model"]],
                    class_="bar",
                )
            )
            below = above
        if i % every == 0:
            centre = round(LEFT + (i + 0.5) * slot, 1)
            parts.append(
                tag(
                    "text",
                    row["period"],
                    x=centre,
                    y=H - PAD + 16,
                    class_="label",
                    text_anchor="middle",
                )
            )
    parts.append(tag("text", "day", x=W - PAD, y=H - 6, class_="label", text_anchor="end"))
    return drawing(join(parts), W, H, "chart")


def _legend(colours: Mapping[str, str]) -> Markup:
    items = (
        tag(
            "li",
            Markup(
                drawing(tag("rect", "", width=12, height=12, fill=colour), 12, 12, "swatch")
                + esc(" " + model)
            ),
        )
        for model, colour in colours.items()
    )
    return tag("ul", join(items), class_="legend models")


def _table(data: dict[str, Any]) -> Markup:
    def cells(label: object, row: Mapping[str, Any], models: object) -> Markup:
        counts = [f"{row[k]:,}" for k in (*COUNTS, "total_tokens")]
        values = [label, models, *counts, _price(row)]
        return join(tag("td", v, class_="num" if 1 < i < 7 else None) for i, v in enumerate(values))

    head = tag("tr", join(tag("th", h) for h in HEAD))
    body = join(tag("tr", cells(r["period"], r, ", ".join(r["models"]))) for r in data["rows"])
    foot = tag("tr", cells(tag("b", "Total"), data["total"], ""))
    return tag(
        "table",
        Markup(tag("thead", head) + tag("tbody", body) + tag("tfoot", foot)),
        class_="usage",
    )


def _form(data: dict[str, Any]) -> Markup:
    dates = join(
        tag(
            "label",
            Markup(esc(f"{name} ") + void("input", type="date", name=name, value=data[name] or "")),
        )
        for name in ("since", "until")
    )
    tools = join(
        tag(
            "label",
            Markup(
                void(
                    "input",
                    type="checkbox",
                    name="tool",
                    value=t,
                    checked="checked" if t in data["tools"] else None,
                )
                + esc(" " + t)
            ),
        )
        for t in TOOLS
    )
    button = tag("button", "Filter", type="submit")
    return tag(
        "form", Markup(dates + tools + button), method="get", action="/usage", class_="filters"
    )


def page(store: Store, query: Query, prices: Mapping[str, Price]) -> Markup:
    data = api(store, query, prices)
    note = tag(
        "p",
        "Tokens as the providers reported them, each API call counted once, days in the "
        "server's time zone; costs from jp's price table and your [usage.prices] "
        "(jp usage --by day gives the same figures).",
        class_="legend",
    )
    if not data["rows"]:
        body = Markup(_form(data) + tag("p", "No usage recorded here.") + note)
        return layout("Usage", body)
    colours = _colours(data["rows"])
    figure = tag("div", svg(data["rows"], colours), class_="figure")
    body = Markup(_form(data) + figure + _legend(colours) + _table(data) + note)
    return layout("Usage", body)
