"""`jp completion SHELL`: shell completion for bash, zsh and fish."""

from __future__ import annotations

import os
from pathlib import Path

import click

from gitstore import GitStoreError
from porcelain.commands.context import App
from porcelain.errors import JpError, UserError


@click.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.option("--install", is_flag=True, help="Write the script where SHELL looks for it.")
@click.option("--complete", "answer", is_flag=True, hidden=True)
@click.argument("words", nargs=-1, metavar="")
@click.pass_obj
def completion(app: App, shell: str, install: bool, answer: bool, words: tuple[str, ...]) -> None:
    """Print the completion script for SHELL (bash, zsh or fish), or --install it.

    It completes commands, options, conversation ids (with their titles, in
    the form you type: jp-c177..., c177... or 177...), target keywords,
    configuration keys, remote names and model ids.

    \b
    jp completion bash --install   # ~/.local/share/bash-completion/completions/jp
    jp completion zsh --install    # ~/.zfunc/_jp (add ~/.zfunc to fpath)
    jp completion fish --install   # ~/.config/fish/completions/jp.fish
    eval "$(jp completion bash)"   # or only for this shell
    """
    # lazy: the scripts' text loads only to print one
    from porcelain.commands import completion_scripts

    if answer:  # the script asks: WORDS are the command line after `jp`, the last one current
        _answer(app, shell, list(words))
        return
    text = completion_scripts.script(shell)
    if not install:
        app.output.write(text)
        return
    path = completion_scripts.install_path(
        shell,
        _home("HOME", ""),
        _home("XDG_DATA_HOME", ".local/share"),
        _home("XDG_CONFIG_HOME", ".config"),
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
    app.output.line(f"Wrote {path}")
    app.output.note(completion_scripts.AFTER_INSTALL[shell])


def _home(name: str, under: str) -> Path:
    value = os.environ.get(name)
    if value:
        return Path(value)
    return Path.home() / under if under else Path.home()


def _answer(app: App, shell: str, words: list[str]) -> None:
    """The reply to the shell script: candidates for the last word."""
    # lazy: the completion machinery loads only when the shell asks
    from porcelain.commands.completer import complete, reply

    current = words[-1] if words else ""
    root = click.get_current_context().find_root().command
    items = complete(root, words[:-1], current, lambda kind: _source(app, kind))
    app.output.write(reply(items, shell))


def _source(app: App, kind: str) -> list[tuple[str, str]]:
    """The store's side of a completion; nothing when there is no store to read."""
    try:
        if kind == "ids":
            # lazy: the listing code loads only to complete ids
            from porcelain.app.describe import titles

            return titles(app.store())
        if kind == "remotes":
            # lazy: the remote code loads only to complete remotes
            from gitstore import list_remotes

            return [(r.name, r.url) for r in list_remotes(app.store())]
        if kind == "models":
            # lazy: the model list loads only to complete -m
            from porcelain.app.modellist import completions, model_list

            config = app.config(warn=False)
            return completions(model_list(config, app.environ, config.model_id() or ""))
    except (GitStoreError, JpError, OSError):
        return []
    return []
