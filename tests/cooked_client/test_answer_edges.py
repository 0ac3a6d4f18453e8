"""Edge answers from Cooked: a loop of exception causes, a bare array, an oversized body."""

from __future__ import annotations

import tracemalloc
from collections.abc import AsyncIterator

import httpx
import pytest

from cooked_mcp.cooked import decoding, endpoints, models
from cooked_mcp.cooked.sender import Answer, Sender, read_bounded
from cooked_mcp.exceptions import CookedUnavailable, UnexpectedAnswer

pytestmark = pytest.mark.anyio


def _cyclic_connect_error() -> httpx.ConnectError:
    """Plain re-raise code makes a cause cycle: b.__cause__ is a and a.__cause__ is b."""
    try:
        raise ConnectionResetError("reset")
    except ConnectionResetError as a:
        try:
            raise httpx.ConnectError("cannot connect") from a
        except httpx.ConnectError as b:
            try:
                raise a from b
            except ConnectionResetError:
                return b
    raise AssertionError("unreachable")


@pytest.mark.req("api-client.ERRORS.5")
async def test_a_connect_error_whose_causes_form_a_cycle_is_still_a_connection_failure() -> None:
    error = _cyclic_connect_error()
    assert error.__cause__ is not None and error.__cause__.__cause__ is error

    def refuse(request: httpx.Request) -> httpx.Response:
        raise error

    sender = Sender("https://cooked.test", transport=httpx.MockTransport(refuse))
    with pytest.raises(CookedUnavailable) as caught:
        await sender.send(endpoints.LOGIN, "/api/public/login")
    assert "could not be reached" in str(caught.value)
    await sender.aclose()


@pytest.mark.req("api-client.RESPONSES.1")
def test_a_bare_array_where_an_object_is_expected_is_said_to_be_no_json_object() -> None:
    with pytest.raises(UnexpectedAnswer) as caught:
        decoding.decode(models.CookedRecipe, Answer(200, b"[]", False, None), endpoints.GET_RECIPE)
    assert caught.value.problem == "is not a JSON object", caught.value.problem


@pytest.mark.req("api-client.LIMITS.1")
async def test_an_oversized_answer_is_cut_without_a_third_copy_of_the_bound() -> None:
    limit = 8 * 1024 * 1024

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(12 * 16):  # 12 MiB in 64 KiB chunks, as httpx hands them over
            yield b"x" * 65536

    tracemalloc.start()
    try:
        body, cut = await read_bounded(chunks(), limit)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert cut and len(body) == limit
    assert peak < 2.25 * limit, f"peak {peak / 2**20:.1f} MiB"
