"""Start-up builds no Cooked client: the handlers, the client and httpx wait for the first call.

`make bench` holds start-up to tools/list to 1.10x a bare SDK server's; importing the Cooked
client, its models and httpx was about 35 ms of cooked-mcp's own share, needed by no one until
a tool is called. Checked in a fresh interpreter, where ``sys.modules`` shows what was imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from servers import server_env

from cooked_fake import FakeCooked

#: Runs in a fresh interpreter: imports what the entry point and both transports import,
#: builds the application as the entry point does, lists the tools (through the in-memory
#: client, which imports httpx itself), then makes two first calls at once; prints what was
#: imported at each step.
_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import anyio
    import cooked_mcp.cli, cooked_mcp.transports.stdio, cooked_mcp.transports.http  # what the entry point loads
    from cooked_mcp.config import load_settings
    from cooked_mcp.app import build_application

    WATCHED = ("httpx", "cooked_mcp.cooked.client", "cooked_mcp.handlers")

    def loaded():
        return sorted(name for name in WATCHED if name in sys.modules)

    async def main():
        seen = {}
        settings = load_settings(config_path=None, environ=json.loads(sys.argv[1]))
        async with build_application(settings) as application:
            seen["stray_lookup"] = hasattr(application.tools, "clinet")  # builds nothing
            seen["built"] = loaded()
            from mcp import Client  # the in-memory client imports httpx itself: checked before it
            async with Client(application.server) as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                seen["listed"] = [name for name in loaded() if name != "httpx"]
                results = []
                async with anyio.create_task_group() as group:
                    for _ in range(2):
                        async def call():
                            results.append(await client.call_tool("read", {"target": "shopping_list"}))
                        group.start_soon(call)
            seen["called"] = loaded()
            seen["tools"] = names
            seen["errors"] = [r.is_error for r in results]
            seen["client_built"] = application.tools.client is not None
        print(json.dumps(seen))

    anyio.run(main)
    """
)


@pytest.mark.req("authentication.LOGIN.1", "server.SINGLE_USER.1")
def test_start_up_lists_tools_without_the_cooked_client_and_the_first_calls_build_one(
    tmp_path: Path,
) -> None:
    with FakeCooked() as fake:
        environ = server_env(tmp_path, fake.base_url)
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT, json.dumps(environ)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        logins = fake.login_count
    assert seen["built"] == [], "the entry point's modules or building the application imported the client"
    assert seen["stray_lookup"] is False
    assert seen["listed"] == [], "listing the tools imported the Cooked client"
    assert len(seen["tools"]) == 5
    assert seen["called"] == ["cooked_mcp.cooked.client", "cooked_mcp.handlers", "httpx"]
    # Two first calls at once: both answered, by one client with one login (one account, one session).
    assert seen["errors"] == [False, False] and seen["client_built"]
    assert logins == 1
