"""The Cooked REST client: the only code that speaks Cooked's API (docs/cooked-api.md)."""

from cooked_mcp.cooked.client import CookedClient

__all__ = ["CookedClient"]
