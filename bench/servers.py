"""The servers under test, started the way a desktop client or an HTTP client would start them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.servers import http_server

from .clients import McpClient, baseline_argv, connect_http, connect_stdio, stdio_params
from .context import Context, new_token
from .procs import COOKED_MCP, HOST, child_pids, cmdline, free_port, spawn, wait_for_port


@dataclass(frozen=True)
class StdioServer:
    client: McpClient
    pid: int


@contextlib.asynccontextmanager
async def cooked_stdio(ctx: Context) -> AsyncIterator[StdioServer]:
    """cooked-mcp over stdio with the benchmark's clean environment, and its PID (for /proc)."""
    before = child_pids()
    with ctx.errlog("cooked-mcp-stdio") as errlog:
        async with connect_stdio(stdio_params(ctx.env()), errlog, ctx.plan.mode) as client:
            new = [pid for pid in child_pids() - before if COOKED_MCP in cmdline(pid)]
            if len(new) != 1:
                raise RuntimeError(f"expected one new cooked-mcp child process, found {new}")
            yield StdioServer(client, new[0])


@contextlib.asynccontextmanager
async def baseline_stdio(ctx: Context, replay: Path | None = None) -> AsyncIterator[McpClient]:
    """The bare SDK server (bench/baseline_server.py), spawned like cooked-mcp."""
    params = stdio_params(ctx.env(), baseline=True, replay=replay)
    with ctx.errlog("baseline-stdio") as errlog:
        async with connect_stdio(params, errlog, ctx.plan.mode) as client:
            yield client


@dataclass(frozen=True)
class HttpServer:
    url: str
    token: str
    pid: int

    def client(self, mode: str) -> contextlib.AbstractAsyncContextManager[McpClient]:
        return connect_http(self.url, self.token, mode)


@contextlib.contextmanager
def cooked_http(ctx: Context) -> Iterator[HttpServer]:
    """``cooked-mcp --transport http`` on a free 127.0.0.1 port with a bearer token.

    Started by the tests' helper, which also insists on a clean exit (status 0) after SIGTERM.
    """
    token = new_token()
    with http_server(ctx.env(COOKED_MCP_HTTP_TOKEN=token)) as server:
        yield HttpServer(server.url, token, server.process.pid)


@contextlib.contextmanager
def baseline_http(ctx: Context, replay: Path | None = None) -> Iterator[HttpServer]:
    """The bare SDK server over Streamable HTTP (uvicorn configured like cooked-mcp's, no token check)."""
    port = free_port()
    argv = [*baseline_argv(replay), "--http", f"{HOST}:{port}"]
    with spawn("bare SDK server --http", argv, ctx.env(), ctx.logs / "baseline-http.log") as child:
        wait_for_port(child, port)
        yield HttpServer(f"http://{HOST}:{port}/mcp", new_token(), child.pid)
