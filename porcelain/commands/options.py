"""Options that several commands share."""

from __future__ import annotations

import click

from porcelain.commands.optvalue import OptionalValue

compact_specs = click.option(
    "-k",
    "--compact",
    "specs",
    multiple=True,
    cls=OptionalValue,
    flag_value="",
    metavar="[SPEC]",
    help="Compact: bare for the configured rules, or an inline rule such as `s:..-3` or "
    "`r+t:2..8` (repeatable).",
)
