"""`jp config`: show, get and set configuration keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from porcelain.app.lifecycle import config_delta, jp_deltas
from porcelain.app.recorded import accept, conversation_deltas
from porcelain.app.targets import resolve
from porcelain.commands.context import App
from porcelain.config import set_value, user_config_path
from porcelain.config import show as render
from porcelain.config.explain import as_json, as_text, printable, toml_value
from porcelain.config.merge import lookup, merge, nest, split_key
from porcelain.config.trust import conversation_may_set
from porcelain.errors import UsageError, UserError


@click.group()
def config() -> None:
    """Show and edit configuration (TOML, comments kept on edit).

    \b
    Layers, lowest first: built-in defaults, ~/.config/jp/config.toml, the
    store's jp/config.toml, what a conversation recorded, -c PATH, --cfg KEY=VALUE.
    A conversation's recorded configuration only chooses among what your own
    files configure (model, instructions, compaction, which tools are on); it
    never defines a tool or loosens one (see `jp config show --conversation`).
    """


@config.command()
@click.option(
    "--conversation",
    "conversation",
    metavar="[ID]",
    is_flag=False,
    flag_value=".",
    default=None,
    help="Each key of this conversation's effective configuration and where it comes "
    "from (ID defaults to the active conversation).",
)
@click.pass_obj
def show(app: App, conversation: str | None) -> None:
    """The merged configuration; with --conversation, each key's value and source.

    \b
    Sources: default, the user file's path, the store file's path,
    `conversation ID (config_delta #N, commit C)`, `-c PATH`, `--cfg`.
    What the conversation recorded but may not set (a tool, its command, its
    environment, loosening `confirm`, a provider's endpoint or key) is listed
    as ignored: only your own configuration files set those.
    """
    if conversation is not None:
        _show_conversation(app, conversation)
        return

    merged = app.config()
    app.output.emit(merged.data, lambda: app.output.write(render(merged)))


def _show_conversation(app: App, target: str) -> None:
    store = app.store()
    found = resolve(store, target)
    conv = store.log.load(found.cid)
    merged = app.config(deltas=conversation_deltas(store, conv), warn=False)
    entries = merged.entries()
    title = f"effective configuration of conversation {found.cid}"
    app.output.emit(
        as_json(entries, merged.ignored),
        lambda: app.output.lines(as_text(entries, merged.ignored, title)),
    )


@config.command()
@click.argument("key")
@click.pass_obj
def get(app: App, key: str) -> None:
    """One key's merged value (exit 1 when unset)."""
    value = app.config().get(key)
    if value is None:
        raise click.exceptions.Exit(1)
    if isinstance(value, dict | list):  # a table's text is its JSON too
        app.output.data(value)
        return
    app.output.emit(value, str(value).lower() if isinstance(value, bool) else str(value))


@config.command("set", context_settings={"ignore_unknown_options": True})
@click.argument("key")
@click.argument("value")
@click.option(
    "--in-store", "in_store", is_flag=True, help="Write the store's file, not the user's."
)
@click.option(
    "--file",
    "file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write this file instead.",
)
@click.pass_obj
def set_(app: App, key: str, value: str, in_store: bool, file: Path | None) -> None:
    """Set KEY to VALUE (parsed as TOML when it parses, else a string; `-5` is a value)."""

    path = file or (app.store().local.config_file if in_store else user_config_path(app.environ))
    stored = set_value(path, key, value)
    app.output.emit(
        {"file": str(path), "key": key, "value": stored}, f"{key} = {toml_value(stored)} in {path}"
    )


@config.command()
@click.argument("key")
@click.option(
    "--conversation",
    "conversation",
    is_flag=True,
    help="Drop what the conversation recorded for KEY (the only layer unset edits).",
)
@click.option("-i", "--id", "target", metavar="ID", help="This conversation, not the active one.")
@click.pass_obj
def unset(app: App, key: str, conversation: bool, target: str | None) -> None:
    """Drop a conversation's recorded KEY: it goes back to your files (undoable).

    \b
    Appends a config_delta whose null value for KEY means "back to the layers
    below", so the next query uses your files' value again (`jp undo` takes it
    back).  Only a key a conversation may record can be unset this way, for
    example: jp config unset --conversation assistant.model.id
    """
    if not conversation:
        raise UsageError(
            "jp config unset edits only a conversation's recorded configuration",
            f"pass --conversation: `jp config unset --conversation {printable(key)}` "
            "(your files: `jp config set`)",
        )
    path = split_key(key, "config unset")
    if not conversation_may_set(path):
        raise UsageError(
            f"{printable(key)} is not a key a conversation records",
            "see `jp config show --conversation` for what it records",
        )
    store = app.store()
    cid = resolve(store, target).cid
    with store.refs.hold(cid, wait=10.0):
        conv = store.log.load(cid)
        current: dict[str, Any] = {}
        for delta in jp_deltas(conv.events):
            current = merge(current, delta) if isinstance(delta, dict) else current
        if lookup(current, path) is None:
            raise UserError(f"conversation {cid} records no {printable(key)}; nothing to unset")
        tip = store.log.append(
            cid, [config_delta(nest(path, None))], conv.tip, f"jp config unset {cid}"
        )
        accept(store, [tip])
        merged = app.config(deltas=conversation_deltas(store, store.log.load(cid)), warn=False)
    value, source = merged.get(key), merged.origin(path)
    now = "unset" if value is None else f"{toml_value(value)} from {printable(source)}"
    app.output.emit(
        {"id": cid, "key": key, "value": value, "source": source},
        f"{printable(key)}: conversation {cid} no longer sets it; now {now}",
    )
