"""What `jp tools ls` lists: every tool the configuration defines, offered or not."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from porcelain.app.query.mcp_tools import Offer, offer, server_tables
from porcelain.app.query.registry import BUILTINS
from porcelain.app.query.tools import enabled_tools
from porcelain.config import Config


def tool_rows(config: Config, environ: Mapping[str, str], note: Callable[[str], None]) -> list[Offer]:
    """Built-ins, command tools, then each MCP server's tools (its servers are
    started to list them and stopped before this returns)."""
    offered = enabled_tools(config)
    rows: list[Offer] = []
    for name in sorted(BUILTINS):
        on = name in offered
        rows.append(Offer(name, "builtin", on, "enabled" if on else "off by default or enable = false"))
    for name, table in sorted(config.tools().items()):
        if name in BUILTINS or not table.get("command"):
            continue
        on = name in offered
        why = ("confirm = true (asks)" if table.get("confirm", True) else "confirm = false") if on else "enable = false"
        rows.append(Offer(name, "command", on, why))
    if server_tables(config):
        served = offer(config, environ, note)
        try:
            rows += served.rows
        finally:
            if served.servers is not None:
                served.servers.close()
    return rows
