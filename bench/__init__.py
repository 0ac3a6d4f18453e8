"""``make bench``: how much cooked-mcp adds on top of the MCP SDK and of Cooked itself.

Every number is measured against a baseline run in the same process tree at the same
time: start-up against a bare SDK server, tool calls against the same Cooked requests
made directly with httpx, all against the fake Cooked on 127.0.0.1. See ``__main__``.
"""
