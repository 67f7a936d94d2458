"""Command groups whose subcommands live in modules imported on first use."""

from __future__ import annotations

import importlib
from typing import Any

import click

from porcelain.commands.usage import UnknownCommand


class LazyGroup(click.Group):
    """A group whose subcommands live in modules imported on first use."""

    def __init__(
        self,
        *args: Any,
        lazy: dict[str, str],
        aliases: dict[str, str],
        summaries: dict[str, str] | None = None,
        **kw: Any,
    ):
        super().__init__(*args, **kw)
        self.lazy = lazy
        self.aliases = aliases
        self.summaries = summaries or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, self.summaries.get(name, "")) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        name = self.aliases.get(name, name)
        if name in self.lazy:
            module, attr = self.lazy[name].split(":")
            command = getattr(importlib.import_module(module), attr)
            assert isinstance(command, click.Command)
            return command
        return super().get_command(ctx, name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and not ctx.resilient_parsing and self.get_command(ctx, args[0]) is None:
            raise UnknownCommand(args[0], [*self.list_commands(ctx), *self.aliases], ctx)
        _, cmd, rest = super().resolve_command(ctx, args)
        return (cmd.name if cmd else None), cmd, rest
