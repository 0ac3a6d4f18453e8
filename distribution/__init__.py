"""Release tooling: the MCP Bundle and the MCP Registry entry, generated from the package's metadata."""
