"""The client tests cannot reach the real Cooked: every test runs behind a loopback-only guard."""

from __future__ import annotations

import pytest
from client_support import BASE_URL, PASSWORD
from pydantic import SecretStr

from cooked_mcp.config import DEFAULT_BASE_URL
from cooked_mcp.cooked import CookedClient, CookedUnavailable


@pytest.mark.req("authentication.VERIFICATION.2", "api-client.VERIFICATION.2")
@pytest.mark.anyio
async def test_the_real_cooked_is_unreachable_from_these_tests() -> None:
    assert "cooked.wiki" not in BASE_URL
    async with CookedClient(DEFAULT_BASE_URL, "someone", SecretStr(PASSWORD)) as client:
        with pytest.raises(CookedUnavailable) as caught:
            await client.list_recipes(1, 1)

    assert "could not be reached" in str(caught.value)
