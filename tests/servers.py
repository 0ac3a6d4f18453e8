"""Starting the real cooked-mcp process for tests, with a clean environment.

Tests never inherit the developer's configuration: HOME and XDG_CONFIG_HOME
point into a temporary folder, and Cooked is always a fake on 127.0.0.1.
HTTP servers listen on 127.0.0.1 (or a wildcard) and are only ever reached
through 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from cooked_fake import SEED_LOGIN, SEED_PASSWORD

BIN = Path(sys.executable).parent
COOKED_MCP = str(BIN / "cooked-mcp")
MODULE = (sys.executable, "-m", "cooked_mcp")  # the same program started as ``python -m cooked_mcp``
#: Under ``make coverage``, what makes each process started here measure itself and save its data.
MEASURED = {name: value for name, value in os.environ.items() if name.startswith("COVERAGE_")}


def server_env(
    home: Path, base_url: str, *, login: str = SEED_LOGIN, password: str = SEED_PASSWORD, **extra: str
) -> dict[str, str]:
    """The whole environment of a cooked-mcp process: nothing leaks in from the test runner; it logs
    in as the fake's seed user unless told otherwise."""
    (home / "config").mkdir(parents=True, exist_ok=True)
    return {
        **MEASURED,
        "PATH": f"{BIN}:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "COOKED_BASE_URL": base_url,
        "COOKED_LOGIN_USERNAME": login,
        "COOKED_LOGIN_PASSWORD": password,
        **extra,
    }


def stdio_client(env: Mapping[str, str], *args: str) -> Client:
    """An mcp SDK client that spawns cooked-mcp and speaks MCP over its stdin/stdout."""
    return Client(
        StdioServerParameters(command=COOKED_MCP, args=list(args), env=dict(env)), read_timeout_seconds=30
    )


async def era_client(
    stack: contextlib.AsyncExitStack, env: Mapping[str, str], era: str, *, in_memory: bool, **options: Any
) -> Client:
    """A connected client in protocol ``era`` of a real cooked-mcp process over stdio with ``env``
    or, ``in_memory``, of the application that process would build, in this process."""
    from cooked_mcp.app import build_application
    from cooked_mcp.config import load_settings

    served: Any = StdioServerParameters(command=COOKED_MCP, env=dict(env))
    if in_memory:
        settings = load_settings(config_path=None, environ=dict(env))
        served = (await stack.enter_async_context(build_application(settings))).server
    return await stack.enter_async_context(Client(served, mode=era, read_timeout_seconds=30, **options))


def patched(*statements: str) -> tuple[str, ...]:
    """The command starting cooked-mcp after the Python ``statements``: how a test shortens a time
    bound no setting reaches, for a process it would otherwise wait for (its own test proves it
    at its real value)."""
    main = "import sys; from cooked_mcp.cli import main; sys.exit(main(sys.argv[1:]))"
    return (sys.executable, "-c", "; ".join([*statements, main]))


#: Credential commands (``*_cmd``) bounded at 0.5 s instead of 5 s (test_credential_command.py).
SHORT_COMMAND_TIMEOUT = (
    "import functools, cooked_mcp.credential_command as c; "
    "c.run_secret_command = functools.partial(c.run_secret_command, timeout=0.5)"
)


def run_server(
    env: Mapping[str, str], *args: str, command: Sequence[str] = (COOKED_MCP,), timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """Run cooked-mcp to completion (for startup errors): exactly ``env``, stdin closed, output captured."""
    return subprocess.run(
        [*command, *args],
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_main(env: Mapping[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``cooked-mcp ARGS`` run to completion in this process: its entry point (``cli.main``) with
    exactly ``env`` as the environment, ``stdin`` as what the user types, stdout and stderr
    (log lines included) captured, and the process-wide state it sets (environment, logging)
    put back afterwards. For what is decided before anything is served (flags, settings,
    ``--check``), where starting a process (0.2-0.3 s CPU) would be most of the test's cost;
    ``run_server`` keeps proving the same through the real process. Getting as far as serving
    is an AssertionError, not a server in this process."""
    import io

    import cooked_mcp.check
    import cooked_mcp.cli
    import cooked_mcp.logging_setup
    from cooked_mcp.cli import main

    def serving(settings: object) -> int:
        # Serving here would read this process's stdin or listen until a signal: a case that
        # should have been refused fails at once instead of hanging the run.
        raise AssertionError(f"cooked-mcp {' '.join(args)} got as far as serving: nothing refused it")

    saved_environ = dict(os.environ)
    root = logging.getLogger()
    saved_logging = root.handlers[:], root.level, cooked_mcp.logging_setup._active
    quieted = {name: logging.getLogger(name).level for name in cooked_mcp.logging_setup.QUIET_LIBRARY_LOGGERS}
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        # run_check's streams default to sys.stdout and sys.stdin as they were when it was imported.
        patch.setattr(cooked_mcp.cli, "serve", serving)
        patch.setattr(
            cooked_mcp.check,
            "run_check",
            partial(cooked_mcp.check.run_check, out=out, answer=io.StringIO(stdin)),
        )
        os.environ.clear()
        os.environ.update(env)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(list(args))
                except SystemExit as exit:  # argparse: --help, --version and refused flags
                    code = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
        finally:
            os.environ.clear()
            os.environ.update(saved_environ)
            root.handlers[:], level, cooked_mcp.logging_setup._active = saved_logging
            root.setLevel(level)
            for name, quiet in quieted.items():
                logging.getLogger(name).setLevel(quiet)
    return subprocess.CompletedProcess([COOKED_MCP, *args], code, out.getvalue(), err.getvalue())


def free_port() -> int:
    """A TCP port nothing listens on right now on 127.0.0.1 (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def is_listening(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


@dataclass
class HttpServer:
    """A running ``cooked-mcp --transport http`` process, reached at ``url`` (``.../mcp``)."""

    url: str
    port: int
    process: subprocess.Popen[bytes]
    stderr_path: Path
    _final_stderr: str | None = None

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``: for requests to paths other than /mcp."""
        return self.url.removesuffix("/mcp")

    def stderr(self) -> str:
        """Everything the server wrote to stderr so far (all of it, once the block has ended)."""
        if self._final_stderr is not None:
            return self._final_stderr
        return self.stderr_path.read_text("utf-8", "replace")

    def stop(self, sig: signal.Signals = signal.SIGTERM, timeout: float = 5) -> int:
        """Send ``sig`` and wait for the exit status (at most ``timeout`` s, then kill and fail)."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"cooked-mcp did not exit within {timeout} s of {sig.name}") from None


@contextlib.contextmanager
def http_server(
    env: Mapping[str, str],
    *args: str,
    port: int | None = None,
    ready_timeout: float = 15,
    poll_interval: float = 0.05,
    open_files: tuple[int, int] | None = None,
    command: Sequence[str] = (COOKED_MCP,),
) -> Iterator[HttpServer]:
    """Start cooked-mcp over Streamable HTTP; yield once it listens; SIGTERM it on exit.

    Without ``port`` a free one is chosen and passed as ``--http-addr 127.0.0.1:PORT``.
    With ``port`` the caller configured the address itself (flag, environment or TOML)
    and ``port`` says where on 127.0.0.1 to wait for it. ``--transport http`` is always
    added. On leaving the block the server must exit 0 within 5 s of SIGTERM, unless
    the test already stopped it. ``open_files`` sets the process's (soft, hard) RLIMIT_NOFILE;
    ``command`` is what starts cooked-mcp.
    """
    if port is None:
        port = free_port()
        args = ("--http-addr", f"127.0.0.1:{port}", *args)
    with tempfile.TemporaryDirectory(prefix="cooked-mcp-http-") as folder:
        stderr_path = Path(folder) / "stderr.txt"
        with stderr_path.open("wb") as stderr:
            process = subprocess.Popen(
                [*command, "--transport", "http", *args],
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                preexec_fn=None if open_files is None else partial(_limit_open_files, open_files),
            )
        server = HttpServer(f"http://127.0.0.1:{port}/mcp", port, process, stderr_path)
        try:
            _wait_listening(server, ready_timeout, poll_interval)
            yield server
            status = server.stop()
            assert status == 0, f"cooked-mcp exited with {status} after SIGTERM:\n{server.stderr()}"
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            server._final_stderr = server.stderr()


def _limit_open_files(limits: tuple[int, int]) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, limits)


def _wait_listening(server: HttpServer, timeout: float, poll_interval: float) -> None:
    deadline = time.monotonic() + timeout
    while not is_listening(server.port):
        if server.process.poll() is not None:
            raise AssertionError(
                f"cooked-mcp exited with {server.process.returncode} before listening:\n{server.stderr()}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"cooked-mcp did not listen on port {server.port} within {timeout} s")
        time.sleep(poll_interval)


def http_client(url: str, token: str | None = None, *, headers: Mapping[str, str] | None = None) -> Client:
    """An mcp SDK client over Streamable HTTP, sending ``Authorization: Bearer <token>`` if given."""
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return Client(_streamable_http(url, sent), read_timeout_seconds=30)


@contextlib.asynccontextmanager
async def _streamable_http(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    """The SDK's Streamable HTTP transport over an httpx2 client that carries ``headers``."""
    timeout = httpx2.Timeout(30, read=300)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def python_command(code: str) -> str:
    """A shell command line running ``code`` with this Python (for ``*_cmd`` settings)."""
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


# A raw MCP initialize request, for tests that speak MCP (over HTTP or stdio) without the SDK client.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def joined(opened: httpx.Response) -> dict[str, str]:
    """The headers a session's later requests carry, from the answer to its ``INITIALIZE``."""
    assert opened.status_code == 200, opened.text
    version = INITIALIZE["params"]["protocolVersion"]  # type: ignore[index]
    return {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": version}


def open_session(
    url: str, headers: Mapping[str, str] = MCP_HEADERS, http: httpx.Client | None = None
) -> dict[str, str]:
    """A raw session opened and initialized (through ``http``, or a client of its own): the headers
    its requests carry, ``headers`` plus its own."""
    with contextlib.nullcontext(http) if http else httpx.Client(timeout=10) as client:
        session = {**headers, **joined(client.post(url, headers=dict(headers), json=INITIALIZE))}
        initialized = client.post(url, headers=session, json=INITIALIZED)
    assert initialized.status_code == 202, initialized.text
    return session


async def open_session_async(
    http: httpx.AsyncClient, url: str, headers: Mapping[str, str] = MCP_HEADERS
) -> dict[str, str]:
    """``open_session`` for an async client."""
    session = {**headers, **joined(await http.post(url, headers=dict(headers), json=INITIALIZE))}
    initialized = await http.post(url, headers=session, json=INITIALIZED)
    assert initialized.status_code == 202, initialized.text
    return session


#: The bearer token of the transport tests' HTTP server (the ``server`` fixture, tests/conftest.py): a canary.
HTTP_TOKEN = "CANARY-serving-Token_0123456789"


def bearer(token: str = HTTP_TOKEN) -> dict[str, str]:
    """The MCP request headers with ``Authorization: Bearer token``."""
    return {**MCP_HEADERS, "Authorization": f"Bearer {token}"}


def write_limits(env: Mapping[str, str], **seconds: float) -> None:
    """Shorten the transports' time bounds (``[mcp.limits]``) for the server ``env`` starts."""
    path = Path(env["XDG_CONFIG_HOME"]) / "cooked-mcp" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[mcp.limits]\n" + "".join(f"{key} = {value}\n" for key, value in seconds.items()))
