"""``cooked-mcp --help`` and the flags a first-time user gets wrong.

``--help`` is read from the real process (``python -m cooked_mcp``); a refused flag is decided
before anything is served, so it runs the entry point in this process (``run_main``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from servers import MODULE, run_main, run_server

from cooked_mcp import PROJECT_URL
from cooked_mcp.config import environment_variables, load_settings, schema_keys
from cooked_mcp.exceptions import ConfigError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.req("server.CONFIG.1", "server.CONFIG.2", "server.CONFIG.6")
def test_help_lists_every_variable_and_key_on_one_screen_and_points_at_the_docs(
    proc_env: dict[str, str],
) -> None:
    done = run_server(proc_env, "--help", command=MODULE)
    assert done.returncode == 0
    for name in (*environment_variables(), *schema_keys()):
        assert name in done.stdout, name
    assert f"{PROJECT_URL}/blob/main/docs/configuration.md" in done.stdout  # a URL: no checkout needed
    assert (ROOT / "docs" / "configuration.md").is_file()
    assert len(done.stdout.splitlines()) <= 48  # one screen of a terminal window
    # argparse wraps its own text to an 80-column terminal; the epilog must not stick out of it.
    assert max(map(len, done.stdout.splitlines())) <= 80


@pytest.mark.req("server.CONFIG.8", "server.TRANSPORT.2-2", "server.TRANSPORT.3")
def test_http_addr_alone_implies_the_http_transport_as_help_says(proc_env: dict[str, str]) -> None:
    assert "implies --transport http" in " ".join(run_main(proc_env, "--help").stdout.split())
    # Port 99999 is refused while parsing the address, which happens for either transport;
    # the wildcard host without a token is refused only for http: it proves http was chosen.
    done = run_main(proc_env, "--http-addr", "0.0.0.0:8123")
    assert done.returncode == 2 and "without a bearer token" in done.stderr, done.stderr


@pytest.mark.req("server.CONFIG.8", "server.TRANSPORT.2-1")
def test_http_addr_with_the_stdio_transport_is_refused(proc_env: dict[str, str]) -> None:
    done = run_main(proc_env, "--transport", "stdio", "--http-addr", "127.0.0.1:8123")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "cooked-mcp: --http-addr needs the http transport: drop --transport stdio or --http-addr"
    ]


@pytest.mark.req("server.CONFIG.8", "server.CONFIG.5")
@pytest.mark.parametrize("addr", ["http://127.0.0.1:8123", "https://localhost:8123"])
def test_an_address_with_a_scheme_says_the_scheme_is_not_wanted(env: dict[str, str], addr: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=None, environ=env, transport="http", http_addr=addr)
    message = str(caught.value)
    assert "leave out the scheme" in message and "brackets" not in message
