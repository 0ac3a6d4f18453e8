"""Shared test configuration and the requirement traceability gate.

Every test cites the requirement IDs it proves with one marker:
``@pytest.mark.req("tools.READ_TOOL.5", "tools.SCHEMA.2")``. See
tests/traceability.py for what the gate checks.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import traceability
from netguard import loopback_only

from cooked_fake import FakeCooked

if TYPE_CHECKING:
    from mcp import Client
    from servers import HttpServer

_TRACE = pytest.StashKey[traceability.Trace]()


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Async tests run on asyncio, the loop the server itself uses. Session-scoped so that a
    module-scoped async fixture (one MCP session or process shared by a module's cases) may use it."""
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def only_loopback_network() -> Iterator[None]:
    """Session-wide, so module-scoped fixtures and hypothesis examples run under it too."""
    with loopback_only():
        yield


@pytest.fixture(scope="session", autouse=True)
def one_trust_store_and_one_schema_check_per_test_run() -> Iterator[None]:
    """The test process builds over a thousand Cooked and MCP clients, where cooked-mcp builds one of
    each. Loading the CA bundle (certifi's or SSL_CERT_FILE's, ~17 ms: every httpx client built with
    ``verify=True``) and the SDK client's check of a tool's output schema against its metaschema
    (~20 ms per tool per session) gave the same answer each time and were a third of this process's
    CPU: both are done once per distinct input here (a bundle file by path, size and time). The
    context is shared as loaded (httpx and httpcore only add ALPN on it, for https, which no test
    uses); a schema that failed its check is checked again, so it fails again. cooked-mcp processes
    the tests start are untouched."""
    import os
    import ssl

    from jsonschema.validators import validator_for

    load_trust_store = ssl.create_default_context
    contexts: dict[tuple[str, str, int, int], ssl.SSLContext] = {}

    def shared_context(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        if args or len(kwargs) != 1 or not {"cafile", "capath"} >= kwargs.keys():
            return load_trust_store(*args, **kwargs)
        ((kind, path),) = kwargs.items()
        found = os.stat(path)
        key = (kind, str(path), found.st_mtime_ns, found.st_size)
        if key not in contexts:
            contexts[key] = load_trust_store(**kwargs)
        return contexts[key]

    validator = validator_for({})  # the draft of the schemas cooked-mcp serves (they name none)
    check_schema = validator.check_schema
    checked: set[str] = set()

    def check_once(schema: object) -> None:
        key = json.dumps(schema, sort_keys=True)
        if key not in checked:
            check_schema(schema)
            checked.add(key)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ssl, "create_default_context", shared_context)
        patch.setattr(validator, "check_schema", check_once)
        yield


@pytest.fixture(scope="session", autouse=True)
def hardening_figures() -> Iterator[None]:
    """Write what the hardening and transport suites counted (hardening_support.FIGURES) to
    build/hardening.json once the run is over; a run that imported none of them writes nothing."""
    yield
    support = sys.modules.get("hardening_support")
    if support is not None:
        support.FIGURES.write()


@pytest.fixture(scope="module")
def running_fake() -> Iterator[FakeCooked]:
    """One fake Cooked per module: starting one costs a thread and a socket, resetting it far less."""
    with FakeCooked() as fake:
        yield fake


@pytest.fixture
def fake(running_fake: FakeCooked) -> Iterator[FakeCooked]:
    """The module's fake, back at its seed data with no faults, sessions or records; reset again
    afterwards, so a module-scoped session or hypothesis test that takes ``running_fake`` itself
    never meets a case's faults."""
    running_fake.reset()
    yield running_fake
    running_fake.reset()


@pytest.fixture
def process_env(tmp_path: Path, fake: FakeCooked) -> dict[str, str]:
    """The environment of a real cooked-mcp process on this test's fake, logged in as its seed user,
    with a HOME of its own; tests add settings to it."""
    from servers import server_env

    return server_env(tmp_path / "home", fake.base_url)


@pytest.fixture(scope="module")
def server(running_fake: FakeCooked, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One real ``cooked-mcp --transport http`` process per module, on the module's fake, with the
    bearer token ``HTTP_TOKEN``. It logs at debug level, so that a secrecy test sees everything the
    server can log, and stops within 0.5 s, as the imports some tests leave running at Cooked would
    otherwise hold the stop for the whole grace."""
    from servers import HTTP_TOKEN, http_server, server_env, write_limits

    env = server_env(
        tmp_path_factory.mktemp("home"),
        running_fake.base_url,
        COOKED_MCP_HTTP_TOKEN=HTTP_TOKEN,
        COOKED_MCP_LOG_LEVEL="debug",
    )
    write_limits(env, stop_grace_seconds=0.5)
    with http_server(env) as running:
        yield running


@pytest.fixture(scope="module")
async def client(running_fake: FakeCooked) -> AsyncIterator[Client]:
    """One in-memory MCP session on the module's fake for every case (every hypothesis example too):
    a reset of the fake only makes it log in again."""
    from sessions import cooked_session  # here, so collecting (make requirements) imports no server

    async with cooked_session(running_fake) as session:
        yield session


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--write-requirements",
        action="store_true",
        help="on a full run, rewrite docs/requirements.md (the requirement map); `make requirements`",
    )


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    trace = traceability.collect(items)
    trace.full_run = traceability.is_full_run(config)
    config.stash[_TRACE] = trace


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection built (modules, items, the SDK's and the fake's classes) lives until the run
    ends: frozen out of the cyclic collector, so that its passes during the tests do not walk it
    again and again (as cooked-mcp does after its start-up, cli.py)."""
    gc.collect()
    gc.freeze()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    trace = session.config.stash.get(_TRACE, None)
    if trace is None:
        return
    pending = traceability.read_pending()
    traceability.write_report(trace, pending)
    if trace.full_run:
        if session.config.getoption("--write-requirements"):
            traceability.DOC_FILE.write_text(traceability.render_doc(trace, pending), encoding="utf-8")
        trace.problems = [
            *traceability.check(trace, pending),
            *traceability.check_code(trace, pending),
            *traceability.check_doc(trace, pending),
        ]
        if trace.problems and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    trace = config.stash.get(_TRACE, None)
    if trace is None:
        return
    for problem in trace.problems:
        terminalreporter.write_line(f"traceability: {problem}", red=True)
    note = "" if trace.full_run else " (partial run: gate not applied)"
    terminalreporter.write_line(traceability.summary(trace, traceability.read_pending()) + note)
    terminalreporter.write_line(
        f"requirement coverage report: {traceability.report_path(trace).relative_to(traceability.ROOT)}"
    )
