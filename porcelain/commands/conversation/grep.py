"""`jp conversation grep`: search the raw events of conversations."""

from __future__ import annotations

import re
from typing import Any

import click

from gitstore import Located, Store, errors
from gitstore import ids as store_ids
from porcelain.app.search import (
    SCOPES,
    candidates,
    chain_hits,
    compile_pattern,
    indexed,
    searched,
)
from porcelain.app.targets import resolve
from porcelain.commands.context import App
from porcelain.domain.grephits import grouped_lines, merge_hits, plain_lines
from porcelain.errors import UsageError
from porcelain.render import lsview
from porcelain.render.output import untrusted_field


@click.command()
@click.argument("pattern", nargs=-1, required=True)
@click.option(
    "--id", "targets", multiple=True, metavar="ID", help="Search only these (repeatable)."
)
@click.option("-i", "--ignore-case", "case", flag_value="ignore", help="Ignore case.")
@click.option("--case-sensitive", "case", flag_value="exact", help="Match case exactly.")
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
@click.option(
    "-l",
    "--files-with-matches",
    "names_only",
    is_flag=True,
    help="Print only the ids of the conversations that match, one per line.",
)
@click.option(
    "-C",
    "--context",
    "context",
    type=click.IntRange(0, 100),
    default=0,
    metavar="N",
    help="Show N lines of the same message before and after each matching line.",
)
@click.option(
    "--heading/--no-heading",
    "heading",
    default=None,
    help="Group hits under each conversation and turn (default: on a terminal).",
)
@click.option(
    "--scan",
    is_flag=True,
    help="Read every conversation, without narrowing by the cache's index (same hits, slower).",
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
    case: str | None,
    names_only: bool,
    context: int,
    heading: bool | None,
    scan: bool,
) -> None:
    """Search events; prints ID:TURN:SCOPE:TEXT lines (exit 1 when nothing matches).

    Smart case: case-insensitive unless PATTERN has an upper-case letter
    (-i ignores case always, --case-sensitive never).  An event that several
    conversations share (a source, its forks, its review) is one hit whose ID
    field names them all, comma-separated, the oldest first.  On a terminal
    (or with --heading) hits are grouped under their conversation and turn;
    -C N adds the lines around each hit (`ID-TURN-SCOPE-TEXT` off a terminal,
    as grep marks context), -l prints only the conversations' ids.

    The cache's full-text index picks the conversations to read (those whose
    text holds the strings PATTERN requires); the hits are the same as
    --scan, which reads every conversation.
    """
    text = " ".join(pattern)
    try:
        matcher = compile_pattern(text, regex, case)
    except re.error as exc:
        raise UsageError(f"invalid pattern {text!r}: {exc}") from None
    store = app.store()
    # the index narrows (from the listing's kept rows when it can); the events decide
    located = None if targets or scan else indexed(store, matcher, archived, reviews, lsview.rank)
    if located is None:
        located = candidates(store, _searched(store, targets, archived, reviews), matcher, scan)
    wanted = scopes or tuple(SCOPES)
    found: list[tuple[str, str, dict[str, object]]] = []
    if len(located) > 1:
        store.log.prefetch([loc.tip for loc in located])  # chains not yet cached, in one pass
    for loc in located:
        try:
            events, commits = store.log.read_chain(loc.tip)
        except errors.CorruptEvent as exc:  # one broken chain never stops the search of the others
            app.output.note(f"warning: {loc.cid} cannot be read: {exc.reason}")
            continue
        for commit, hit in chain_hits(events, commits, wanted, matcher, context):
            found.append((loc.cid, commit, hit))
    hits = merge_hits(found, store_ids.created_at)
    if names_only:
        ids = list(dict.fromkeys(cid for hit in hits for cid in hit["ids"]))
        app.output.emit(ids, ids)
    elif heading or (heading is None and app.output.is_terminal()):
        app.output.emit(hits, lambda: app.output.lines(grouped_lines(hits, _titles(store, hits))))
    else:
        app.output.emit(hits, [line for hit in hits for line in plain_lines(hit, context > 0)])
    if not hits:
        raise click.exceptions.Exit(1)


def _searched(
    store: Store, targets: tuple[str, ...], archived: bool, reviews: bool
) -> list[Located]:
    """The conversations to search: the ones named, else ``searched``'s."""
    if targets:
        return [resolve(store, t) for t in targets]
    return searched(store, archived, reviews)


def _titles(store: Store, hits: list[dict[str, Any]]) -> dict[str, str]:
    titles = {cid: store.notes.meta(cid).get("title") for cid in {h["id"] for h in hits}}
    return {cid: untrusted_field(title) if title else "" for cid, title in titles.items()}
