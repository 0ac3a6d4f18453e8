"""The transport tests' one HTTP server fixture."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from servers import HTTP_TOKEN, HttpServer, http_server, server_env, write_limits

from cooked_fake import FakeCooked


@pytest.fixture(scope="module")
def server(running_fake: FakeCooked, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One real ``cooked-mcp --transport http`` process per module, on the module's fake, with the
    bearer token ``HTTP_TOKEN``. It logs at debug level, so that a secrecy test sees everything the
    server can log, and stops within 0.5 s, as the imports some tests leave running at Cooked would
    otherwise hold the stop for the whole grace."""
    env = server_env(
        tmp_path_factory.mktemp("home"),
        running_fake.base_url,
        COOKED_MCP_HTTP_TOKEN=HTTP_TOKEN,
        COOKED_MCP_LOG_LEVEL="debug",
    )
    write_limits(env, stop_grace_seconds=0.5)
    with http_server(env) as running:
        yield running
