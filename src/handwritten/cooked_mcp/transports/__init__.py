"""The two ways cooked-mcp speaks MCP: stdio (default) and Streamable HTTP."""
