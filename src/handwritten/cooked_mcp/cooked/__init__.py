"""The Cooked REST client: the only code that speaks Cooked's API (see ../shared/cooked-api.md)."""

from cooked_mcp.cooked.client import CookedClient
from cooked_mcp.cooked.errors import (
    CookedAuthError,
    CookedError,
    CookedRequestError,
    CookedResponseError,
    CookedUnavailable,
)

__all__ = [
    "CookedAuthError",
    "CookedClient",
    "CookedError",
    "CookedRequestError",
    "CookedResponseError",
    "CookedUnavailable",
]
