"""`jp config`: show, get and set configuration keys."""

from __future__ import annotations

from pathlib import Path

import click

from porcelain.context import App


@click.group()
def config() -> None:
    """Show and edit configuration (TOML, comments kept on edit).

    \b
    Layers, lowest first: built-in defaults, ~/.config/jp/config.toml, the
    store's jp/config.toml, what a conversation recorded, -c PATH, --cfg KEY=VALUE.
    """


@config.command()
@click.pass_obj
def show(app: App) -> None:
    """The merged configuration."""
    from porcelain.config import show as render

    merged = app.config()
    if app.output.json:
        app.output.data(merged.data)
    else:
        app.output.write(render(merged))


@config.command()
@click.argument("key")
@click.pass_obj
def get(app: App, key: str) -> None:
    """One key's merged value (exit 1 when unset)."""
    value = app.config().get(key)
    if value is None:
        raise click.exceptions.Exit(1)
    if app.output.json or isinstance(value, dict | list):
        app.output.data(value)
    else:
        app.output.line(str(value).lower() if isinstance(value, bool) else str(value))


@config.command("set")
@click.argument("key")
@click.argument("value")
@click.option("--in-store", "in_store", is_flag=True, help="Write the store's file, not the user's.")
@click.option(
    "--file",
    "file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write this file instead.",
)
@click.pass_obj
def set_(app: App, key: str, value: str, in_store: bool, file: Path | None) -> None:
    """Set KEY to VALUE (parsed as TOML when it parses, else a string)."""
    from porcelain.config import set_value, user_config_path

    path = file or (
        app.store().gitdir / "jp" / "config.toml" if in_store else user_config_path(app.environ)
    )
    stored = set_value(path, key, value)
    if app.output.json:
        app.output.data({"file": str(path), "key": key, "value": stored})
    else:
        app.output.line(f"{key} = {stored!r} in {path}")
