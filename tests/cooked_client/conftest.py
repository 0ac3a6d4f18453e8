"""Fixtures for the Cooked client tests: a respx router and a guard that keeps every test on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import respx
from client_support import BASE_URL, LOGIN_PATH, login_response


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    """Routes for https://cooked.test with a working login; tests add the routes they need."""
    mock = respx.MockRouter(base_url=BASE_URL, assert_all_called=False, assert_all_mocked=True)
    mock.post(LOGIN_PATH, name="login").mock(return_value=login_response())
    yield mock
