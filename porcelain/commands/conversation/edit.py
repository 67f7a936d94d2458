"""`jp conversation edit`: metadata lives in notes, not in the event chain."""

from __future__ import annotations

import re
from typing import Any

import click

from porcelain import clock
from porcelain.app.targets import resolve
from porcelain.commands.context import App
from porcelain.errors import UsageError

_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


@click.command()
@click.argument("targets", nargs=-1)
@click.option("--title", help="Set the title.")
@click.option("--no-title", is_flag=True, help="Remove the title.")
@click.option("--pin/--unpin", default=None, help="Pin or unpin.")
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="KEY[=VALUE]",
    help="Add a label (repeatable); `-KEY` removes one.",
)
@click.pass_obj
def edit(
    app: App,
    targets: tuple[str, ...],
    title: str | None,
    no_title: bool,
    pin: bool | None,
    labels: tuple[str, ...],
) -> None:
    """Change a conversation's title, pin or labels.

    Metadata is stored as git notes (refs/notes/meta; refs/notes/jp/meta in a
    project's repository), so editing it on one machine while chatting on
    another never makes the conversation diverge.
    """
    if title is None and not no_title and pin is None and not labels:
        raise UsageError("nothing to change", "give --title, --no-title, --pin, --unpin or --label")
    store = app.store()
    for target in targets or (None,):
        loc = resolve(store, target)
        values: dict[str, Any] = {}
        if title is not None or no_title:
            values["title"] = None if no_title else title
        if pin is not None:
            values["pinned_at"] = clock.now_text() if pin else None
        if labels:
            current = dict(store.notes.meta(loc.cid).get("labels") or {})
            values["labels"] = _apply_labels(current, labels) or None
        store.notes.set_meta(loc.cid, values, f"jp conversation edit {loc.cid}")
        app.output.text(f"Conversation {loc.cid} updated.")
    app.output.emit({"updated": list(targets)})


def _apply_labels(current: dict[str, str], labels: tuple[str, ...]) -> dict[str, str]:
    for item in labels:
        remove = item.startswith("-")
        key, _, value = item.lstrip("-").partition("=")
        if not _LABEL.match(key):
            raise UsageError(f"invalid label name {key!r}", "labels look like key or key=value")
        if remove:
            current.pop(key, None)
        else:
            current[key] = value
    return current
