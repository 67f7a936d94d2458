"""`jp mcp`: the store served to agents over MCP (answers, server) and the
server's entry in other tools' configuration (install).  docs/mcp.md."""
