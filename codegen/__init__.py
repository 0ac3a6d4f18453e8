"""The cooked-mcp generator: features/ in, src/generated/ and docs/ out.

Run it as ``python -m codegen`` (``make generate``); ``--check`` compares
instead of writing, so CI can fail when committed output is stale.
"""
