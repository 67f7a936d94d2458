"""`jp conversation ls`."""

from __future__ import annotations

import shutil
from datetime import datetime
from typing import Any

import click

from gitstore import Store
from porcelain import clock
from porcelain.app import listed
from porcelain.app.describe import listing
from porcelain.app.targets import active_id
from porcelain.commands.context import App
from porcelain.domain import idprefix
from porcelain.domain.idprefix import unique_lengths
from porcelain.render import lsview


@click.command()
@click.option("--archived", is_flag=True, help="List archived conversations instead.")
@click.option("--all", "everything", is_flag=True, help="List live and archived conversations.")
@click.option("--reviews/--no-reviews", default=True, help="Include compaction reviews.")
@click.option(
    "--imported",
    type=click.Choice(["claude-code", "codex"]),
    help="Only sessions imported from this tool (with --all, their subagents too).",
)
@click.option("--pinned", is_flag=True, help="Only pinned conversations.")
@click.option(
    "--label", "labels", multiple=True, metavar="KEY[=VALUE]", help="Only with this label (AND)."
)
@click.option("--title", metavar="TEXT", help="Only titles holding TEXT (any case).")
@click.option("--since", metavar="WHEN", help="Only active since WHEN: 3d, 12h, 2026-01-05.")
@click.option(
    "--sort",
    type=click.Choice(["activity", "created", "id", "turns", "title"]),
    default="activity",
    show_default=True,
    help="Sort key (activity: pinned, then the active one, last).",
)
@click.option("-r", "--reverse", is_flag=True, help="Reverse the order.")
@click.option("--limit", type=click.IntRange(min=1), help="Show only the last N rows.")
@click.pass_obj
def ls(
    app: App,
    archived: bool,
    everything: bool,
    reviews: bool,
    imported: str | None,
    pinned: bool,
    labels: tuple[str, ...],
    title: str | None,
    since: str | None,
    sort: str,
    reverse: bool,
    limit: int | None,
) -> None:
    """List conversations (oldest activity first, the active one last, marked *).

    `--all` also lists archived conversations and the subagent streams and
    rewind branches of imported Claude Code sessions.

    The highlighted start of each id is its shortest unique prefix: any
    command takes it in place of the whole id.  An imported session's id
    ends in hex digits: where the start of those is shorter to type, it is
    highlighted instead (its handle, `jp c show 3fa9`; `handle` in -F json).
    """
    now = clock.now()
    wanted = [lsview.parse_label(spec) for spec in labels]
    after = lsview.parse_since(since, now) if since else None
    store = app.store()
    quick = sort == "activity" and not (reverse or pinned or labels or title or since or imported)
    found = _limited(store, archived, everything, reviews, limit) if quick and limit else None
    if found is not None:
        rows, hidden, unique = found
    else:
        every = store.refs.list(archived=None)
        located = [loc for loc in every if everything or loc.archived == archived]
        rows = listing(store, located, active_id(store))
        if not reviews:
            rows = [r for r in rows if r["source_id"] is None]
        rows = lsview.keep_imported(rows, imported, agents=everything)
        rows = lsview.keep(rows, pinned=pinned, labels=wanted, title=title, since=after)
        rows = lsview.order(rows, sort, reverse)
        unique = unique_lengths(loc.cid for loc in every)
        hidden = 0
        if limit is not None and len(rows) > limit:
            hidden = len(rows) - limit
            rows = rows[-limit:]
    marks = _handles(store, rows)
    for r in rows:
        r["short_id"] = r["id"][: unique.get(r["id"], len(r["id"]))]
        r["handle"] = marks.get(r["id"])
    for r in rows:
        if r["unreadable"]:  # one broken chain never hides the others
            app.output.note(f"warning: {r['id']} cannot be read: {r['unreadable']}")
    filtered = bool(pinned or labels or title or since)
    if not app.output.emit_json(rows):
        _show(app, rows, (hidden, unique, now), archived, everything, filtered)


def _show(
    app: App,
    rows: list[dict[str, Any]],
    shown: tuple[int, dict[str, int], datetime],
    archived: bool,
    everything: bool,
    filtered: bool,
) -> None:
    """The table of `ls` (or the line that says there is nothing to list); ``shown``:
    how many rows were left out, each id's unique prefix length, the time now."""
    hidden, unique, now = shown
    if not rows:
        what = "archived conversations" if archived else "conversations"
        hint = "" if archived or filtered else " Start one with `jp q --new TEXT`."
        app.output.line(f"No {what}{' match' if filtered else ''}." + hint)
        return
    if hidden:
        app.output.line(f"({hidden} hidden)")
    style = lsview.highlighted if app.output.colours() else lsview.plain
    columns = shutil.get_terminal_size().columns if app.output.is_terminal() else None
    text = lsview.table(rows, unique, now, style=style, show_archived=everything, columns=columns)
    app.output.styled_lines(text)


def _handles(store: Store, rows: list[dict[str, Any]]) -> dict[str, str]:
    """Imported sessions' handles among every id (the refs listed only when a row
    shown is an imported session's)."""
    if not any(idprefix.suffix(r["id"]) for r in rows):
        return {}
    return idprefix.handles(loc.cid for loc in store.refs.list(archived=None))


def _limited(
    store: Store, archived: bool, everything: bool, reviews: bool, limit: int
) -> tuple[list[dict[str, Any]], int, dict[str, int]] | None:
    """The last ``limit`` rows of the default order from the cache's ordered listing:
    what they cost is what they show (None: the cache cannot answer)."""
    which = (False, True) if everything else (archived,)
    hide = (0 if everything else listed.AGENT) | (0 if reviews else listed.REVIEW)
    found = listed.recent(store, lsview.rank, which, hide, limit, active_id(store))
    if found is None:
        return None
    rows, total = found
    return rows, total - len(rows), listed.shortest(store, rows)
