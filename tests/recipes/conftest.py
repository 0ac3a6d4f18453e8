"""Fixtures for the recipe tool tests: one fake Cooked per module, reset before every test.

Starting a fake costs a thread and a socket; resetting it restores the seed data, faults,
sessions and records, which is all a test can observe, so sharing it is safe and fast.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from mcp import Client
from sessions import cooked_session

from cooked_fake import FakeCooked


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module scope, so one MCP session (``client``) can serve every example of a property test."""
    return "asyncio"


@pytest.fixture(scope="module")
async def client(running_fake: FakeCooked) -> AsyncIterator[Client]:
    """A long-lived MCP session on the module's fake; a fake reset only makes it log in again."""
    async with cooked_session(running_fake) as session:
        yield session
