"""Usage errors in jp's own style: one `error: ...` line, then a hint.

click words its errors in three capitalised lines ("Usage: ...", "Try ...",
"Error: ..."); here each becomes one line that starts lower-case, names a
close match where there is one ("did you mean ...?"), and a hint naming the
command's help.
"""

from __future__ import annotations

from collections.abc import Iterable

import click


def close_matches(word: str, choices: Iterable[str]) -> list[str]:
    import difflib  # lazy: start-up; only a mistyped word is matched, every command loads this

    return difflib.get_close_matches(word, sorted(set(choices)), n=3, cutoff=0.6)


def did_you_mean(matches: Iterable[str]) -> str:
    found = [f"`{m}`" for m in matches]
    if not found:
        return ""
    if len(found) == 1:
        return f" (did you mean {found[0]}?)"
    return f" (did you mean {', '.join(found[:-1])} or {found[-1]}?)"


def _lowered(message: str) -> str:
    text = " ".join(message.split())
    if text[:1].isupper() and not text[1:2].isupper():
        text = text[0].lower() + text[1:]
    return text.rstrip(".")


def message_of(exc: click.ClickException) -> tuple[str, str | None]:
    """The one line and the hint for a click error."""
    ctx = getattr(exc, "ctx", None)
    hint = f"see `{ctx.command_path} --help`" if ctx is not None else "see `jp --help`"
    if isinstance(exc, click.NoSuchOption):
        text = f"no such option {exc.option_name}" + did_you_mean(exc.possibilities or ())
        return text, hint
    return _lowered(exc.format_message()), hint


class UnknownCommand(click.UsageError):
    """`jp qeury`: names the commands it is close to."""

    def __init__(self, name: str, choices: Iterable[str], ctx: click.Context | None) -> None:
        shown = " ".join(name.split())[:60]
        super().__init__(
            f"no such command `{shown}`" + did_you_mean(close_matches(name, choices)), ctx
        )

    def format_message(self) -> str:
        return self.message
