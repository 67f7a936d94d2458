"""`jp completion SHELL`: shell completion for bash, zsh and fish."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import click

from gitstore import errors, files
from porcelain.commands.context import App
from porcelain.errors import JpError, UserError

MAX_SCRIPT_BYTES = 1 << 20  # far past jp's scripts: what is read of a file found there


@click.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.option("--install", is_flag=True, help="Write the script where SHELL looks for it.")
@click.option(
    "--force",
    is_flag=True,
    help="With --install: replace a file there that jp did not write (kept as FILE.bak).",
)
@click.option("--complete", "answer", is_flag=True, hidden=True)
@click.argument("words", nargs=-1, metavar="")
@click.pass_obj
def completion(
    app: App, shell: str, install: bool, force: bool, answer: bool, words: tuple[str, ...]
) -> None:
    """Print the completion script for SHELL (bash, zsh or fish), or --install it.

    It completes commands, options, conversation ids (with their titles, in
    the form you type: jp-c177..., c177... or 177...), target keywords,
    configuration keys, remote names and model ids.

    \b
    jp completion bash --install   # ~/.local/share/bash-completion/completions/jp
    jp completion zsh --install    # ~/.zfunc/_jp (add ~/.zfunc to fpath)
    jp completion fish --install   # ~/.config/fish/completions/jp.fish
    eval "$(jp completion bash)"   # or only for this shell

    --install replaces only a script jp wrote there (an older one); a file of
    yours or another tool's, or a link, stays unless you give --force.
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
    found = _existing(path, shell)
    if found == "same":
        app.output.line(f"{path} is already this script; nothing changed")
        return
    if found == "foreign" and not force:
        raise UserError(
            f"{path} exists and jp did not write it (a file of yours or another tool's, "
            "or a link); nothing changed",
            f"look at it, then `jp completion {shell} --install --force` to replace it "
            f"(it is kept as {path.name}.bak), or print the script: `jp completion {shell}`",
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if found == "foreign":
            files.move_file(path, path.with_name(path.name + ".bak"))
            app.output.note(f"kept the previous file as {path}.bak")
        _write_new(path, text)
    except (OSError, errors.EnvironmentFault) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else exc.detail
        raise UserError(f"cannot write {path}: {reason or exc}") from None
    app.output.line(f"{'Replaced' if found == 'jp' else 'Wrote'} {path}")
    app.output.note(completion_scripts.AFTER_INSTALL[shell])


def _existing(path: Path, shell: str) -> str:
    """What is at ``path``: "none", "same" (this script), "jp" (an older script of
    jp's), "foreign" (anything else, a link included).  Never follows a link."""
    # lazy: the scripts' text loads only to print one
    from porcelain.commands import completion_scripts

    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "none"
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise UserError(f"{path} is a folder; nothing changed", "move it away and run this again")
    if not stat.S_ISREG(info.st_mode):
        return "foreign"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as file:
            head = file.read(MAX_SCRIPT_BYTES + 1)
    except OSError:
        return "foreign"
    if head == completion_scripts.script(shell).encode():
        return "same"
    return "jp" if f"# jp completion for {shell}.".encode() in head[:200] else "foreign"


def _write_new(path: Path, text: str) -> None:
    """``text`` into ``path`` through a fresh temporary file beside it (created,
    never opened through a link), renamed over it whole."""
    files.write_atomic(path, text, durable=True, mode=0o644)


def _home(name: str, under: str) -> Path:
    value = os.environ.get(name)
    if value:
        return Path(value)
    return Path.home() / under if under else Path.home()


def _answer(app: App, shell: str, words: list[str]) -> None:
    """The reply to the shell script: candidates for the last word."""
    # lazy: the completion machinery loads only when the shell asks
    from porcelain.commands.completer import complete, id_start, reply

    current = words[-1] if words else ""
    root = click.get_current_context().find_root().command
    start = id_start(current)
    items = complete(root, words[:-1], current, lambda kind: _source(app, kind, start))
    app.output.write(reply(items, shell))


def _source(app: App, kind: str, start: str) -> list[tuple[str, str]]:
    """The store's side of a completion (ids: those that begin with ``start``);
    nothing when there is no store to read."""
    try:
        if kind == "ids":
            # lazy: the listing code loads only to complete ids
            from porcelain.app.listed import titles

            return titles(app.store(), start)
        if kind == "remotes":
            # lazy: the remote code loads only to complete remotes
            from gitstore import remotes

            return [(r.name, r.url) for r in remotes.listing(app.store())]
        if kind == "models":
            # lazy: the model list loads only to complete -m
            from porcelain.app.modellist import completions, model_list

            config = app.config(warn=False)
            return completions(model_list(config, app.environ, config.model_id() or ""))
    except (errors.GitStoreError, JpError, OSError):
        return []
    return []
