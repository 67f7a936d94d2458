"""`jp status`: which store, which remotes, the active conversation, what is pending."""

from __future__ import annotations

from typing import Any

import click

from porcelain.commands.context import App
from porcelain.render.output import untrusted_field

PENDING = ("journal", "oplog", "lock", "quarantine")


@click.command()
@click.pass_obj
def status(app: App) -> None:
    """Where jp is working: the store (and what chose it), its remotes, the active
    conversation and the model a query would use, an open compaction review (with
    the commands that go on with it or end it), and anything pending (an
    unfinished ref update or operation record, a stale lock, a quarantined ref),
    with the command that deals with it.  Reads only; changes nothing."""
    # lazy: the store's modules load only for commands that read it
    from gitstore import doctor
    from gitstore import remotes as store_remotes
    from porcelain.app.hookinstall import TOOLS, state
    from porcelain.app.targets import active_id
    from porcelain.domain.defaults import default_model
    from porcelain.domain.review.state import every_open_review

    path, chosen = app.chosen_store()
    report: dict[str, Any] = {"store": str(path), "store_from": chosen or "the default"}
    report["hooks"] = [state(tool, app.environ) for tool in TOOLS]
    if not path.exists():
        report.update(exists=False)
        _show(app, report)
        return
    store = app.store()
    active = active_id(store)
    config = app.config(warn=False)
    findings = [f for f in doctor.examine(store, fsck=False) if f.check in PENDING]
    report.update(
        exists=True,
        remotes=[{"name": r.name, "url": r.url} for r in store_remotes.listing(store)],
        active=active,
        active_title=(store.notes.meta(active).get("title") if active else None),
        model=config.model_id() or default_model(app.has_api_key()),
        pending=[f.to_json() for f in findings],
        reviews=[
            {"id": rid, "source_id": source, "active": rid == active}
            for rid, source in every_open_review(store)
        ],
    )
    _show(app, report)


def _show(app: App, report: dict[str, Any]) -> None:
    if app.output.emit_json(report):
        return
    lines = [f"Store:   {report['store']} (from {report['store_from']})"]
    if not report["exists"]:
        app.output.lines([*lines, "         not created yet: `jp init` makes it", _hooks(report)])
        return
    remotes = report["remotes"]
    lines.append(
        "Remotes: " + ", ".join(f"{r['name']} {untrusted_field(r['url'])}" for r in remotes)
        if remotes
        else "Remotes: none (add one: `jp remote add NAME URL`)"
    )
    active, title = report["active"], report["active_title"]
    if active:
        suffix = f": {untrusted_field(title)}" if title else ""
        lines.append(f"Active:  {active}{suffix}")
    else:
        lines.append("Active:  none (`jp q --new TEXT` starts one)")
    lines.append(f"Model:   {report['model']}")
    for review in report["reviews"]:
        lines.extend(_review_lines(review))
    pending = report["pending"]
    if not pending:
        lines.append("Pending: nothing")
    else:
        lines.append(f"Pending: {len(pending)}")
        for item in pending:
            lines.append(f"  - {item['problem']}")
            lines.append(f"    {item['fix']}")
    app.output.lines([*lines, _hooks(report)])


def _hooks(report: dict[str, Any]) -> str:
    """Which tools import their sessions into the store as they stop."""
    parts = []
    for found in report["hooks"]:
        tool, how = found["tool"], found["installed"]
        if "problem" in found:
            parts.append(f"{tool} unknown ({untrusted_field(found['problem'])})")
        elif how == "jp":
            parts.append(f"{tool} installed ({untrusted_field(found['file'])})")
        elif how:
            parts.append(f"{tool} {how}")
        else:
            parts.append(f"{tool} none (`jp hooks install {tool}`)")
    return "Hooks:   " + ", ".join(parts)


def _review_lines(review: dict[str, Any]) -> list[str]:
    """An open review, as git names a rebase in progress, with what to run next."""
    rid, source = review["id"], untrusted_field(review["source_id"])  # a note's text
    where = "active" if review["active"] else f"not active: `jp conversation use {rid}` first"
    return [
        f"Review:  {rid} is a compaction review of {source}, still open ({where})",
        '         discuss it: `jp q "..."`; apply it: `jp conversation compact --continue`;',
        "         end it, source untouched: `jp conversation compact --abort`",
    ]
