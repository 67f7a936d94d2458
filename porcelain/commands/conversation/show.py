"""`jp conversation show`."""

from __future__ import annotations

from typing import Any

import click

from porcelain.commands.context import App
from porcelain.domain.origins import origin_rows
from porcelain.render.output import untrusted_field


@click.command()
@click.argument("targets", nargs=-1)
@click.pass_obj
def show(app: App, targets: tuple[str, ...]) -> None:
    """Details of conversations (default: the active one); archived ids work too."""
    from porcelain.app.describe import details
    from porcelain.app.targets import active_id, resolve

    store = app.store()
    active = active_id(store)
    infos = []
    for target in targets or (None,):
        loc = resolve(store, target)
        infos.append(details(store, store.load(loc.cid), active))
    if app.output.json:
        app.output.data(infos[0] if len(infos) == 1 else infos)
        return
    for i, info in enumerate(infos):
        if i:
            app.output.line()
        for line in render(info):
            app.output.line(line)


def render(info: dict[str, Any]) -> list[str]:
    rows = [("ID", info["id"])]
    if info["title"]:
        rows.append(("Title", info["title"]))
    rows += [("Turns", str(info["turns"])), ("Events", str(info["events"]))]
    if info["last_event_at"]:
        rows.append(("Latest event", info["last_event_at"]))
    state = "archived" if info["archived"] else ("active" if info["active"] else "live")
    rows.append(("State", state + (", pinned" if info["pinned"] else "")))
    if info["labels"]:
        rows.append(
            ("Labels", ", ".join(f"{k}={v}" if v else k for k, v in info["labels"].items()))
        )
    if info["source_id"]:
        rows.append(("Reviews", info["source_id"]))
    rows += origin_rows(info)
    lines = [f"{k + ':':<14}{untrusted_field(v)}" for k, v in rows]
    if info["compactions"]:
        lines.append("Compactions:")
        for n, item in enumerate(info["compactions"], 1):
            lines.append(f"  {n}. {describe_json_overlay(item)}")
    if info["source_id"]:
        proposal = info.get("proposal")
        if proposal is None:
            lines.append("Proposal:     none yet")
        else:
            lines.append("Proposal:     " + describe_json_overlay(proposal))
            if proposal.get("summary"):
                lines += ["", *("  " + ln for ln in str(proposal["summary"]).splitlines())]
    return lines


def describe_json_overlay(item: dict[str, Any]) -> str:
    """`turns 2..8 (7 total, reasoning + tools)` from a show/proposal JSON item."""
    a, b = item["from_turn"], item["to_turn"]
    parts = []
    if item.get("summary"):
        parts.append("summary")
    else:
        if item.get("reasoning"):
            parts.append("reasoning")
        tools = item.get("tool_calls")
        if tools:
            parts.append({"strip": "tools", "omit": "tools omitted"}.get(tools, tools))
    label = ", " + " + ".join(parts) if parts else ""
    return f"turns {a}..{b} ({b - a + 1} total{label})"
