"""A refused Host (421) or Origin (403) names the setting that would let it in."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from servers import INITIALIZE, MCP_HEADERS, http_server, server_env

from cooked_fake import FakeCooked


@pytest.mark.req("server.TRANSPORT.2-2", "server.TRANSPORT.5")
def test_refused_host_and_origin_answers_name_the_settings(tmp_path: Path) -> None:
    with (
        FakeCooked() as fake,
        http_server(server_env(tmp_path, fake.base_url)) as server,
    ):

        def post(**headers: str) -> httpx.Response:
            return httpx.post(
                server.url, headers={**MCP_HEADERS, **headers}, content=json.dumps(INITIALIZE), timeout=10
            )

        host = post(Host="kitchen.lan:8123")
        origin = post(Origin="http://kitchen.lan:8123")
        served = post()
    assert (
        host.status_code == 421 and "mcp.allowed_hosts" in host.text and "pass the Host header" in host.text
    )
    assert host.headers["content-length"] == str(len(host.content))
    assert origin.status_code == 403 and "mcp.allowed_origins" in origin.text
    assert "Invalid" not in host.text + origin.text
    assert served.status_code == 200  # every other answer passes through untouched
