"""The MCP HTTP bearer token: sources, precedence, the shared command rules, emptiness, loopback."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_support import TOKEN, assert_no_canary, write

from cooked_mcp.config import ConfigError, load_settings
from cooked_mcp.credential_command import CredentialCommandError


def _token(env: dict[str, str], path: Path | None = None, *, transport: str = "http") -> str | None:
    settings = load_settings(config_path=str(path) if path else None, environ=env, transport=transport)
    return settings.http_token.get_secret_value() if settings.http_token else None


@pytest.mark.req("server.SECURITY.4")
def test_token_from_the_environment(env: dict[str, str]) -> None:
    env["COOKED_MCP_HTTP_TOKEN"] = TOKEN
    assert _token(env) == TOKEN


@pytest.mark.req("server.SECURITY.5")
def test_token_from_the_file(env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", f'[mcp]\nhttp_token = "{TOKEN}"\n')
    assert _token(env, path) == TOKEN


@pytest.mark.req("server.SECURITY.5", "server.SECURITY.10")
def test_token_from_a_command_is_trimmed_like_a_credential(env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", f"[mcp]\nhttp_token_cmd = \"printf ' {TOKEN}\\\\n\\\\n'\"\n")
    assert _token(env, path) == TOKEN


@pytest.mark.req("server.SECURITY.10")
@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("echo STDOUT-CANARY; echo STDERR-CANARY >&2; exit 3", "failed with exit status 3"),
        ("printf '\\n'", "produced no output"),
        ("head -c 70000 /dev/zero | tr '\\\\0' a", "produced more than 64 KiB of output"),
    ],
)
def test_the_token_command_follows_the_credential_command_rules(
    env: dict[str, str], tmp_path: Path, command: str, problem: str
) -> None:
    path = write(tmp_path / "config.toml", f'[mcp]\nhttp_token_cmd = "{command}"\n')
    with pytest.raises(CredentialCommandError) as caught:
        load_settings(config_path=str(path), environ=env, transport="http")

    message = str(caught.value)
    assert message.startswith(f"{path}:2: mcp.http_token_cmd command {problem}")
    assert "CANARY" not in message and "aaaa" not in message


@pytest.mark.req("server.SECURITY.8")
def test_token_and_token_cmd_are_mutually_exclusive(env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", f'[mcp]\nhttp_token = "{TOKEN}"\nhttp_token_cmd = "echo x"\n')
    env["COOKED_MCP_HTTP_TOKEN"] = "env-token"
    for transport in ("http", "stdio"):
        with pytest.raises(ConfigError) as caught:
            load_settings(config_path=str(path), environ=env, transport=transport)
        assert str(caught.value) == (
            f"{path}:3: mcp.http_token and mcp.http_token_cmd are both set; keep only one of them"
        )


@pytest.mark.req("server.SECURITY.9")
@pytest.mark.parametrize("key", ["http_token", "http_token_cmd"])
def test_the_environment_token_wins_and_the_command_never_runs(
    env: dict[str, str], tmp_path: Path, key: str
) -> None:
    marker = tmp_path / "ran"
    value = f"touch {marker}; echo file-token" if key.endswith("_cmd") else "file-token"
    path = write(tmp_path / "config.toml", f'[mcp]\n{key} = "{value}"\n')
    env["COOKED_MCP_HTTP_TOKEN"] = TOKEN
    assert _token(env, path) == TOKEN
    assert not marker.exists()


@pytest.mark.req("server.SECURITY.11")
@pytest.mark.parametrize("value", ["", " ", "\t\n"])
@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_an_empty_environment_token_is_refused(env: dict[str, str], value: str, transport: str) -> None:
    env["COOKED_MCP_HTTP_TOKEN"] = value
    with pytest.raises(ConfigError, match="COOKED_MCP_HTTP_TOKEN is empty"):
        load_settings(config_path=None, environ=env, transport=transport)


@pytest.mark.req("server.SECURITY.11")
@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_file_token_is_refused(env: dict[str, str], tmp_path: Path, value: str) -> None:
    path = write(tmp_path / "config.toml", f'[mcp]\nhttp_token = "{value}"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=str(path), environ=env, transport="http")
    assert str(caught.value).startswith(f"{path}:2: mcp.http_token is empty")


@pytest.mark.req("server.SECURITY.11")
def test_a_token_that_cannot_travel_in_a_header_is_refused(env: dict[str, str]) -> None:
    env["COOKED_MCP_HTTP_TOKEN"] = "two words"
    with pytest.raises(ConfigError, match="only visible ASCII"):
        load_settings(config_path=None, environ=env, transport="http")


@pytest.mark.req("server.SECURITY.5")
def test_the_token_command_runs_only_for_the_http_transport(env: dict[str, str], tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = write(tmp_path / "config.toml", f'[mcp]\nhttp_token_cmd = "touch {marker}; echo {TOKEN}"\n')
    assert _token(env, path, transport="stdio") is None
    assert not marker.exists()
    assert _token(env, path, transport="http") == TOKEN
    assert marker.exists()


@pytest.mark.req("server.SECURITY.1")
@pytest.mark.parametrize("addr", ["0.0.0.0:8123", "[::]:8123", "192.168.1.5:8123", "myhost.lan:8123"])
def test_a_non_loopback_listener_needs_a_token(env: dict[str, str], addr: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=None, environ=env, transport="http", http_addr=addr)
    assert "without a bearer token" in str(caught.value) and "COOKED_MCP_HTTP_TOKEN" in str(caught.value)

    env["COOKED_MCP_HTTP_TOKEN"] = TOKEN
    assert (
        load_settings(config_path=None, environ=env, transport="http", http_addr=addr).http_token is not None
    )


@pytest.mark.req("server.SECURITY.1")
@pytest.mark.parametrize("addr", ["127.0.0.1:8123", "127.3.4.5:8123", "[::1]:8123", "localhost:8123"])
def test_a_loopback_listener_may_go_without_a_token(env: dict[str, str], addr: str) -> None:
    settings = load_settings(config_path=None, environ=env, transport="http", http_addr=addr)
    assert settings.http_token is None


@pytest.mark.req("server.SECURITY.2")
def test_the_token_never_shows_in_reprs_or_errors(env: dict[str, str], tmp_path: Path) -> None:
    env["COOKED_MCP_HTTP_TOKEN"] = TOKEN
    settings = load_settings(config_path=None, environ=env, transport="http")
    assert_no_canary(repr(settings), repr(settings.http_token), str(settings.http_token))

    path = write(
        tmp_path / "config.toml", f'[mcp]\nhttp_token = "{TOKEN}"\nhttp_token_cmd = "echo {TOKEN}"\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=str(path), environ=env, transport="http")
    assert_no_canary(str(caught.value))
