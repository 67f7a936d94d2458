"""``/c/ID/tree``: the conversation's family — the one it descends from, its forks,
reviews and divergences — drawn by jp as an SVG, each node a link to its
conversation and the fork point a link to the commit it forked at."""

from __future__ import annotations

from typing import Any

from gitstore import Store
from porcelain.app.describe import listing, summaries
from porcelain.app.targets import active_id
from porcelain.domain.titles import cut
from porcelain.render.lsview import title_of
from porcelain.serve.html import Markup, esc, join, link, tag
from porcelain.serve.html import page as layout
from porcelain.serve.html import svg as drawing
from porcelain.serve.pages.common import (
    load,
    masked,
    relation,
    secrets_toggle,
    short_commit,
    tabs,
    title,
)
from porcelain.serve.routes import Query

ROW, COLUMN, WIDTH, HEIGHT = 56, 220, 200, 40


def _parent(row: dict[str, Any]) -> tuple[str | None, str]:
    parent, kind, _label = relation(row)
    return parent, kind


def api(store: Store, query: Query, cid: str) -> dict[str, Any]:
    """``{id, root, nodes: [{id, title, kind, parent, depth, turns, fork_commit}]}``,
    depth first from the root; secrets in titles masked unless ``?secrets=1``."""
    return masked(_family(store, cid), query)[0]


def _family(store: Store, cid: str) -> dict[str, Any]:
    load(store, cid)
    located = store.refs.list(archived=None)
    rows = {r["id"]: r for r in listing(store, located, active_id(store))}
    facts = summaries(store, located)
    commit = {loc.cid: facts[loc.tip].get("fork_commit") for loc in located}
    root, seen = cid, {cid}
    up = _parent(rows[root])[0]
    while up is not None and up in rows and up not in seen:
        root = up
        seen.add(up)
        up = _parent(rows[root])[0]
    children: dict[str, list[str]] = {}
    for r in rows.values():
        parent = _parent(r)[0]
        if parent is not None:
            children.setdefault(parent, []).append(r["id"])
    nodes: list[dict[str, Any]] = []
    stack, placed = [(root, 0)], set()
    while stack:
        node, depth = stack.pop()
        if node in placed:
            continue
        placed.add(node)
        r = rows[node]
        parent, kind, label = relation(r) if node != root else (None, "root", "root")
        nodes.append(
            {
                "id": node,
                "title": title_of(r),
                "kind": kind,
                "label": label,
                "parent": parent,
                "depth": depth,
                "turns": r["turns"],
                "archived": r["archived"],
                "fork_commit": commit.get(node) if kind in ("fork", "rewind") else None,
            }
        )
        stack += [(c, depth + 1) for c in sorted(children.get(node, []), reverse=True)]
    return {"id": cid, "root": root, "nodes": nodes}


def svg(tree: dict[str, Any]) -> Markup:
    """The family as boxes in rows (depth first), joined to their parents."""
    where = {n["id"]: (i, n["depth"]) for i, n in enumerate(tree["nodes"])}
    edges, boxes = [], []
    for i, n in enumerate(tree["nodes"]):
        x, y = 10 + n["depth"] * COLUMN, 10 + i * ROW
        if n["parent"] in where:
            pi, pd = where[n["parent"]]
            px, py = 10 + pd * COLUMN + 20, 10 + pi * ROW + HEIGHT
            edges.append(
                tag("path", "", d=f"M{px},{py} V{y + HEIGHT / 2} H{x}", class_=f"edge {n['kind']}")
            )
            edges.append(
                tag("text", n["label"], x=px + 6, y=y + HEIGHT / 2 - 4, class_="edge-label")
            )
        current = " current" if n["id"] == tree["id"] else ""
        box = tag(
            "rect",
            "",
            x=x,
            y=y,
            width=WIDTH,
            height=HEIGHT,
            rx=6,
            class_=f"node {n['kind']}{current}",
        )
        name = cut(n["title"], 28)
        text = tag(
            "text",
            Markup(
                tag("tspan", name, x=x + 8, dy=16)
                + tag("tspan", f"{n['id']} · {n['turns']} turns", x=x + 8, dy=15, class_="meta")
            ),
            x=x + 8,
            y=y,
        )
        boxes.append(tag("a", Markup(box + text), href=f"/c/{n['id']}", class_="node-link"))
    width = 20 + (max((n["depth"] for n in tree["nodes"]), default=0)) * COLUMN + WIDTH
    height = 20 + len(tree["nodes"]) * ROW
    return drawing(Markup(join(edges) + join(boxes)), width, height, "tree")


def page(store: Store, query: Query, cid: str) -> Markup:
    tree, hidden = masked(_family(store, cid), query)
    rows = []
    for n in tree["nodes"]:
        point = Markup("")
        if n["fork_commit"] and n["parent"]:
            point = Markup(
                esc(" forked at ")
                + tag(
                    "a",
                    short_commit(n["fork_commit"]),
                    href=f"/c/{n['parent']}#e-{n['fork_commit']}",
                    class_="commit",
                )
            )
        rows.append(
            tag(
                "li",
                Markup(
                    link(f"/c/{n['id']}", n["title"]) + esc(f" ({n['label']}, {n['id']})") + point
                ),
            )
        )
    body = Markup(
        tabs(cid, "/tree")
        + secrets_toggle(f"/c/{cid}/tree", query, hidden)
        + tag("div", svg(tree), class_="figure")
        + tag("ul", join(rows), class_="nodes")
    )
    return layout(
        f"Tree of {title(store, cid, query)}",
        body,
        [("/", "Conversations"), (f"/c/{cid}", title(store, cid, query))],
    )
