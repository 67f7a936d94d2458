"""`jp conversation print`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from gitstore import Kind, turns
from porcelain.app.targets import resolve
from porcelain.commands.context import App
from porcelain.render.transcripts import transcript

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gitstore import Event


@click.command("print")
@click.argument("target", required=False)
@click.option(
    "--compacted", is_flag=True, help="Print what the model is sent (compactions applied)."
)
@click.option(
    "-s",
    "--style",
    type=click.Choice(["user", "chat", "brief", "full"]),
    default="brief",
    show_default=True,
    help="How much of each turn to show.",
)
@click.option("--first", type=click.IntRange(min=0), help="Only the first N turns.")
@click.option("--last", type=click.IntRange(min=0), help="Only the last N turns.")
@click.option("--no-pager", is_flag=True, help="Never page (long output on a terminal is paged).")
@click.option(
    "--no-render",
    is_flag=True,
    help="Show answers as the model wrote them (on a terminal they are rendered as Markdown).",
)
@click.pass_obj
def print_(
    app: App,
    target: str | None,
    compacted: bool,
    style: str,
    first: int | None,
    last: int | None,
    no_pager: bool,
    no_render: bool,
) -> None:
    """Print a conversation's history (archived ids work too).

    Turn numbers are 1-based.  A compaction review shows `[turn N]` markers on
    the turns it inherited from its source.
    """
    store = app.store()
    conv = store.log.load(resolve(store, target).cid)
    headers = None
    if compacted:
        # lazy: `print` of a plain conversation loads no view module
        from porcelain.domain.view import projected_with_headers

        events, headers = projected_with_headers(conv.events)
    elif _maybe_review(conv.events):
        # lazy: `print` of a plain conversation loads no view module
        from porcelain.domain.view import raw_with_markers

        events = raw_with_markers(conv.events)
    else:
        events = list(conv.events)
    count = turns.turn_count(events)
    keep = None
    if first is not None or last is not None:
        keep = set(range(min(first or 0, count))) | set(range(count - min(last or 0, count), count))
    if app.output.emit_json({"id": conv.cid, "compacted": compacted, "events": events}):
        return
    # lazy: the pager (subprocess) loads only for text output
    from porcelain.render.pager import show_lines

    markdown = None
    if not no_render and app.output.colours():
        # lazy: only answers shown on a terminal load the Markdown renderer
        from porcelain.render.mdstream import render_answer

        markdown = render_answer
    lines = transcript(events, style, headers=headers, keep=keep, markdown=markdown)
    show_lines(app.output, lines, not no_pager, styled=markdown is not None)


def _maybe_review(events: Sequence[Event]) -> bool:
    """Whether a review's creation event may be here (only a review has `[turn N]` markers).

    A cheap test that spares a plain conversation's `print` loading the view, compaction
    and review modules; `porcelain.domain.review.markers.review_record` decides.
    """
    return any(e.get("type") == Kind.CONVERSATION_START and "review" in e for e in events)
