"""The real ``cooked-mcp`` process: transport choice, address, token sources, startup refusals,
signals and log secrecy. A test that starts a process checks several things in it; a
refusal decided before anything listens is shown once through the process and otherwise runs
the entry point in this process (``run_main``), and the banner is read from the process for one
token source and built in this process for the others (only its wording differs).
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import time
from pathlib import Path

import anyio
import httpx
import pytest
from servers import (
    INITIALIZE,
    MCP_HEADERS,
    HttpServer,
    free_port,
    http_client,
    http_server,
    is_listening,
    python_command,
    run_main,
    run_server,
    stdio_client,
)

from cooked_fake import SEED_LOGIN, FakeCooked
from cooked_mcp.config import load_settings
from cooked_mcp.config.limits import Limits
from cooked_mcp.transports import http as http_transport
from cooked_mcp.transports.connection_guard import listen
from cooked_mcp.transports.http import MCP_PATH

pytestmark = pytest.mark.anyio


def write_config(process_env: dict[str, str], text: str) -> None:
    """The default config file ($XDG_CONFIG_HOME/cooked-mcp/config.toml) of the process."""
    path = Path(process_env["XDG_CONFIG_HOME"]) / "cooked-mcp" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def status(url: str, token: str | None, **headers: str) -> int:
    """The status of an MCP initialize POST to ``url``."""
    sent = dict(MCP_HEADERS, **headers)
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return httpx.post(url, headers=sent, content=json.dumps(INITIALIZE), timeout=10).status_code


def one_line_error(result: object) -> str:
    """The single stderr line of a refused start (exit 2, nothing on stdout)."""
    assert getattr(result, "returncode", None) == 2, result
    stdout, stderr = getattr(result, "stdout", ""), getattr(result, "stderr", "")
    assert stdout == ""
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("cooked-mcp: ")
    return str(lines[0])


@pytest.mark.req("server.TRANSPORT.2", "server.TRANSPORT.4")
@pytest.mark.parametrize("transport", ["foo", "HTTP"])
def test_an_unknown_transport_is_refused_before_serving(
    process_env: dict[str, str], fake: FakeCooked, transport: str
) -> None:
    port = free_port()
    result = run_main(process_env, "--transport", transport, "--http-addr", f"127.0.0.1:{port}")
    line = one_line_error(result)
    assert "--transport stdio" in line and "--transport http" in line
    assert not is_listening(port) and fake.requests == []


@pytest.mark.req("server.TRANSPORT.2", "server.TRANSPORT.2-1")
async def test_transport_stdio_selects_stdio(process_env: dict[str, str]) -> None:
    async with stdio_client(process_env, "--transport", "stdio") as client:
        assert len((await client.list_tools()).tools) == 5


@pytest.mark.req("server.SECURITY.1", "server.TRANSPORT.3")
@pytest.mark.parametrize("host", ["0.0.0.0", "[::]"])
def test_a_wildcard_listener_without_a_token_exits_2_before_binding(
    process_env: dict[str, str], fake: FakeCooked, host: str
) -> None:
    port = free_port()
    # Hold the port: had the server tried to bind, it would report "address already in use".
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", port))
        held.listen()
        run = run_server if host == "0.0.0.0" else run_main  # the real process once, then in this one
        result = run(process_env, "--transport", "http", "--http-addr", f"{host}:{port}")
    line = one_line_error(result)
    assert "refusing to serve HTTP on non-loopback address" in line and "without a bearer token" in line
    assert "COOKED_MCP_HTTP_TOKEN" in line and "127.0.0.1" in line
    assert "cannot listen" not in line
    assert not is_listening(port) and fake.requests == []


@pytest.mark.req(
    "server.SECURITY.1",
    "server.SECURITY.3",
    "server.SECURITY.7",
    "server.TRANSPORT.2-2",
    "server.TRANSPORT.3",
    "server.VERIFICATION.1",
)
async def test_a_wildcard_listener_with_a_token_serves_and_still_checks_host_and_origin(
    process_env: dict[str, str], fake: FakeCooked
) -> None:
    token = "wildcard-token-9d2e"
    port = free_port()
    process_env["COOKED_MCP_HTTP_TOKEN"] = token
    with http_server(process_env, "--http-addr", f"0.0.0.0:{port}", port=port) as server:
        assert fake.requests == [], "the server contacted Cooked at startup"
        async with http_client(server.url, token) as client:
            assert len((await client.list_tools()).tools) == 5
        assert fake.requests == [], "listing tools needs no Cooked session"
        assert status(server.url, None) == 401
        assert status(server.url, token[:-1] + "X") == 401
        assert status(server.url, token) == 200
        assert status(server.url, token, Origin="http://evil.example") == 403
        assert status(server.url, token, Host=f"evil.example:{port}") == 421
        assert status(server.url, token, Host=f"0.0.0.0:{port}") == 421
        assert status(server.url, token, Origin=f"http://0.0.0.0:{port}") == 403


@pytest.mark.req("server.TRANSPORT.3")
def test_a_port_in_use_is_one_clear_line_and_exit_2(process_env: dict[str, str]) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        result = run_server(process_env, "--transport", "http", "--http-addr", f"127.0.0.1:{port}")
    line = one_line_error(result)
    assert line.startswith(f"cooked-mcp: cannot listen on 127.0.0.1:{port}: address already in use")


@pytest.mark.req("server.TRANSPORT.3")
def test_an_address_this_machine_lacks_is_one_clear_line_and_exit_2(process_env: dict[str, str]) -> None:
    process_env["COOKED_MCP_HTTP_TOKEN"] = "t0ken"
    result = run_server(process_env, "--transport", "http", "--http-addr", "192.0.2.1:8123")  # TEST-NET-1
    line = one_line_error(result)
    assert line.startswith("cooked-mcp: cannot listen on 192.0.2.1:8123: ")


@pytest.mark.req("server.TRANSPORT.3")
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_connections_to_the_listening_sockets_send_without_nagle_delays(host: str) -> None:
    """uvicorn serves ``listen``'s sockets through asyncio, which turns Nagle's algorithm off
    (TCP_NODELAY) only on connections whose socket names its protocol: without it every answer
    over HTTP waited 40 ms for the client's delayed ACK (bench.ab: 45 ms a call instead of 6)."""
    loop = asyncio.get_running_loop()
    accepted: asyncio.Queue[asyncio.BaseTransport] = asyncio.Queue()

    class Accept(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            accepted.put_nowait(transport)

    sockets = listen(host, 0)
    try:
        for sock in sockets:
            server = await loop.create_server(Accept, sock=sock)
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            transport = await asyncio.wait_for(accepted.get(), 5)
            nodelay = transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            writer.close()
            transport.close()
            server.close()
            assert nodelay, f"Nagle's algorithm is on for connections to {sock.getsockname()}"
    finally:
        for sock in sockets:
            sock.close()


@pytest.mark.req("server.SECURITY.11")
@pytest.mark.parametrize("token", ["", "   "])
def test_an_empty_token_exits_2(process_env: dict[str, str], token: str) -> None:
    process_env["COOKED_MCP_HTTP_TOKEN"] = token
    result = run_main(process_env, "--transport", "http", "--http-addr", f"127.0.0.1:{free_port()}")
    assert "COOKED_MCP_HTTP_TOKEN is empty" in one_line_error(result)


@pytest.mark.req("server.SECURITY.8")
def test_http_token_with_http_token_cmd_exits_2(process_env: dict[str, str]) -> None:
    write_config(process_env, '[mcp]\nhttp_token = "secret-one"\nhttp_token_cmd = "echo secret-two"\n')
    result = run_main(process_env, "--transport", "http", "--http-addr", f"127.0.0.1:{free_port()}")
    line = one_line_error(result)
    assert "mcp.http_token and mcp.http_token_cmd are both set" in line
    assert "secret-one" not in line and "secret-two" not in line


@pytest.mark.req(
    "server.CONFIG.8",
    "server.CONFIG.8-1",
    "server.CONFIG.8-2",
    "server.TRANSPORT.3",
    "server.SECURITY.4",
    "server.SECURITY.5",
    "server.SECURITY.9",
    "server.SECURITY.10",
)
def test_flag_beats_environment_beats_toml_for_the_address_and_the_token(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    flag_port, env_port, toml_port = free_port(), free_port(), free_port()
    marker = tmp_path / "token-command-ran"
    command = python_command(f"import pathlib; pathlib.Path({str(marker)!r}).touch(); print('  cmd-token  ')")
    write_config(
        process_env, f"[mcp]\nhttp_addr = '127.0.0.1:{toml_port}'\nhttp_token_cmd = '''{command}'''\n"
    )

    process_env["COOKED_MCP_HTTP_ADDR"] = f"127.0.0.1:{env_port}"
    with http_server(process_env, "--http-addr", f"127.0.0.1:{flag_port}", port=flag_port) as server:
        assert not is_listening(env_port) and not is_listening(toml_port)
        # The TOML command's output, trimmed, is the token.
        assert marker.exists()
        assert status(server.url, "cmd-token") == 200
        assert status(server.url, None) == 401

    marker.unlink()
    process_env["COOKED_MCP_HTTP_TOKEN"] = "env-token"
    with http_server(process_env, port=env_port) as server:
        assert not is_listening(toml_port)
        assert status(server.url, "env-token") == 200
        assert status(server.url, "cmd-token") == 401
    assert not marker.exists(), "the token command ran although COOKED_MCP_HTTP_TOKEN was set"


@pytest.mark.req("server.TRANSPORT.2-2")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_signal_stops_the_server_cleanly_with_a_client_connected(
    process_env: dict[str, str], sig: signal.Signals
) -> None:
    with http_server(process_env) as server:
        async with http_client(server.url) as client:
            await client.list_tools()
            started = time.monotonic()
            code = await anyio.to_thread.run_sync(server.stop, sig)
            elapsed = time.monotonic() - started
    assert code == 0, server.stderr()
    assert elapsed < Limits().stop_grace_seconds, f"stopping took {elapsed:.1f} s: a connection held it up"
    assert "Traceback" not in server.stderr()
    assert not is_listening(server.port)


@pytest.mark.req("server.TRANSPORT.2-2")
def test_a_signal_as_soon_as_the_port_opens_still_exits_0(process_env: dict[str, str]) -> None:
    # The signal handlers are in place before the port is bound, so even a signal that
    # arrives while uvicorn is still starting ends the process cleanly.
    with http_server(process_env, poll_interval=0.001) as server:
        code = server.stop(signal.SIGINT)
    assert code == 0, server.stderr()
    assert "Traceback" not in server.stderr() and "KeyboardInterrupt" not in server.stderr()


def banner_of(server: HttpServer) -> str:
    """The line the server prints once it listens (it may follow the port opening by a moment)."""
    deadline = time.monotonic() + 15
    while "serving MCP over HTTP" not in server.stderr():
        assert time.monotonic() < deadline, server.stderr()
        time.sleep(0.05)
    return next(line for line in server.stderr().splitlines() if "serving MCP over HTTP" in line)


TOKEN_CANARY = "CANARY-banner-token-5e0d"


def banner_built_here(process_env: dict[str, str]) -> tuple[str, str]:
    """The banner and URL of ``cooked-mcp --http-addr 127.0.0.1:PORT`` with ``process_env``, built in
    this process by the function the server prints it with, stderr taken as not a terminal (a
    file, as under a service manager, as in the real-process case)."""
    port = free_port()
    settings = load_settings(
        config_path=None, environ=process_env, transport="http", http_addr=f"127.0.0.1:{port}"
    )
    url = f"http://127.0.0.1:{port}{MCP_PATH}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(http_transport.os, "isatty", lambda fd: False)
        return http_transport._banner(settings), url


@pytest.mark.req("server.SECURITY.2", "server.SECURITY.4")
@pytest.mark.parametrize("token", [None, "env", "file"])
def test_the_banner_says_where_for_whom_who_may_connect_and_how_to_stop(
    process_env: dict[str, str], fake: FakeCooked, token: str | None
) -> None:
    """Like the stdio banner: a user who started it by hand sees the account, the token rule, the way out.

    The token from the config file is read from the real process's stderr; the other token sources
    change only the banner's wording, so their banners are built in this process."""
    if token == "env":
        process_env["COOKED_MCP_HTTP_TOKEN"] = TOKEN_CANARY
    elif token == "file":
        write_config(process_env, f'[mcp]\nhttp_token = "{TOKEN_CANARY}"\n')
        (Path(process_env["XDG_CONFIG_HOME"]) / "cooked-mcp" / "config.toml").chmod(0o600)
    if token == "file":
        with http_server(process_env) as server:
            banner, url = banner_of(server), server.url
        printed = server.stderr()
    else:
        banner, url = banner_built_here(process_env)
        printed = banner
    # stderr is a file here, as under a service manager: the account by its source, not its name.
    assert banner.startswith(
        f"cooked-mcp: serving MCP over HTTP at {url} (Cooked account from the environment variable "
        f"COOKED_LOGIN_USERNAME at {fake.base_url}); "
    )
    assert SEED_LOGIN not in printed
    assert banner.endswith(". Press Ctrl-C to stop.")
    if token is None:
        assert "no bearer token is required, so any program on this machine can connect" in banner
    elif token == "env":
        assert (
            "every request must carry the bearer token from the environment variable COOKED_MCP_HTTP_TOKEN"
            in banner
        )
    else:
        assert "every request must carry the bearer token from mcp.http_token in " in banner
    assert TOKEN_CANARY not in printed
