"""Render docs/cli.md from the commands' own --help (run as a module to rewrite it).

    python -m tests.support.cli_docs        # rewrite docs/cli.md
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from porcelain.cli import cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
HEADER = """# Command line reference

Generated from `jp --help` by `python -m tests.support.cli_docs`; a test keeps
it current. Global options go before the command (`jp -F json conversation ls`).
Expected failures print `error: ...` (and the next command to run) on stderr
and exit non-zero: 1 for a refused operation, 2 for bad usage, 3 for
configuration, 4 for the model provider, 130 when interrupted.

Text jp did not write (titles, labels, model answers and reasoning, tool
output, names from a remote) never drives your terminal: on a terminal every
control character in it is shown escaped (`\\x1b` for ESC, `\\x07` for BEL,
`\\x9b` for CSI, `\\r` for a bare carriage return). Piped output keeps the
bytes, except that a field shown on one line (a title in `ls`, `show`'s
header) has newlines and tabs escaped (`\\n`, `\\t`). `-F json` gives every
text exactly.
"""


def _walk(command: click.Command, ctx: click.Context, path: list[str]) -> list[str]:
    out = [f"\n## `{' '.join(path)}`\n", "```text", command.get_help(ctx).rstrip(), "```"]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            sub_ctx = click.Context(sub, info_name=name, parent=ctx, terminal_width=100,
                                    max_content_width=100)
            out += _walk(sub, sub_ctx, [*path, name])
    return out


def render() -> str:
    ctx = click.Context(cli, info_name="jp", terminal_width=100, max_content_width=100)
    return HEADER + "\n".join(_walk(cli, ctx, ["jp"])) + "\n"


if __name__ == "__main__":
    DOC.write_text(render())
    sys.stdout.write(f"wrote {DOC}\n")
