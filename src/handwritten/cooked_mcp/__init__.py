"""cooked-mcp: a single-user MCP server for a Cooked account."""

__version__ = "0.1.0"
