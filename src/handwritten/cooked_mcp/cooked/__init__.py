"""The Cooked REST client: the only code that speaks Cooked's API (see docs/cooked-api.md).

Its errors are drawn with every other in ``cooked_mcp.exceptions``.
"""

from cooked_mcp.cooked.client import CookedClient

__all__ = ["CookedClient"]
