"""Options whose value is optional take it only in the `=` form.

click lets `-k`, `--reset` and the like take the next word as their value
when it does not start with a dash, so `jp q -k "hello"` compacts with the
rule "hello" and `jp c compact --reset ID` withdraws compaction "ID".  An
``OptionalValue`` option never takes the next word: bare, it has its flag
value; with a value it is written `--reset=2` (or, for a short name,
attached: `-ks:..-3`).  ``Command`` (the class of a command with such
options) rewrites each bare use into the explicit `=` form before click
parses, which is all click needs to tell the two apart.  An option with a
closed set of ``words`` (`--tools omit`) still takes the next word when it
is one of them, never anything else.
"""

from __future__ import annotations

from typing import Any

import click


class OptionalValue(click.Option):
    """An option with an optional value: bare = ``flag_value``, a value only with `=`."""

    def __init__(self, *args: Any, words: tuple[str, ...] = (), **kw: Any) -> None:
        self.words = words
        kw.setdefault("is_flag", False)
        super().__init__(*args, **kw)
        longs = [o for o in self.opts + self.secondary_opts if o.startswith("--")]
        self.explicit = f"{longs[0]}={self.flag_value}" if longs else None
        if self.help and not words and "`=`" not in self.help:
            self.help += f"  A value goes after `=` ({longs[0] if longs else self.opts[0]}=VALUE)."


def explicit_forms(params: list[click.Parameter], args: list[str]) -> list[str]:
    """``args`` with each bare optional-value option in its `=` form (up to `--`)."""
    bare: dict[str, OptionalValue] = {}
    for param in params:
        if isinstance(param, OptionalValue) and param.explicit:
            for name in param.opts:
                bare[name] = param
    if not bare:
        return args
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return out + args[i:]
        option = bare.get(arg)
        i += 1
        if option is None:
            out.append(arg)
        elif i < len(args) and args[i] in option.words:
            out.append(f"{option.explicit.split('=', 1)[0]}={args[i]}")  # type: ignore[union-attr]
            i += 1
        else:
            out.append(str(option.explicit))
    return out


class Command(click.Command):
    """A command whose optional-value options never swallow the next word."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, explicit_forms(self.get_params(ctx), args))
