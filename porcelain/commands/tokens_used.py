"""`jp usage`: tokens and cost of every session (Claude Code, Codex, jp), counted once.

(``usage.py`` beside it is click's usage errors; this is the `usage` command.)
"""

from __future__ import annotations

import shutil
from datetime import date

import click

from porcelain.commands.context import App


def _day(ctx: click.Context, param: click.Parameter, value: str | None) -> date | None:
    if value is None:
        return None
    from porcelain.domain.usage_report import parse_day  # lazy: only a date given

    try:
        return parse_day(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command()
@click.argument("ids", nargs=-1)
@click.option(
    "--by",
    type=click.Choice(["day", "week", "month", "session", "model", "project"]),
    default="day",
    show_default=True,
    help="One row per local day, week (from Monday), month, session, model or project.",
)
@click.option("--since", callback=_day, metavar="DATE", help="From this local date (YYYY-MM-DD).")
@click.option("--until", callback=_day, metavar="DATE", help="To this local date, inclusive.")
@click.option(
    "--tool",
    "tools",
    multiple=True,
    type=click.Choice(["claude-code", "codex", "jp"]),
    help="Only what this tool spent (repeat for more).",
)
@click.pass_obj
def usage(
    app: App,
    ids: tuple[str, ...],
    by: str,
    since: date | None,
    until: date | None,
    tools: tuple[str, ...],
) -> None:
    """Tokens and cost of every conversation in the store (default), or of IDS.

    Counts what the providers reported: Claude Code's records, Codex's token
    counts, jp's own answers and compactions; one API message split over
    several records, a fork, a subagent stream and a session imported on two
    machines count once (docs/usage.md).  Days are local (TZ).  The cost comes
    from jp's price table and your [usage.prices."MODEL"]; a model without a
    price shows its tokens and a cost of `?` (null in JSON).  Reads only.
    """
    # lazy: the store and the counting modules load only when the command runs
    from porcelain.app.targets import resolve
    from porcelain.app.usage import prices, summary
    from porcelain.render.progress import ReadProgress
    from porcelain.render.usageview import table

    if since and until and since > until:
        raise click.BadParameter(f"--since {since} is after --until {until}")
    priced = prices(app.environ)
    store = app.store()
    only = [resolve(store, target) for target in ids] if ids else None
    progress = ReadProgress(app.output, "usage")
    read = progress.counting("read", "conversations")
    result = summary(store, by, priced, since, until, tools, only, read)
    progress.clear()

    def text() -> None:
        columns = shutil.get_terminal_size().columns if app.output.is_terminal() else None
        app.output.styled_lines(table(result, columns))

    app.output.emit(result["rows"], text)
