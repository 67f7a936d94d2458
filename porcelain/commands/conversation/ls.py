"""`jp conversation ls`."""

from __future__ import annotations

import click

from porcelain.commands.context import App


@click.command()
@click.option("--archived", is_flag=True, help="List archived conversations instead.")
@click.option("--all", "everything", is_flag=True, help="List live and archived conversations.")
@click.option("--reviews/--no-reviews", default=True, help="Include compaction reviews.")
@click.option("--limit", type=click.IntRange(min=1), help="Show only the last N rows.")
@click.pass_obj
def ls(app: App, archived: bool, everything: bool, reviews: bool, limit: int | None) -> None:
    """List conversations (oldest activity first, the active one last)."""
    from porcelain.app.describe import listing
    from porcelain.app.targets import active_id
    from porcelain.render.output import untrusted_field

    store = app.store()
    located = store.refs(archived=None if everything else archived)
    rows = listing(store, located, active_id(store))
    if not reviews:
        rows = [r for r in rows if r["source_id"] is None]
    hidden = 0
    if limit is not None and len(rows) > limit:
        hidden = len(rows) - limit
        rows = rows[-limit:]
    for r in rows:
        if r["unreadable"]:  # one broken chain never hides the others
            app.output.note(f"warning: {r['id']} cannot be read: {r['unreadable']}")
    if app.output.json:
        app.output.data(rows)
        return
    if not rows:
        what = "archived conversations" if archived else "conversations"
        app.output.line(f"No {what}." + ("" if archived else " Start one with `jp q --new TEXT`."))
        return
    if hidden:
        app.output.line(f"({hidden} hidden)")
    width = max(len(r["id"]) for r in rows)
    out = [f"{'ID':<{width}}  {'TURNS':>5}  {'EVENTS':>6}  TITLE"]
    for r in rows:
        mark = "*" if r["active"] else " "
        title = untrusted_field(r["title"] or r["preview"] or "")
        if r["unreadable"]:
            title = f"[unreadable] {title}".rstrip()
        if r["source_id"]:
            title = f"[review of {untrusted_field(r['source_id'])}] {title}"
        if r["archived"] and everything:
            title = f"[archived] {title}"
        out.append(f"{r['id']:<{width}}{mark} {r['turns']:>5}  {r['events']:>6}  {title}")
    app.output.lines(out)
