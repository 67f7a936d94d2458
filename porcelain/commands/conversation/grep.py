"""`jp conversation grep`: search the raw events of conversations."""

from __future__ import annotations

import re

import click

from porcelain.commands.context import App
from porcelain.errors import UsageError

SCOPES = {
    "user": ("chat_request", "content"),
    "assistant": ("chat_response", "message"),
    "reasoning": ("chat_response", "reasoning"),
    "tool-call": ("tool_call_request", "arguments"),
    "tool-result": ("tool_call_response", "content"),
}


@click.command()
@click.argument("pattern", nargs=-1, required=True)
@click.option("-i", "--id", "targets", multiple=True, metavar="ID", help="Search only these.")
@click.option("-r", "--regex", is_flag=True, help="PATTERN is a regular expression.")
@click.option("--archived", is_flag=True, help="Search archived conversations too.")
@click.option(
    "--reviews",
    is_flag=True,
    help="Include archived compaction reviews (left out by default: they repeat their source).",
)
@click.option(
    "-s",
    "--scope",
    "scopes",
    multiple=True,
    type=click.Choice(sorted(SCOPES)),
    help="Where to look (repeatable; default everywhere).",
)
@click.pass_obj
def grep(
    app: App,
    pattern: tuple[str, ...],
    targets: tuple[str, ...],
    regex: bool,
    archived: bool,
    reviews: bool,
    scopes: tuple[str, ...],
) -> None:
    """Search events; prints ID:TURN:SCOPE:TEXT lines (exit 1 when nothing matches).

    Smart case: case-insensitive unless PATTERN has an upper-case letter.
    """
    import json

    from gitstore import CorruptEvent, turn_indices
    from porcelain.app.targets import resolve

    text = " ".join(pattern)
    flags = 0 if any(c.isupper() for c in text) else re.IGNORECASE
    try:
        matcher = re.compile(text if regex else re.escape(text), flags)
    except re.error as exc:
        raise UsageError(f"invalid pattern {text!r}: {exc}") from None
    store = app.store()
    if targets:
        located = [resolve(store, t) for t in targets]
    else:
        located = store.refs(archived=None if archived else False)
        if not reviews:
            sources = store.sources()
            located = [
                loc for loc in located if not (loc.archived and store.anchor(loc.cid) in sources)
            ]
    wanted = scopes or tuple(SCOPES)
    hits = []
    if len(located) > 1:
        store.prefetch([loc.tip for loc in located])  # chains not yet cached, in one pass
    for loc in located:
        try:
            events, _ = store.read_chain(loc.tip)
        except CorruptEvent as exc:  # one broken chain never stops the search of the others
            app.output.note(f"warning: {loc.cid} cannot be read: {exc.reason}")
            continue
        for event, turn in zip(events, turn_indices(events), strict=True):
            for scope in wanted:
                kind, key = SCOPES[scope]
                if event.get("type") != kind or key not in event:
                    continue
                value = event[key]
                body = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                for line in body.splitlines():
                    if matcher.search(line):
                        hits.append({"id": loc.cid, "turn": turn + 1, "scope": scope, "text": line})
    if app.output.json:
        app.output.data(hits)
    else:
        for hit in hits:
            app.output.line(f"{hit['id']}:{hit['turn']}:{hit['scope']}:{hit['text']}")
    if not hits:
        raise click.exceptions.Exit(1)
