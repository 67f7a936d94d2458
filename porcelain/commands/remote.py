"""`jp remote`: the git remotes conversations sync with."""

from __future__ import annotations

from pathlib import Path

import click  # noqa: TID251

from gitstore import remotes
from porcelain.commands.context import App


def _url(url: str, cwd: Path) -> str:
    """Local paths become absolute, so the remote works from any folder."""
    if "://" in url or url.startswith("git@"):
        return url
    path = Path(url).expanduser()
    if not path.is_absolute():
        path = cwd / path
    return str(path.resolve()) if path.exists() else url


class _Group(click.Group):
    ALIASES = {"ls": "list", "rm": "remove"}

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return super().get_command(ctx, self.ALIASES.get(name, name))


@click.group(cls=_Group)
def remote() -> None:
    """Name the git remotes conversations sync with (`jp push`, `jp pull`).

    A remote is any git URL: a path, ssh or https, with your own git
    credentials.  Conversations travel as refs/conversations/*,
    refs/archive/* and the notes refs refs/notes/meta and refs/notes/source
    (never other notes); what jp fetched is kept under
    refs/jp-remotes/<name>/, so `git branch -r` stays clean.
    """


@remote.command()
@click.argument("name")
@click.argument("url")
@click.pass_obj
def add(app: App, name: str, url: str) -> None:
    """Add remote NAME at URL (an existing one with that URL gets jp's refspecs).

    URL is a path, an scp-like `user@host:path`, or an ssh, https or file URL;
    one that makes git run a command (`ext::`, `fd::`, any `helper::`) is
    refused.  A password in the URL is kept for git but never shown.
    """
    remotes.check_url(name, url)  # before a path is resolved: '' is not the current folder
    store = app.store()
    url = _url(url, app.cwd)
    result = remotes.add(store, name, url)
    shown = remotes.redact_url(url)
    app.output.emit({"name": name, "url": shown, "result": result}, _added(name, result))


def _added(name: str, result: str) -> str:
    if result == "created":
        return f"Remote {name} added; send conversations with `jp push {name}`."
    if result == "configured":
        return (
            f"Remote {name} now also fetches conversations; "
            f"send them there only by name: `jp push {name}`."
        )
    if result == "updated":
        return f"Remote {name} now syncs jp's own notes only (not refs/notes/*)."
    return f"Remote {name} is already set up."


@remote.command()
@click.argument("name")
@click.pass_obj
def remove(app: App, name: str) -> None:
    """Forget remote NAME and what was fetched from it.

    Local conversations, archived ones and their notes stay as they are, and
    nothing on the remote changes.  A remote jp did not make (a project's code
    remote) keeps its own settings: only jp's refspecs go.
    """
    result = remotes.remove(app.store(), name)
    if result == "removed":
        text = f"Remote {name} removed."
    elif result == "copies-removed":
        text = f"Remote {name} was already gone; removed what jp had fetched from it."
    else:
        text = f"Remote {name} no longer syncs conversations (its own settings stay)."
    app.output.emit({"name": name, "result": result}, text)


@remote.command(name="list")
@click.pass_obj
def list_(app: App) -> None:
    """List remotes."""
    found = remotes.listing(app.store())

    def text() -> None:
        if not found:
            app.output.note("No remotes. Add one with `jp remote add NAME URL`.")
        for r in found:
            extra = "" if r.configured else "  (pull and push pass jp's refspecs explicitly)"
            app.output.line(f"{r.name}\t{remotes.redact_url(r.url)}{extra}")

    app.output.emit(
        [{"name": r.name, "url": remotes.redact_url(r.url), "conversations": r.configured} for r in found],
        text,
    )
