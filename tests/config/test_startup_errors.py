"""Configuration mistakes stop ``cooked-mcp`` before serving, as one stderr line, exit 2.

Each case is set up so that the process must fail at startup; none of them gets far enough
to contact Cooked, and the base URL is never the real service. The entry point runs in this
process (``run_main``) unless the case names a command: the real process, started as
``python -m cooked_mcp`` for the case whose point is a child process's output (a credential
command's stderr goes to the process's own stderr unless it is thrown away), and as the console
script to show that the process reports the same way. A command's time bound is decided in the
same code either way; tests/hardening/test_secrets.py shows it through the real process too.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import pytest
from config_support import PASSWORD, TOKEN, USERNAME, write
from servers import COOKED_MCP, MODULE, run_main, run_server

from cooked_mcp import credential_command


def run(
    args: list[str], env: dict[str, str], *, command: Sequence[str] | None = None, timeout: float = 30
) -> tuple[int, str, str]:
    if command is None:
        done = run_main(env, *args)
    else:
        done = run_server(env, *args, command=command, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def assert_one_line_error(code: int, out: str, err: str, *needles: str) -> None:
    assert code == 2, err
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("cooked-mcp: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0]
    for canary in (PASSWORD, USERNAME, TOKEN):
        assert canary not in err


@pytest.mark.req("authentication.CREDENTIALS.9", "server.VERIFICATION.1")
@pytest.mark.parametrize("missing", ["COOKED_LOGIN_USERNAME", "COOKED_LOGIN_PASSWORD"])
def test_missing_credentials_stop_startup(proc_env: dict[str, str], missing: str) -> None:
    del proc_env[missing]
    assert_one_line_error(*run([], proc_env), missing, "user.")


@pytest.mark.req("authentication.CREDENTIALS.9", "server.VERIFICATION.1")
def test_the_readme_typo_is_named_in_the_one_line_that_stops_startup(proc_env: dict[str, str]) -> None:
    del proc_env["COOKED_LOGIN_PASSWORD"]
    proc_env["COOKED_LOGIN_PASWORD"] = PASSWORD
    assert_one_line_error(
        *run(["--check"], proc_env),
        "no Cooked password configured",
        "COOKED_LOGIN_PASWORD is set but is not a cooked-mcp setting (did you mean COOKED_LOGIN_PASSWORD?)",
    )


@pytest.mark.req("server.TRANSPORT.4")
def test_an_unknown_transport_stops_startup(proc_env: dict[str, str]) -> None:
    assert_one_line_error(
        *run(["--transport", "websocket"], proc_env),
        "unknown transport 'websocket': use --transport stdio or --transport http",
    )


@pytest.mark.req("server.CONFIG.5", "server.CONFIG.4-1", "authentication.SECRETS.3")
def test_an_invalid_base_url_stops_startup_without_echoing_secrets(proc_env: dict[str, str]) -> None:
    proc_env["COOKED_BASE_URL"] = f"https://someone:{PASSWORD}@cooked.wiki/"
    assert_one_line_error(*run([], proc_env), "COOKED_BASE_URL", "must not contain a user name or password")


@pytest.mark.req("server.CONFIG.6", "server.CONFIG.2")
def test_an_invalid_file_named_by_config_stops_startup_with_file_and_line(
    proc_env: dict[str, str], tmp_path: Path
) -> None:
    path = write(tmp_path / "broken.toml", '[user]\nname = "x"\n[mcp]\nread_only = "sure"\n')
    assert_one_line_error(*run(["--config", str(path)], proc_env), f"{path}:4", "mcp.read_only")


@pytest.mark.req("server.CONFIG.6")
def test_a_missing_file_named_by_config_stops_startup(proc_env: dict[str, str], tmp_path: Path) -> None:
    assert_one_line_error(*run(["--config", str(tmp_path / "absent.toml")], proc_env), "absent.toml")


@pytest.mark.req("server.CONFIG.7", "server.CONFIG.2")
def test_the_process_reads_the_xdg_default_file(proc_env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "xdg" / "cooked-mcp" / "config.toml", "[cooked]\nbase_url = 'gopher://x'\n")
    del proc_env["COOKED_BASE_URL"]
    proc_env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    assert_one_line_error(*run([], proc_env), f"cooked.base_url in {path}:2")


@pytest.mark.req("server.CONFIG.7-1")
def test_the_process_reads_dot_config_without_xdg(proc_env: dict[str, str], home: Path) -> None:
    path = write(home / ".config" / "cooked-mcp" / "config.toml", "[mcp]\nhttp_addr = 'nowhere'\n")
    assert_one_line_error(*run([], proc_env), f"mcp.http_addr in {path}:2")


@pytest.mark.req("server.CONFIG.3", "server.CONFIG.1", "server.CONFIG.8-1")
def test_the_environment_beats_the_file_end_to_end(proc_env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", "[mcp]\nhttp_addr = '127.0.0.1:8123'\n")
    proc_env["COOKED_MCP_HTTP_ADDR"] = "127.0.0.1:99999"
    assert_one_line_error(*run(["--config", str(path)], proc_env), "from COOKED_MCP_HTTP_ADDR")


@pytest.mark.req("server.CONFIG.8", "server.TRANSPORT.3")
def test_the_http_addr_flag_beats_the_environment_end_to_end(proc_env: dict[str, str]) -> None:
    proc_env["COOKED_MCP_HTTP_ADDR"] = "127.0.0.1:8123"
    assert_one_line_error(*run(["--http-addr", "localhost"], proc_env), "from --http-addr")


@pytest.mark.req(
    "authentication.CREDENTIALS.19",
    "authentication.CREDENTIALS.20",
    "authentication.SECRETS.1",
)
def test_a_failing_password_command_stops_startup_without_its_output(
    proc_env: dict[str, str], tmp_path: Path
) -> None:
    del proc_env["COOKED_LOGIN_PASSWORD"]
    command = f"echo {PASSWORD}; echo STDERR-CANARY-e1 >&2; exit 7"
    path = write(tmp_path / "config.toml", f'[user]\npassword_cmd = "{command}"\n')
    code, out, err = run(["--config", str(path)], proc_env, command=MODULE)
    assert_one_line_error(code, out, err, "user.password_cmd command failed with exit status 7")
    assert "STDERR-CANARY" not in err


@pytest.mark.req("authentication.CREDENTIALS.16", "authentication.SECRETS.2")
def test_a_hanging_password_command_stops_startup_at_its_time_limit(
    proc_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit, 5 s (test_credential_command.py), is cut to 0.5 s here."""
    monkeypatch.setattr(
        credential_command, "run_secret_command", partial(credential_command.run_secret_command, timeout=0.5)
    )
    del proc_env["COOKED_LOGIN_PASSWORD"]
    path = write(tmp_path / "config.toml", '[user]\npassword_cmd = "sleep 60"\n')
    started = time.monotonic()
    code, out, err = run(["--config", str(path)], proc_env)
    elapsed = time.monotonic() - started

    assert_one_line_error(code, out, err, "user.password_cmd command timed out after 0.5 s")
    assert 0.45 <= elapsed < 15


@pytest.mark.req("server.SECURITY.11", "server.SECURITY.4")
def test_an_empty_bearer_token_stops_startup(proc_env: dict[str, str]) -> None:
    proc_env["COOKED_MCP_HTTP_TOKEN"] = " "
    assert_one_line_error(*run(["--transport", "http"], proc_env), "COOKED_MCP_HTTP_TOKEN is empty")


@pytest.mark.req("server.SECURITY.1")
def test_a_public_listener_without_a_token_stops_startup(proc_env: dict[str, str]) -> None:
    assert_one_line_error(
        *run(["--transport", "http", "--http-addr", "0.0.0.0:8123"], proc_env), "without a bearer token"
    )


@pytest.mark.req("server.SECURITY.8", "server.VERIFICATION.1")
def test_the_console_script_reports_the_same_way(proc_env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", f'[mcp]\nhttp_token = "{TOKEN}"\nhttp_token_cmd = "echo x"\n')
    assert_one_line_error(
        *run(["--config", str(path)], proc_env, command=[COOKED_MCP]),
        "mcp.http_token and mcp.http_token_cmd are both set",
    )
