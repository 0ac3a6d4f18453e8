"""What a call still running gets when the HTTP server is stopped (issue 17 item 9).

Before: uvicorn cancelled it after the grace period and answered a plain-text 500,
although Cooked may already have applied the change. No requirement speaks of shutdown;
these cite the /mcp endpoint.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import anyio
import httpx
import pytest
from servers import INITIALIZE, MCP_HEADERS, http_server, server_env

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, FakeCooked
from cooked_mcp.transports.http import SHUTDOWN_GRACE_SECONDS

pytestmark = pytest.mark.anyio

IMPORT_URL = "https://example.org/recipes/cut-off-by-shutdown"


@pytest.mark.req("server.TRANSPORT.5", "recipes.SAVE.3")
@pytest.mark.parametrize("progress", [False, True], ids=["json", "event-stream"])
async def test_a_write_cut_off_by_shutdown_is_told_its_change_may_have_been_made(
    fake: FakeCooked, tmp_path: Path, progress: bool
) -> None:
    fake.set_import_result(IMPORT_URL, "saved")
    fake.fail_with("slow", "POST", "/api/new", seconds=60)
    env = server_env(tmp_path, fake.base_url, login=SEED_LOGIN, password=SEED_PASSWORD)
    params: dict[str, object] = {"name": "save_recipe", "arguments": {"source": "url", "url": IMPORT_URL}}
    if progress:
        params["_meta"] = {"progressToken": "p"}
    request = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}
    with http_server(env) as server:
        async with httpx.AsyncClient(headers=MCP_HEADERS, timeout=30) as http:
            opened = await http.post(server.url, json=INITIALIZE)
            http.headers["mcp-session-id"] = opened.headers["mcp-session-id"]
            http.headers["mcp-protocol-version"] = "2025-06-18"
            await http.post(server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            answers: list[httpx.Response] = []

            async def post() -> None:
                answers.append(await http.post(server.url, json=request))

            with anyio.fail_after(SHUTDOWN_GRACE_SECONDS + 20):
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(post)
                    await anyio.sleep(0.5)  # the import is running at Cooked
                    server.process.send_signal(signal.SIGTERM)
        assert await anyio.to_thread.run_sync(server.stop) == 0

    [answer] = answers
    assert answer.status_code == 200
    if progress:
        *_, last = [json.loads(line[5:]) for line in answer.text.splitlines() if line.startswith("data:")]
    else:
        assert answer.headers["content-type"] == "application/json"
        last = answer.json()
    assert last["id"] == 5
    assert "may or may not have been made" in last["error"]["message"]
    assert "Traceback" not in server.stderr()
