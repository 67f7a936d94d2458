"""What a command tool's process may see of jp's environment.

A tool runs with ``BASE_ENV`` (and the ``LC_*`` locale variables) and only
what its own table adds: ``pass_env = ["NAME", ...]`` copies variables from
jp's environment, ``env = { NAME = "value" }`` sets them.  A provider's key
reaches the provider and nothing else, so naming one in either is a
configuration error.  Pure: the environment is passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from porcelain.config.explain import dotted_key
from porcelain.config.schema import MCP
from porcelain.domain.secrets import PROVIDER_KEYS as PROVIDER_KEYS
from porcelain.errors import ConfigError

# Variables every tool gets (when jp has them), besides LC_*.
BASE_ENV: Final = frozenset({"PATH", "HOME", "LANG", "TMPDIR", "TERM"})

TOOLS: Final = ("conversation", "tools")


def provider_keys(data: Mapping[str, Any]) -> frozenset[str]:
    """``PROVIDER_KEYS`` and every ``providers.NAME.api_key_env`` of ``data``."""
    names = set(PROVIDER_KEYS)
    providers = data.get("providers")
    if isinstance(providers, Mapping):
        for provider, table in providers.items():
            if provider == MCP:  # MCP servers, whose ``env`` is checked by check_mcp_env
                continue
            name = table.get("api_key_env") if isinstance(table, Mapping) else None
            if isinstance(name, str) and name:
                names.add(name)
    return frozenset(names)


def check_tool_env(data: Mapping[str, Any], origin: Callable[[tuple[str, ...]], str]) -> None:
    """Refuse a tool table that passes or sets a provider's key.

    ``origin`` names the file a key came from, for the message.
    """
    keys = provider_keys(data)
    tools = data.get("conversation", {}).get("tools", {})
    servers = data.get("providers", {}).get(MCP, {})
    for base, tables in ((TOOLS, tools), (("providers", MCP), servers)):
        _check_tables(base, tables, keys, origin)


def _check_tables(
    base: tuple[str, ...],
    tables: Any,
    keys: frozenset[str],
    origin: Callable[[tuple[str, ...]], str],
) -> None:
    for name, table in tables.items() if isinstance(tables, Mapping) else ():
        if not isinstance(table, Mapping):
            continue
        for field in ("pass_env", "env"):
            given = table.get(field)
            if not isinstance(given, list | Mapping):
                continue
            found = sorted(str(v) for v in given if v in keys)
            if found:
                path = (*base, str(name), field)
                raise ConfigError(
                    f"{origin(path)}: {dotted_key(path)} names {found[0]}, a model provider's "
                    "key; no tool ever receives it",
                    f"remove {found[0]} from {dotted_key(path)}: the key reaches the provider only",
                )


def tool_environment(
    table: Mapping[str, Any], environ: Mapping[str, str], secrets: frozenset[str] = PROVIDER_KEYS
) -> dict[str, str]:
    """The environment of one command tool's process."""
    env = {k: v for k, v in environ.items() if k in BASE_ENV or k.startswith("LC_")}
    passed = table.get("pass_env")
    for name in passed if isinstance(passed, list) else ():
        if isinstance(name, str) and name in environ:
            env[name] = environ[name]
    given = table.get("env")
    if isinstance(given, Mapping):
        env.update({str(k): str(v) for k, v in given.items()})
    return {k: v for k, v in env.items() if k not in secrets}
