"""Remote mode's settings: refused before anything is served, the owner password's sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from canaries import assert_no_canary
from servers import python_command, run_main

from cooked_mcp.config import load_settings
from cooked_mcp.exceptions import ConfigError

OWNER = "owner-canary-9xq"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "COOKED_LOGIN_USERNAME": "someone",
        "COOKED_LOGIN_PASSWORD": "cooked-pass",
        **extra,
    }


@pytest.mark.req("extensions.REMOTE.2")
def test_remote_mode_refuses_to_start_without_an_owner_password(tmp_path: Path) -> None:
    result = run_main(_env(tmp_path), "--public-url", "https://cooked.example.net")
    assert result.returncode == 2
    assert "remote mode (--public-url) needs an owner password" in result.stderr
    assert "COOKED_MCP_OWNER_PASSWORD" in result.stderr


@pytest.mark.req("extensions.REMOTE.2")
def test_remote_mode_refuses_an_owner_password_under_12_characters_without_showing_it(tmp_path: Path) -> None:
    short = "short-Pw9Zk"  # 11 characters
    result = run_main(
        _env(tmp_path, COOKED_MCP_OWNER_PASSWORD=short), "--public-url", "https://cooked.example.net"
    )
    assert result.returncode == 2
    assert "has 11 characters" in result.stderr and "at least 12" in result.stderr
    assert "COOKED_MCP_OWNER_PASSWORD" in result.stderr and short not in result.stderr
    config = tmp_path / "config.toml"
    config.write_text(f"[mcp]\nowner_password_cmd = {json.dumps(python_command(f'print({short!r})'))}\n")
    config.chmod(0o600)
    with pytest.raises(ConfigError, match="has 11 characters") as refused:
        load_settings(config_path=str(config), environ=_env(tmp_path), public_url="https://c.example")
    assert short not in str(refused.value) and "owner_password_cmd" in str(refused.value)


@pytest.mark.req("extensions.REMOTE.3")
@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://cooked.example.net", "plain http:// is refused unless the host is loopback"),
        ("http://192.168.1.5:8123", "plain http:// is refused unless the host is loopback"),
        ("https://cooked.example.net/cooked", "no path, query or user name"),
        ("https://user@cooked.example.net", "no path, query or user name"),
        ("ftp://cooked.example.net", "must be an https:// URL"),
    ],
)
def test_a_public_url_other_than_https_origin_is_refused(tmp_path: Path, url: str, problem: str) -> None:
    result = run_main(_env(tmp_path, COOKED_MCP_OWNER_PASSWORD=OWNER), "--public-url", url)
    assert result.returncode == 2
    assert problem in result.stderr
    assert "COOKED_MCP_PUBLIC_URL" not in result.stderr or "--public-url" in result.stderr
    assert_no_canary([OWNER], result.stderr, result.stdout)


@pytest.mark.req("extensions.REMOTE.3", "extensions.REMOTE.2")
def test_https_and_loopback_http_are_accepted_from_every_source(tmp_path: Path) -> None:
    env = _env(tmp_path, COOKED_MCP_OWNER_PASSWORD=OWNER)
    by_flag = load_settings(
        config_path=None, environ=env, transport="http", public_url="https://Cooked.Example.net/"
    )
    assert by_flag.public_url == "https://cooked.example.net"
    assert by_flag.owner_password is not None
    assert by_flag.owner_password.get_secret_value() == OWNER
    by_env = load_settings(
        config_path=None, environ={**env, "COOKED_MCP_PUBLIC_URL": "http://127.0.0.1:8123"}
    )
    assert by_env.public_url == "http://127.0.0.1:8123"
    assert by_env.transport == "http"  # a public URL implies the http transport


@pytest.mark.req("extensions.REMOTE.2")
def test_the_owner_password_command_runs_only_in_remote_mode(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    config = tmp_path / "config.toml"
    command = python_command(
        f"import pathlib; pathlib.Path({str(marker)!r}).write_text('x'); print({OWNER!r})"
    )
    config.write_text(f"[mcp]\nowner_password_cmd = {json.dumps(command)}\n")
    config.chmod(0o600)
    env = _env(tmp_path)
    plain = load_settings(config_path=str(config), environ=env, transport="http")
    assert plain.owner_password is None
    assert not marker.exists()
    remote = load_settings(
        config_path=str(config), environ=env, transport="http", public_url="https://c.example"
    )
    assert remote.owner_password is not None
    assert remote.owner_password.get_secret_value() == OWNER
    assert marker.exists()
    assert OWNER not in repr(remote)


@pytest.mark.req("extensions.REMOTE.17")
def test_the_host_and_origin_checks_accept_the_public_host(tmp_path: Path) -> None:
    from cooked_mcp.transports.http import transport_security

    env = _env(tmp_path, COOKED_MCP_OWNER_PASSWORD=OWNER)
    remote = load_settings(config_path=None, environ=env, public_url="https://cooked.example.net")
    security = transport_security(remote)
    assert "cooked.example.net" in security.allowed_hosts
    assert "https://cooked.example.net" in security.allowed_origins
    plain = transport_security(load_settings(config_path=None, environ=env, transport="http"))
    assert "cooked.example.net" not in plain.allowed_hosts


@pytest.mark.req("server.TRANSPORT.2-1", "extensions.REMOTE.1")
def test_a_public_url_with_the_stdio_transport_names_the_public_url(tmp_path: Path) -> None:
    result = run_main(
        _env(tmp_path, COOKED_MCP_OWNER_PASSWORD=OWNER),
        "--transport",
        "stdio",
        "--public-url",
        "https://c.example",
    )
    assert result.returncode == 2
    assert "--public-url needs the http transport: drop --transport stdio or --public-url" in result.stderr


@pytest.mark.req("extensions.REMOTE.18")
def test_a_bearer_token_in_remote_mode_is_named_as_unused_and_its_command_never_runs(
    tmp_path: Path,
) -> None:
    env = _env(tmp_path, COOKED_MCP_OWNER_PASSWORD=OWNER, COOKED_MCP_HTTP_TOKEN="t" * 40)
    by_env = load_settings(config_path=None, environ=env, transport="http", public_url="https://c.example")
    assert by_env.http_token is None
    (warning,) = by_env.warnings
    assert (
        "the bearer token from the environment variable COOKED_MCP_HTTP_TOKEN is not used in remote mode"
        in warning
    )
    assert "the --public-url flag" in warning
    assert "remove the token, or drop the public URL" in warning
    marker = tmp_path / "ran"
    config = tmp_path / "config.toml"
    command = python_command(
        f"import pathlib; pathlib.Path({str(marker)!r}).write_text('x'); print('t' * 40)"
    )
    config.write_text(f"[mcp]\nhttp_token_cmd = {json.dumps(command)}\n")
    config.chmod(0o600)
    env = _env(tmp_path, COOKED_MCP_OWNER_PASSWORD=OWNER, COOKED_MCP_PUBLIC_URL="https://c.example")
    by_file = load_settings(config_path=str(config), environ=env)  # no flag: the public URL implies http
    assert by_file.http_token is None
    assert not marker.exists()
    (warning,) = by_file.warnings
    assert f"the bearer token from mcp.http_token_cmd in {config}" in warning
    assert "the environment variable COOKED_MCP_PUBLIC_URL" in warning
