"""The trust rule: configuration recorded in a conversation is data.

Only the user's own files (built-in defaults, the user file, the store's
file, ``-c PATH``, ``--cfg``) define a tool, its command or environment,
whether it asks before it runs, or a provider's endpoint and credentials.
A conversation's ``config_delta`` events travel with the conversation (a
pull, an import), so anyone who could write the conversation wrote them.
They may only choose among what the user configured: the keys in
``CONVERSATION_KEYS``, an explicit allowlist over the schema.  Anything
else a delta holds is left out and reported as an ``Ignored`` entry; it is
never an error, so a hostile delta cannot block the user's work either.

A recorded model id (the assistant's, the review's, a rule's summary model)
may only name a provider the user's own configuration enables
(``enabled_providers``): the offline model's, the provider of a model id the
user's files, ``-m`` or ``--cfg`` name (an alias's target included), of the
default model when none is named, and every ``[providers.NAME]`` entry (an
empty ``[providers.ollama]`` table is the explicit way to allow one).  A delta
the user's own command wrote on this machine, or one jp already named to the
user, is ``own`` and skips this check (docs/security.md).

A null value is the removal marker (``jp config unset --conversation KEY``,
``jp q -m default``): the key goes back to the layers below the conversation's
deltas.  It is kept only for a key of ``CONVERSATION_KEYS``, so it removes
what a conversation recorded and never adds or loosens anything.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, NamedTuple

from gitstore import PROPOSE_COMPACTION
from porcelain.config.merge import nest
from porcelain.config.schema import (
    MCP,
    MODEL_REF,
    Leaf,
    MapOf,
    Table,
    TableArray,
    is_model_id,
    node_at,
    validate,
)
from porcelain.errors import ConfigError

# Stands for any tool name in ``CONVERSATION_KEYS``.
TOOL: Final = "<tool>"
TOOLS_PATH: Final = ("conversation", "tools")

# Keys a conversation may set only to false (an off switch, never an on one).
RECALL_ENABLE: Final = ("conversation", "compaction", "recall", "enable")

# Every key a conversation may set; nothing else it records is applied.
CONVERSATION_KEYS: Final[frozenset[tuple[str, ...]]] = frozenset(
    {
        ("assistant", "model", "id"),
        ("assistant", "model", "context_window"),
        ("assistant", "model", "max_tokens"),
        ("assistant", "model", "thinking_budget"),
        ("assistant", "instructions"),
        ("conversation", "compaction", "rules"),
        ("conversation", "compaction", "review", "model", "id"),
        ("conversation", "compaction", "review", "model", "context_window"),
        ("conversation", "compaction", "review", "model", "max_tokens"),
        ("conversation", "compaction", "review", "model", "thinking_budget"),
        ("conversation", "compaction", "review", "instructions"),
        # only of a tool the user configured or jp builds in, and for "*"
        (*TOOLS_PATH, TOOL, "enable"),
        # only to true: stricter, never looser
        (*TOOLS_PATH, TOOL, "confirm"),
        # only to false: a conversation may turn recall off, never on
        RECALL_ENABLE,
    }
)

# Names no conversation ever sets, wherever they appear (a rule's summary
# model included): a second line behind the allowlist, for keys the schema
# may grow (a provider's endpoint and credentials, a tool's execution).
NEVER_FROM_CONVERSATION: Final = frozenset(
    {"providers", "base_url", "api_key", "api_key_env", "kind", "command", "env", "pass_env"}
)

# Deeper than any key of the schema: an unknown table is reported whole from here.
MAX_DEPTH: Final = 8

# jp's own tools (``porcelain/app/query/tools.py`` registers them; a test keeps
# the two lists equal).  A conversation may switch these on or off.
BUILTIN_TOOLS: Final = frozenset({PROPOSE_COMPACTION, "recall"})


class Recorded(NamedTuple):
    """One ``config_delta`` as a conversation recorded it, and where from."""

    delta: Any
    source: str
    own: bool = False  # written by the user's own command here, or already named to them
    commit: str = ""  # the commit that recorded it, when known


class Ignored(NamedTuple):
    """A key a conversation's delta tried to set, left out by the trust rule."""

    path: tuple[str, ...]
    value: Any
    source: str
    reason: str


DEFINES = "only the user's configuration files define a tool or how it runs"
LOOSER = "a conversation may make a tool stricter (confirm = true), never looser"
TURNED_OFF = "your configuration turns this tool off; a conversation may not turn it on"
ONLY_OFF = "a conversation may turn this off (false), never on"
NOT_CHOOSABLE = "not a key a conversation may set"
INVALID = "not a valid value for this key"
OFFLINE_PROVIDER: Final = "offline"
MODEL_ID_PATHS: Final = frozenset(
    {("assistant", "model", "id"), ("conversation", "compaction", "review", "model", "id")}
)


NOT_ENABLED_PREFIX: Final = "the provider "


def not_enabled(provider: str) -> str:
    """The reason given for a recorded model whose provider the user did not enable."""
    return (
        f"{NOT_ENABLED_PREFIX}{provider!r} is not one your configuration enables "
        f"(add [providers.{provider}] to your config to allow it)"
    )


def _model_ids(path: tuple[str, ...], value: Any) -> Iterator[str]:
    """The model ids ``value`` (at ``path``) names, aliases left out."""
    if path in MODEL_ID_PATHS or path == ("model", "id"):
        if isinstance(value, str) and is_model_id(value):
            yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _model_ids((*path[-1:], str(key)), item)
    elif isinstance(value, list):
        for item in value:
            yield from _model_ids(path, item)


def enabled_providers(user: Mapping[str, Any], default_model: str | None) -> frozenset[str]:
    """The providers the user's own configuration ``user`` (every layer but the
    conversation's, merged) enables; ``default_model`` is the one a query naming
    no model uses."""
    out = {OFFLINE_PROVIDER}
    providers = user.get("providers")
    if isinstance(providers, Mapping):
        out.update(str(name) for name in providers if name != MCP)
    ids = [default_model] if default_model else []
    for path in MODEL_ID_PATHS:
        ids += _model_ids(path, _at(user, path))
    aliases = _at(user, ("assistant", "model", "aliases"))
    if isinstance(aliases, Mapping):
        ids += [v for v in aliases.values() if isinstance(v, str) and is_model_id(v)]
    ids += _model_ids(("rules",), _at(user, ("conversation", "compaction", "rules")))
    out.update(model_id.partition("/")[0] for model_id in ids)
    return frozenset(out)


def _at(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = data
    for part in path:
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def _provider_refusal(path: tuple[str, ...], value: Any, enabled: frozenset[str]) -> str | None:
    for model_id in _model_ids(path, value):
        provider = model_id.partition("/")[0]
        if provider not in enabled:
            return not_enabled(provider)
    return None


def _matches(path: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    return len(path) == len(pattern) and all(
        p == q or q == TOOL for p, q in zip(path, pattern, strict=True)
    )


def _leads_somewhere(path: tuple[str, ...]) -> bool:
    """Some allowed key lies under ``path``."""
    return any(
        _matches(path, key[: len(path)]) for key in CONVERSATION_KEYS if len(key) > len(path)
    )


def _allowed(path: tuple[str, ...]) -> bool:
    return any(_matches(path, key) for key in CONVERSATION_KEYS)


def _mentions_forbidden(value: Any) -> bool:
    if isinstance(value, Mapping):
        return any(k in NEVER_FROM_CONVERSATION or _mentions_forbidden(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_mentions_forbidden(v) for v in value)
    return False


def _resolved_ids(value: Any) -> bool:
    """Every ``model.id`` inside ``value`` is ``provider/name``, never an alias name:
    aliases are the user's, and jp records the id an alias stood for."""
    if isinstance(value, Mapping):
        model = value.get("model")
        if isinstance(model, Mapping) and "id" in model and not is_model_id(model["id"]):
            return False
        return all(_resolved_ids(v) for v in value.values())
    if isinstance(value, list):
        return all(_resolved_ids(v) for v in value)
    return True


def _valid(path: tuple[str, ...], value: Any) -> bool:
    node = node_at(path)
    if node is MODEL_REF:
        return is_model_id(value)
    if isinstance(node, Leaf):
        return node.check(value)
    if isinstance(node, TableArray):
        try:
            validate(nest(path, value), "conversation")
        except ConfigError:
            return False
        return not _mentions_forbidden(value) and _resolved_ids(value)
    return False


def filter_delta(
    recorded: Recorded,
    tools: Iterable[str],
    enabled: frozenset[str] | None = None,
    off: frozenset[str] = frozenset(),
) -> tuple[dict[str, Any], list[Ignored]]:
    """The part of ``recorded`` a conversation may set, and what was left out.

    ``tools`` are the names of the tools the user's files define; with
    ``BUILTIN_TOOLS`` and ``*`` they are the tools a delta may switch on,
    or make ask first.  Switching off, or making ask first, a tool that does
    not exist has no effect: it is dropped without a report.  ``enabled``
    (``enabled_providers``) are the providers a model id of a delta that is not
    ``own`` may name; None checks none.  ``off`` (``turned_off``) are the
    tools the user's own layers turn off: no delta, ``own`` or not, turns one
    of them on (a recorded delta outlives the command that wrote it; the
    user's ``--cfg`` for one command is a layer above every delta).
    """
    existing = {*tools, *BUILTIN_TOOLS, "*"}
    kept: dict[str, Any] = {}
    ignored: list[Ignored] = []
    if not isinstance(recorded.delta, Mapping):
        ignored.append(Ignored((), _bounded(recorded.delta), recorded.source, "not a table"))
        return kept, ignored
    for path, value in _walk(recorded.delta, ()):
        if value is None:  # the removal marker: back to the layers below, nothing added
            reason = _removal_refusal(path)
        else:
            reason = _refusal(path, value, existing)
        if reason is None and value is not None and enabled is not None and not recorded.own:
            reason = _provider_refusal(path, value, enabled)
        if reason is None and value is True and _turns_on(path, off):
            reason = TURNED_OFF
        if reason is None:
            _put(kept, path, value)
        elif reason:
            ignored.append(Ignored(path, _bounded(value), recorded.source, reason))
    return kept, ignored


def conversation_may_set(path: tuple[str, ...]) -> bool:
    """``path`` is one of ``CONVERSATION_KEYS`` (a tool's name in place of ``<tool>``)."""
    return _allowed(path) and not any(part in NEVER_FROM_CONVERSATION for part in path)


def _removal_refusal(path: tuple[str, ...]) -> str | None:
    """A null removes what the conversation recorded for one key it may set, no more."""
    return None if conversation_may_set(path) else NOT_CHOOSABLE


def removals(kept: Mapping[str, Any], path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The keys ``kept`` (a filtered delta) removes: those whose value is the null marker."""
    out: list[tuple[str, ...]] = []
    for key, value in kept.items():
        here = (*path, key)
        if value is None:
            out.append(here)
        elif isinstance(value, Mapping):
            out += removals(value, here)
    return out


def without_removals(kept: Mapping[str, Any]) -> dict[str, Any]:
    """``kept`` minus its removal markers (and the tables they leave empty)."""
    out: dict[str, Any] = {}
    for key, value in kept.items():
        if isinstance(value, Mapping):
            sub = without_removals(value)
            if sub:
                out[key] = sub
        elif value is not None:
            out[key] = value
    return out


def _walk(table: Mapping[str, Any], path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Each value the schema treats as one (unknown tables are walked, to MAX_DEPTH)."""
    for key, value in table.items():
        here = (*path, str(key))
        if isinstance(value, Mapping) and len(here) < MAX_DEPTH and _is_table(here):
            yield from _walk(value, here)  # an empty table sets nothing
        else:
            yield here, value


def _bounded(value: Any, depth: int = MAX_DEPTH) -> Any:
    """``value`` for a report: containers nested deeper than ``depth`` shown as "...".

    A hostile delta may nest as deep as JSON allows; what is shown of it stays small.
    """
    if isinstance(value, Mapping):
        return {str(k): _bounded(v, depth - 1) for k, v in value.items()} if depth else "..."
    if isinstance(value, list):
        return [_bounded(v, depth - 1) for v in value] if depth else "..."
    return value


def _is_table(path: tuple[str, ...]) -> bool:
    if _allowed(path) or (
        path[: len(TOOLS_PATH)] == TOOLS_PATH and len(path) > len(TOOLS_PATH) + 1
    ):
        return False  # a tool's fields are reported whole
    node = node_at(path)
    return node is None or isinstance(node, Table | MapOf) or _leads_somewhere(path)


def _refusal(path: tuple[str, ...], value: Any, existing: set[str]) -> str | None:
    """None to keep the key, a reason to report it, "" to drop it silently."""
    tool = path[: len(TOOLS_PATH)] == TOOLS_PATH and len(path) > len(TOOLS_PATH)
    keys = (*TOOLS_PATH, *path[len(TOOLS_PATH) + 1 :]) if tool else path  # not the tool's name
    if any(part in NEVER_FROM_CONVERSATION for part in keys) or not _allowed(path):
        return DEFINES if tool else NOT_CHOOSABLE
    if not _valid(path, value):
        return INVALID
    if path == RECALL_ENABLE and value is not False:
        return ONLY_OFF
    if not tool:
        return None
    name, field = path[len(TOOLS_PATH)], path[-1]
    if field == "confirm" and value is not True:
        return LOOSER
    if name == "recall" and field == "enable" and value is not False:
        return ONLY_OFF
    if name in existing or f"{name.rpartition('.')[0]}.*" in existing:
        return None  # a configured tool, or one of a configured MCP server's (``mcp.S.*``)
    if field == "enable" and value is True:
        return f"{name!r} is not a configured tool, and a conversation defines none"
    return ""  # off, or asking first, for a tool that is not there: no effect


def turned_off(own: Mapping[str, Any]) -> frozenset[str]:
    """The tools the user's own layers (``own``: files and command line, merged)
    turn off: ``conversation.tools.NAME.enable = false`` (``*`` for all) and an MCP
    server's ``providers.mcp.S.tools.T.enable = false`` (``mcp.S.T``; ``mcp.S.*``)."""
    out: set[str] = set()
    tools = (own.get("conversation") or {}).get("tools") if isinstance(own, Mapping) else None
    for name, table in (tools or {}).items() if isinstance(tools, Mapping) else ():
        if isinstance(table, Mapping) and table.get("enable") is False:
            out.add(str(name))
    servers = (own.get("providers") or {}).get(MCP) if isinstance(own, Mapping) else None
    for sname, server in (servers or {}).items() if isinstance(servers, Mapping) else ():
        stools = server.get("tools") if isinstance(server, Mapping) else None
        for tname, table in (stools or {}).items() if isinstance(stools, Mapping) else ():
            if isinstance(table, Mapping) and table.get("enable") is False:
                out.add(f"mcp.{sname}.{tname}")
    return frozenset(out)


def _turns_on(path: tuple[str, ...], off: frozenset[str]) -> bool:
    """``path`` is a tool's ``enable`` that ``off`` keeps off (the tool, its server's
    ``*`` or every tool's ``*``)."""
    if len(path) != len(TOOLS_PATH) + 2 or path[: len(TOOLS_PATH)] != TOOLS_PATH:
        return False
    name, field = path[len(TOOLS_PATH)], path[-1]
    if field != "enable":
        return False
    return bool({name, "*", f"{name.rpartition('.')[0]}.*"} & off)


def _put(out: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = out
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value
