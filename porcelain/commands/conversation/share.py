"""`jp conversation share`: a conversation as one HTML page, its secrets redacted."""

from __future__ import annotations

from pathlib import Path

import click

from gitstore import write_atomic
from porcelain.app.redaction import redacted_copy
from porcelain.app.secretcheck import kinds_line
from porcelain.app.targets import resolve
from porcelain.commands.context import App
from porcelain.domain.secretevents import redact_text


@click.command()
@click.argument("target", required=False)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
    help="The HTML file to write (replaced if it exists).",
)  # fmt: skip
@click.pass_obj
def share(app: App, target: str | None, output: Path) -> None:
    """Write a conversation as one self-contained HTML page (default: the active one).

    The page is the web view's transcript (`jp serve`): Markdown rendered,
    reasoning and tool calls folded, its stylesheet inline, and nothing loaded
    from anywhere when it is opened.  Every secret the scanner finds is replaced
    by `[redacted: KIND]` in the page (the conversation itself is unchanged;
    docs/security.md says what the scanner does not catch: read the page before
    you send it).
    """
    store = app.store()
    where = resolve(store, target)
    conversation = store.log.load(where.cid)
    events, counts = redacted_copy(where.cid, list(conversation.events))
    title = redact_text(str(store.notes.meta(where.cid).get("title") or "(untitled)"))
    # lazy: the page modules and pygments load only for a share
    from porcelain.serve.share import page

    note = f"{sum(counts.values())} secret(s) redacted." if counts else "No secret found."
    write_atomic(output, page(title, where.cid, events, note))
    app.output.emit(
        {"id": where.cid, "output": str(output), "redacted": dict(sorted(counts.items()))},
        f"Wrote {output}" + (f" ({kinds_line(counts)} redacted)" if counts else ""),
    )
