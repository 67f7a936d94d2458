"""`jp serve`: the store in a browser, read-only (docs/serve.md)."""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING

import click

from porcelain import clock
from porcelain.commands.context import App
from porcelain.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from gitstore import Conversation, Store
    from porcelain.domain.prices import Price


@click.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="The port to listen on (0: any free one).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on (0.0.0.0 or ::: every address, the URL naming this "
    "machine); one that is not loopback (127.0.0.0/8, ::1, localhost) needs --yes.",
)
@click.option(
    "--open",
    "open_browser",
    is_flag=True,
    help="Open the URL in a browser (through a private file: the token is on no command line).",
)
@click.option("--yes", is_flag=True, help="Listen on a --host that is not loopback.")
@click.pass_obj
def serve(app: App, port: int, host: str, open_browser: bool, yes: bool) -> None:
    """Show the store in a browser: conversations, their trees, compactions and
    reviews, sizes, what every session spent and the operation log (read-only;
    Ctrl-C stops it).

    Prints one URL; it carries a random token, and every request without it
    (or the cookie the first visit sets) is refused, so another user of this
    machine or a web page cannot read the store.  Each page re-reads the
    store; `/api/...` gives each page's JSON, in the shapes of `-F json`.
    """
    # lazy: the server, the pages and the Markdown renderer load only for `jp serve`
    from porcelain.serve.server import Site, is_loopback, make_server

    if not is_loopback(host.strip("[]")):
        if not (yes or app.yes):
            raise UserError(
                f"refusing to listen on {host}: it is not a loopback address, and anyone "
                "who reaches it with the URL reads every conversation",
                f"pass --yes to listen there anyway: `jp serve --host {host} --yes`",
            )
        app.output.note(f"warning: listening on {host}: the URL's token is the only guard")
    site = Site(
        open_store=_opener(app),
        window=lambda store, conv: _window(app, store, conv),
        prices=lambda: _prices(app),
    )
    site.host = host.strip("[]")
    site.port = port
    try:
        server = make_server(site)
    except OSError as exc:
        raise UserError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            "choose another port: `jp serve --port N` (0: any free one)",
        ) from None
    launch = None
    signal.signal(signal.SIGTERM, _interrupt)  # a stop by kill ends as Ctrl-C does: cleanly
    try:  # Ctrl-C is how a server stops: from here on it ends the command cleanly
        app.output.line(site.url())
        app.output.note("Serving the store read-only; Ctrl-C stops it.")
        if open_browser:  # a private page that redirects: the token on no command line
            from porcelain.serve.browser import Launch  # lazy: only --open

            launch = Launch(site.url())
        server.serve_forever()
    except KeyboardInterrupt:
        app.output.note("stopped")
    finally:
        server.server_close()
        if launch is not None:
            launch.close()


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _opener(app: App):  # type: ignore[no-untyped-def]
    """A fresh store for each request: its refs read anew, nothing shared between threads."""
    # lazy: `jp --help` loads no store module (start-up)
    from gitstore import Store

    app.store()  # the same checks and messages as every command (a missing store...)
    path, identity, limits = app.store_path(), app.identity(), app.limits()
    return lambda: Store(path, identity, limits, clock=clock.for_store())


def _prices(app: App) -> Mapping[str, Price]:
    """The user's own prices (``[usage.prices]``), as `jp usage` reads them."""
    from porcelain.app.usage import prices  # lazy: only a page that shows a cost

    return prices(app.environ)


def _window(app: App, store: Store, conv: Conversation) -> tuple[str, int]:
    """The conversation's model and its window, from its recorded configuration."""
    # lazy: the configuration of a conversation loads only for its size page
    from porcelain.app.recorded import conversation_deltas
    from porcelain.domain.defaults import OFFLINE_MODEL
    from porcelain.models.base import context_window

    config = app.config(deltas=conversation_deltas(store, conv), warn=False)
    model = config.model_id() or OFFLINE_MODEL
    return model, context_window(model, config.context_window())
