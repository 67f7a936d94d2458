"""What the shell may complete a word of a `jp` command line to.

`jp completion SHELL --complete -- WORDS... CURRENT` runs this: click resolves
which command and which parameter the current word belongs to, and this
module offers the values that parameter takes: command and option names,
conversation ids (in the form being typed: ``jp-c177...``, ``c177...`` or
``177...``) with their titles, target keywords, configuration keys, remote
names, model ids, and the choices of a choice option.  A path asks the shell
to complete file names itself (``FILES``).

Titles and remote names are untrusted (a pull brings them): a description is
one line without control characters, and a value that is not plain
characters is never offered, so nothing here can break the shell's parsing
of the reply or drive the terminal.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import click

from porcelain.domain import idprefix
from porcelain.render.output import escape_untrusted

FILES = "__jp_files__"  # the reply that asks the shell for file names
DESCRIPTION_WIDTH = 60
_SAFE_VALUE = re.compile(r"[A-Za-z0-9._/@+=,%-][A-Za-z0-9._/@+=,%:-]*")
KEYWORDS = {
    "active": "the active conversation",
    "recent": "the one activated last",
    "newest": "the newest conversation",
    "pinned": "the one pinned last",
    "archived": "the one archived last",
}
# (command name, parameter name) -> what the parameter takes
_KEYS = {("get", "key"), ("set", "key"), ("unset", "key")}
_REMOTES = {("push", "remote"), ("pull", "remote"), ("sync", "remote"), ("remove", "name")}

Item = tuple[str, str]  # a value and its description


def describe(text: object) -> str:
    """Untrusted text as a one-line description of a completion."""
    shown = escape_untrusted(" ".join(str(text).split()), one_line=True)
    return shown if len(shown) <= DESCRIPTION_WIDTH else shown[: DESCRIPTION_WIDTH - 3] + "..."


def safe_items(items: Iterable[Item], current: str) -> list[Item]:
    """The items that extend ``current``, whose values are plain characters."""
    out: list[Item] = []
    seen: set[str] = set()
    for value, about in items:
        if value in seen or not value.startswith(current) or not _SAFE_VALUE.fullmatch(value):
            continue
        seen.add(value)
        out.append((value, describe(about)))
    return out


def id_start(current: str) -> str:
    """The start every id that ``id_items`` offers for ``current`` has (so that the
    store is asked for those alone)."""
    if current.startswith(idprefix.PREFIX):
        return current
    if idprefix.PREFIX.startswith(current):
        return idprefix.PREFIX
    return "jp-" + current if current.startswith("c") else idprefix.PREFIX + current


def id_items(ids_and_titles: Iterable[tuple[str, str]], current: str) -> Iterator[Item]:
    """Ids in the form ``current`` is typed in, each with its title."""
    lead = ""
    if current.startswith(idprefix.PREFIX) or idprefix.PREFIX.startswith(current):
        lead = idprefix.PREFIX
    elif current.startswith("c"):
        lead = "c"
    for cid, title in ids_and_titles:
        body = cid[len(idprefix.PREFIX) :]
        yield (lead + body if lead != idprefix.PREFIX else cid), title


def config_keys() -> list[Item]:
    """Every key the configuration schema knows, dotted."""
    # lazy: the schema is read only when completing config keys
    from porcelain.config import schema

    out: list[Item] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if isinstance(node, schema.Table):
            for name, child in node.fields.items():
                walk(child, (*path, name))
        elif isinstance(node, schema.MapOf):
            for name, child in node.special.items():
                walk(child, (*path, name))
            walk(node.item, (*path, "NAME"))
        elif isinstance(node, schema.Leaf):
            out.append((schema.dotted(path), node.expect))

    walk(schema.ROOT, ())
    return [(k, about) for k, about in out if "NAME" not in k.split(".")]


def _group_items(ctx: click.Context, command: click.Group) -> list[Item]:
    """Subcommands with their one-line summaries (their modules are not imported)."""
    callback = command.callback
    module = importlib.import_module(callback.__module__) if callback else None
    summaries: dict[str, str] = getattr(module, "SUMMARIES", {}) or {}
    out: list[Item] = []
    for name in command.list_commands(ctx):
        about = summaries.get(name)
        if about is None and name in command.commands:
            about = command.commands[name].get_short_help_str()
        out.append((name, about or ""))
    return out


def _option_items(ctx: click.Context, command: click.Command) -> list[Item]:
    out: list[Item] = []
    for param in command.get_params(ctx):
        if isinstance(param, click.Option) and not param.hidden:
            for name in (*param.opts, *param.secondary_opts):
                out.append((name, param.help or ""))
    return out


def complete(
    root: click.Command,
    words: list[str],
    current: str,
    sources: Callable[[str], list[tuple[str, str]]],
) -> list[Item]:
    """What ``current`` may become after ``words`` (the words after `jp`, whose
    command group is ``root``).

    ``sources(kind)`` gives the store's data: ``ids`` (id, title) pairs,
    ``remotes`` and ``models`` (value, description) pairs.
    """
    # lazy: click's completion internals load only when the shell asks
    from click.shell_completion import _resolve_context, _resolve_incomplete

    if words and words[-1] == "=" and len(words) >= 2:
        # bash splits `--cfg KEY=VALUE` at the `=`: complete VALUE alone (bash
        # replaces only the word after the `=`), never a command name
        return safe_items(_cfg_values(words[-2], sources), current)
    words = _joined(words)
    try:
        ctx = _resolve_context(root, {}, "jp", list(words))
        target, current = _resolve_incomplete(ctx, list(words), current)
    except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
        return []
    if isinstance(target, click.Command):
        if current.startswith("-"):
            return safe_items(_option_items(ctx, target), current)
        if isinstance(target, click.Group):
            return safe_items(_group_items(ctx, target), current)
        return []
    return _values(ctx, target, current, sources)


def _values(
    ctx: click.Context,
    param: click.Parameter,
    current: str,
    sources: Callable[[str], list[tuple[str, str]]],
) -> list[Item]:
    name = param.name or ""
    where = (ctx.command.name or "", name)
    if name in ("target", "targets"):
        found = list(id_items(sources("ids"), current))
        keywords = list(KEYWORDS.items())
        if ctx.command.name == "use":
            keywords.append(("-", "the conversation active before this one"))
        return safe_items(found + keywords, current)
    if where in _KEYS:
        return safe_items(config_keys(), current)
    if name == "overrides":  # --cfg KEY=VALUE
        key, sep, _ = current.partition("=")
        if sep:
            return safe_items([(f"{key}={v}", a) for v, a in _cfg_values(key, sources)], current)
        return safe_items([(k + "=", about) for k, about in config_keys()], current)
    if where in _REMOTES:
        return safe_items(sources("remotes"), current)
    if name == "model":
        return safe_items(sources("models"), current)
    if isinstance(param.type, click.Choice):
        return safe_items([(str(c), "") for c in param.type.choices], current)
    if isinstance(param.type, click.Path | click.File):
        return [(FILES, "")]
    return []


def _joined(words: list[str]) -> list[str]:
    """The words with bash's split ``KEY`` ``=`` ``VALUE`` put back together."""
    out: list[str] = []
    i = 0
    while i < len(words):
        if words[i] == "=" and out:
            out[-1] += "=" + (words[i + 1] if i + 1 < len(words) else "")
            i += 2
            continue
        out.append(words[i])
        i += 1
    return out


def _cfg_values(key: str, sources: Callable[[str], list[tuple[str, str]]]) -> list[Item]:
    """What the value of configuration ``key`` may be: model ids for a model key,
    true or false for a switch; nothing else is guessed."""
    if key.endswith(".model.id"):
        return sources("models")
    if key.endswith((".enable", ".confirm")):
        return [("true", ""), ("false", "")]
    return []


def reply(items: list[Item], shell: str) -> str:
    """The lines the shell script reads: bash takes values, zsh ``value:about``
    (a colon in the value escaped), fish ``value<TAB>about``."""
    lines = []
    for value, about in items:
        if shell == "bash" or not about:
            lines.append(value.replace(":", "\\:") if shell == "zsh" else value)
        elif shell == "zsh":
            lines.append(f"{value.replace(':', chr(92) + ':')}:{about}")
        else:
            lines.append(f"{value}\t{about}")
    return "".join(line + "\n" for line in lines)
