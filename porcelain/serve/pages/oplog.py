"""``/ops``: the operation log (`jp op log`), newest first, with the refs each moved."""

from __future__ import annotations

from typing import Any

from gitstore import Store
from porcelain.render import opshow
from porcelain.serve.html import Markup, join, tag
from porcelain.serve.html import page as layout
from porcelain.serve.pages.common import masked
from porcelain.serve.routes import Query, number

LIMIT = 200


def api(store: Store, query: Query) -> list[dict[str, Any]]:
    """`jp op log -F json` (``?limit=N``, default 200); secrets in the commands as
    typed (`jp conversation edit --title ...`) masked unless ``?secrets=1``."""
    ops = [opshow.as_json(o) for o in store.ops.list(number(query, "limit", LIMIT))]
    return masked(ops, query)[0]


def page(store: Store, query: Query) -> Markup:
    items = []
    for op in api(store, query):
        moves = join(
            tag("li", f"{m['ref']}: {opshow.value(m['old'])} -> {opshow.value(m['new'])}")
            for m in op["refs"]
        )
        head = tag(
            "div",
            Markup(
                tag("code", op["id"][: opshow.SHORT])
                + tag("span", f" {op['time']} ", class_="when")
                + tag("kbd", op["command"])
            ),
        )
        items.append(tag("li", Markup(head + tag("ul", moves, class_="moves")), class_="op"))
    body = tag("ol", join(items), class_="ops") if items else tag("p", "No operations yet.")
    return layout("Operation log", body)
