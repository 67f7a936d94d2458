"""The `jp` command: global options, lazily loaded subcommands, and the one
place where errors become `error: ...` lines and exit codes."""

from __future__ import annotations

import os
import sys

import click

from porcelain.commands.context import App, ended
from porcelain.commands.lazy import LazyGroup
from porcelain.errors import Exit, Interrupted, JpError, UsageError
from porcelain.render.output import Output

# name -> "module:attribute"; modules are imported only when their command runs
COMMANDS = {
    "init": "porcelain.commands.init:init",
    "query": "porcelain.commands.query:query",
    "conversation": "porcelain.commands.conversation:conversation",
    "config": "porcelain.commands.config:config",
    "remote": "porcelain.commands.remote:remote",
    "push": "porcelain.commands.sync:push",
    "pull": "porcelain.commands.sync:pull",
    "sync": "porcelain.commands.sync:sync",
    "undo": "porcelain.commands.undo:undo",
    "op": "porcelain.commands.op:op",
    "doctor": "porcelain.commands.doctor:doctor",
    "completion": "porcelain.commands.completion:completion",
    "model": "porcelain.commands.model:model",
    "status": "porcelain.commands.status:status",
    "serve": "porcelain.commands.serve:serve",
    "tools": "porcelain.commands.tools:tools",
    "mcp": "porcelain.commands.mcp:mcp",
    "hooks": "porcelain.commands.hooks:hooks",
    "usage": "porcelain.commands.tokens_used:usage",
}
SUMMARIES = {
    "init": "Create a store (a bare git repository).",
    "query": "Ask the model: add a turn to a conversation (alias: q).",
    "conversation": "List, show, print, fork, compact and review conversations (alias: c).",
    "config": "Show and edit configuration.",
    "remote": "Name the git remotes conversations sync with.",
    "push": "Send conversations to a remote.",
    "pull": "Fetch conversations from a remote; diverged ones become forks.",
    "sync": "Pull, then push.",
    "undo": "Reverse the latest operation (run again: the one before).",
    "op": "The operation log: list operations, restore the store to one.",
    "doctor": "Check a store (fsck, journals, locks, cache, format) and mend it.",
    "completion": "Shell completion for bash, zsh and fish (ids, keys, remotes).",
    "model": "The models jp can call (model ls), the warm model process.",
    "status": "The store, its remotes, the active conversation, anything pending.",
    "serve": "The store in a browser, read-only (a local web server).",
    "tools": "The model's tools (tools ls): built in, commands, MCP servers'.",
    "mcp": "Serve the store to agents over MCP (mcp serve, mcp install claude-code|codex).",
    "hooks": "Import each Claude Code or Codex session as it stops (hooks install TOOL).",
    "usage": "Tokens and cost of every session (Claude Code, Codex, jp), by day or model.",
}
ALIASES = {"q": "query", "c": "conversation", "conversations": "conversation", "cfg": "config"}


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    aliases=ALIASES,
    summaries=SUMMARIES,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--store",
    metavar="PATH",
    help="The store to use (default: $JP_STORE, a project "
    "repository after `jp init --here`, else ~/.local/share/jp/store.git).",
)
@click.option(
    "-c",
    "--config",
    "config_files",
    metavar="PATH",
    multiple=True,
    help="Load a configuration file on top of the others (repeatable).",
)
@click.option(
    "--cfg",
    "overrides",
    metavar="KEY=VALUE",
    multiple=True,
    help="Set one configuration key (repeatable).  On `jp q` the keys a conversation "
    "may set (model, instructions, compaction, tools on or off) are recorded in it and "
    "stay in force; on other commands it applies to this run only.",
)
@click.option(
    "-F",
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output for people, or JSON for scripts.",
)
@click.option("-y", "--yes", is_flag=True, help="Answer yes to every confirmation.")
@click.version_option("0.1.0", prog_name="jp")
@click.pass_context
def cli(
    ctx: click.Context,
    store: str | None,
    config_files: tuple[str, ...],
    overrides: tuple[str, ...],
    fmt: str,
    yes: bool,
) -> None:
    """Conversations with language models, stored in git.

    Every conversation is a branch of event commits: `git log` reads it as a
    transcript, forking is branching, and conversations travel between
    machines with `jp push` and `jp pull`.  Compaction never rewrites history,
    and `jp conversation compact --interactive` lets you review it with the
    model before it is applied.

    \b
    Start:    jp init, then jp q --new "your question"
    Review:   jp conversation compact --interactive, jp q ..., --continue
    Docs:     docs/cli.md, docs/review.md
    """
    argv = ctx.obj if isinstance(ctx.obj, list) else [str(ctx.invoked_subcommand or "")]
    app = ctx.obj = App(
        output=Output(fmt),
        store_option=store,
        config_files=config_files,
        overrides=overrides,
        yes=yes,
        argv=tuple(argv),
    )
    ctx.call_on_close(lambda: _close(app))


# what closing the command's operation has to say, printed after its error (if any)
_LATE: list[str] = []


def _close(app: App) -> None:
    """The command ended (maybe by an exception, still in flight here): record its operation."""
    # lazy: `jp --help` never closes an operation (start-up)
    from porcelain.app.oprecord import finish

    kind = sys.exc_info()[0]
    # an interrupted command says itself what it kept: the operation is recorded quietly
    failed = kind is not None and not issubclass(kind, KeyboardInterrupt | Interrupted)
    _LATE.extend(finish(app.opened_store(), failed))


GLOBAL_WITH_VALUE = ("--store", "-c", "--config", "--cfg", "-F", "--format")


def hoist_globals(argv: list[str]) -> list[str]:
    """Let the global options that take a value stand anywhere, as in JP.

    `jp q --cfg assistant.model.id=x hello` becomes
    `jp --cfg assistant.model.id=x q hello`.  Nothing after `--` moves.
    """
    front: list[str] = []
    rest: list[str] = []
    i = 0
    seen_command = False
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest += argv[i:]
            break
        name = arg.split("=", 1)[0]
        if seen_command and name in GLOBAL_WITH_VALUE:
            if "=" in arg and name.startswith("--"):
                front.append(arg)
                i += 1
                continue
            if i + 1 < len(argv):
                front += [arg, argv[i + 1]]
                i += 2
                continue
        if not arg.startswith("-") and not seen_command:
            seen_command = True
        rest.append(arg)
        i += 1
    if not front:
        return argv
    head = 0
    while head < len(rest) and rest[head].startswith("-"):
        head += (
            1 if rest[head].split("=", 1)[0] not in GLOBAL_WITH_VALUE or "=" in rest[head] else 2
        )
    return rest[:head] + front + rest[head:]


def _seeded_clock() -> None:
    from porcelain import clock  # lazy: the clock loads gitstore; `jp --help` needs neither

    try:
        seeded = clock.from_hook(os.environ.get("JP_TEST_CLOCK"), os.environ.get("JP_TEST_SEED"))
    except ValueError as exc:
        raise UsageError(str(exc), "it is a testing hook: see porcelain/clock.py") from None
    clock.install(seeded)


def _refuse_undecodable(argv: list[str]) -> None:
    """Refuse a command line that is not UTF-8 before anything runs: such bytes
    (Python's surrogate escapes) cannot be stored in a title, a label, a request
    or the operation log."""
    for n, arg in enumerate(argv, start=1):
        if arg.isascii():
            continue
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
            raise UsageError(
                f"argument {n} is not UTF-8 text: {shown!r}; nothing was read or written",
                "jp takes its arguments as UTF-8: give the text in UTF-8 (a file whose name "
                "is not UTF-8: rename it, or link to it under a UTF-8 name)",
            ) from None


def main() -> None:
    """Run `jp`; translate every expected failure into one line on stderr."""
    output = Output()
    try:
        if os.environ.get("JP_FAULT"):  # a testing hook: see porcelain/app/faults.py
            from porcelain.app.faults import install  # lazy: only the testing hook needs it

            install(os.environ["JP_FAULT"])
        if os.environ.get("JP_TEST_CLOCK") or os.environ.get("JP_TEST_SEED"):
            _seeded_clock()  # a testing hook: see porcelain/clock.py
        argv = sys.argv[1:]
        _refuse_undecodable(argv)
        result = cli.main(
            args=hoist_globals(argv), prog_name="jp", standalone_mode=False, obj=list(argv)
        )
        code = result if isinstance(result, int) else 0
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.exceptions.NoArgsIsHelpError as exc:  # a bare group: its help, as git and gh
        click.echo(exc.ctx.get_help())
        code = Exit.OK
    except click.exceptions.Abort:
        output.note("interrupted")  # click has ended the ^C line
        code = Exit.INTERRUPTED
    except click.ClickException as exc:
        # lazy: only a usage error needs the did-you-mean helper
        from porcelain.commands.usage import message_of

        output.error(*message_of(exc))
        code = exc.exit_code
    except (KeyboardInterrupt, BrokenPipeError, Exception) as exc:  # the boundary
        # lazy: only a failed command needs the error table (start-up)
        from porcelain.render.failures import told

        code = told(output, exc)
    sys.exit(ended(output, code, _LATE))


__all__ = ["cli", "main", "JpError"]
