"""Shared test configuration.

Every test cites the requirement IDs it proves with one marker:
``@pytest.mark.req("tools.READ_TOOL.5", "tools.SCHEMA.2")``. The traceability
gate (tests/traceability.py) reads those markers after collection.
"""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio, the loop the server itself uses."""
    return "asyncio"
