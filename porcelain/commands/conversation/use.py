"""`jp conversation use`."""

from __future__ import annotations

import sys

import click

from gitstore import Located, Store, activity
from porcelain.app.targets import active_id, resolve, resolve_or_search
from porcelain.commands.context import App
from porcelain.render.output import untrusted_field

PICKER_ROWS = 20


@click.command()
@click.argument("target", required=False)
@click.pass_obj
def use(app: App, target: str | None) -> None:
    """Make a conversation the active one (an archived one is restored first).

    TARGET is an id (any unique prefix, `jp-c` optional), a keyword, `@N`
    (the N-th most recently active: `@1`, `@2`...), `-` for the conversation
    that was active before this one (as `cd -`), or words of a title (one
    conversation must match).  With no TARGET on a terminal, pick one from the
    most recent conversations (by number, id, handle or title words).
    """
    # lazy: only `use` needs the previous-activation lookup
    from porcelain.app.previous import previous_id
    from porcelain.errors import UsageError

    store = app.store()
    before = active_id(store)
    if target is None:
        if not (sys.stdin.isatty() and sys.stdout.isatty()) or app.output.json:
            raise UsageError(
                "which conversation? `use` needs a target",
                "name one: `jp conversation use ID` (ids and prefixes in `jp conversation ls`), "
                "`use recent`, or `use -` for the previous one",
            )
        target = _pick(app, store, before)
        if target is None:
            app.output.note(f"Nothing chosen; the active conversation stays {before or '(none)'}.")
            return
    loc = (
        resolve(store, previous_id(store, before))
        if target == "-"
        else resolve_or_search(store, target)
    )
    if loc.archived:
        store.refs.unarchive(loc.cid, f"jp conversation use: unarchive {loc.cid}")
        app.output.note(f"Unarchived conversation {loc.cid}")
    store.refs.set_active(loc.cid)
    activity.record_activation(store, loc.cid)
    app.output.emit({"id": loc.cid, "previous": before}, lambda: _switched(app, store, loc, before))


def _switched(app: App, store: Store, loc: Located, before: str | None) -> None:
    if before == loc.cid:
        app.output.line(f"Already active conversation: {loc.cid}")
        return
    # lazy: the summary (from the cache) is read only to name the conversation
    from porcelain.app.describe import summaries
    from porcelain.domain.titles import shown_title

    facts = summaries(store, [loc])[loc.tip]
    title = shown_title(
        store.notes.meta(loc.cid).get("title"), facts.get("tool_title"), facts["first_request"]
    )
    suffix = f": {untrusted_field(title)}"
    app.output.line(f"Switched active conversation from {before or '(none)'} to {loc.cid}{suffix}")


def _pick(app: App, store: Store, active: str | None) -> str | None:
    """The conversation the person picks (its id, or what they typed in place of a
    number: an id, a prefix or a keyword); None when they pick nothing."""
    # lazy: only the picker lists conversations
    from porcelain import clock
    from porcelain.app import listed
    from porcelain.app.describe import listing
    from porcelain.errors import UsageError
    from porcelain.render import lsview

    # the last rows of the cache's ordered listing: what the picker costs is what it shows
    found = listed.recent(store, lsview.rank, (False,), 0, PICKER_ROWS, active)
    if found is not None:
        rows = found[0][::-1]
    else:
        live = list(store.refs.list(archived=False))
        rows = list(reversed(listing(store, live, active)))[:PICKER_ROWS]
    if not rows:
        raise UsageError("no conversation to use", "start one: `jp q --new TEXT`")
    app.output.note("Recent conversations (* is the active one):")
    app.output.note("\n".join(lsview.picker(rows, clock.now())))
    answer = app.output.ask(f"Use which? [1-{len(rows)}, an id, title words, or Enter for none]")
    if not answer:
        return None
    if answer.isdigit() and 1 <= int(answer) <= len(rows):
        return str(rows[int(answer) - 1]["id"])
    return answer  # an id or its prefix (a bare number beyond the list is one too)
