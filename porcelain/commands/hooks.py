"""`jp hooks install|uninstall claude-code|codex`: the hook that keeps the store
current, in the other tool's own settings (docs/sessions.md)."""

from __future__ import annotations

from pathlib import Path

import click

from porcelain.commands.context import App

TOOL = click.Choice(["claude-code", "codex"])


@click.group()
def hooks() -> None:
    """Import (and sync) each Claude Code or Codex session as it stops: the tool's hook.

    `jp status` says whether each tool has it.
    """


@hooks.command()
@click.argument("tool", type=TOOL)
@click.pass_obj
def install(app: App, tool: str) -> None:
    """Add the hook that imports TOOL's sessions as they stop (claude-code, codex).

    The hook runs `jp conversation import --from TOOL --quiet && jp sync`.
    Claude Code: `Stop` and `SessionEnd` hooks in ~/.claude/settings.json
    ($CLAUDE_CONFIG_DIR when set); Codex: a `Stop` hook (the end of every turn)
    in $CODEX_HOME/hooks.json (~/.codex), which Codex runs once you trust it in
    its `/hooks`.  jp is named by its path, and a store named by --store or
    JP_STORE is passed on.  Every other setting and hook is kept and the file's
    mode too; installing again changes nothing.  The store is not touched: the
    undo is `jp hooks uninstall TOOL`, which removes exactly what this added.
    """
    # lazy: the other tools' files are read only by install and uninstall
    from porcelain.app import hookinstall
    from porcelain.commands.mcp import _jp_command

    where = hookinstall.target(tool, app.environ)
    path, named_by = app.chosen_store()
    cmd = hookinstall.command(tool, _jp_command(), path.absolute() if named_by else None)
    done = hookinstall.install(where, cmd, app.environ)
    events = " and ".join(done.events)
    lines = [
        f"Installed jp's {events} hook in {where.path}: {cmd}"
        if done.changed
        else f"jp's {events} hook is in {where.path} already."
    ]
    if hookinstall.installed_elsewhere(where, cmd):
        lines.append(
            f"{where.path} has another hook that imports {tool} sessions too (one by hand?): "
            "remove one, or both run."
        )
    if not _has_remote(app, path):
        lines.append(
            "The store has no remote to sync with by default, so the hook's `jp sync` "
            "fails (its import does not): add one with `jp remote add origin URL`."
        )
    if tool == "codex":
        lines.append("Codex runs a new hook once you trust it: in codex, open /hooks.")
    lines.append(f"Undo: jp hooks uninstall {tool}")
    app.output.emit(
        {
            "tool": tool,
            "file": str(where.path),
            "changed": done.changed,
            "events": list(done.events),
            "command": cmd,
        },
        lines,
    )


@hooks.command()
@click.argument("tool", type=TOOL)
@click.pass_obj
def uninstall(app: App, tool: str) -> None:
    """Remove exactly the hook `jp hooks install TOOL` added.

    The settings are left as they were before the install; refused while jp's
    hook was edited since (a hook you removed yourself is just forgotten).
    """
    # lazy: the other tools' files are read only by install and uninstall
    from porcelain.app import hookinstall

    done = hookinstall.uninstall(hookinstall.target(tool, app.environ), app.environ)
    text = (
        f"Removed jp's hook from {done.file.path}."
        if done.changed
        else f"jp's hook was gone from {done.file.path} already; forgot it."
    )
    app.output.emit({"tool": tool, "file": str(done.file.path), "changed": done.changed}, text)


def _has_remote(app: App, path: Path) -> bool:
    """Whether the hook's `jp sync` has a remote to sync with (reads only)."""
    # lazy: the store's modules load only for commands that read it
    from gitstore import remotes

    return path.exists() and remotes.default(app.store()) is not None
