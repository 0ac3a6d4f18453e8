"""Every setting remembers where its value came from, so messages name the source that won."""

from __future__ import annotations

from pathlib import Path

import pytest
from canaries import assert_no_canary
from config_support import CANARIES, PASSWORD, USERNAME, write

from cooked_mcp.config import load_settings
from cooked_mcp.exceptions import ConfigError


@pytest.mark.req("server.CONFIG.3", "authentication.CREDENTIALS.11", "authentication.CREDENTIALS.12")
def test_each_setting_names_its_source(env: dict[str, str], tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.toml",
        '[cooked]\nbase_url = "https://cooked.wiki"\n\n[user]\nname = "file-user"\npassword_cmd = "echo pw"\n',
    )
    del env["COOKED_LOGIN_PASSWORD"]
    settings = load_settings(config_path=str(path), environ=env)

    assert settings.describe_source("base_url") == f"cooked.base_url in {path}:2"
    assert settings.describe_source("username") == "the environment variable COOKED_LOGIN_USERNAME"
    assert settings.describe_source("password") == f"user.password_cmd in {path}:6"
    assert settings.describe_source("log_level") == "the default"
    assert settings.describe_source("read_only") == "the default"
    assert settings.describe_credentials() == (
        f"the username from the environment variable COOKED_LOGIN_USERNAME (overriding user.name in "
        f"{path}:5) and the password from user.password_cmd in {path}:6"
    )
    assert_no_canary(CANARIES, settings.sources, repr(settings))


@pytest.mark.req("server.CONFIG.8", "server.CONFIG.8-1")
def test_the_http_address_source_is_the_flag_the_variable_or_the_default(env: dict[str, str]) -> None:
    assert load_settings(config_path=None, environ=env).describe_source("http_addr") == "the default"
    env["COOKED_MCP_HTTP_ADDR"] = "127.0.0.1:9000"
    settings = load_settings(config_path=None, environ=env)
    assert settings.describe_source("http_addr") == "the environment variable COOKED_MCP_HTTP_ADDR"
    flagged = load_settings(config_path=None, environ=env, http_addr="127.0.0.1:9001")
    assert flagged.describe_source("http_addr") == "the --http-addr flag"


@pytest.mark.req("authentication.CREDENTIALS.1", "authentication.CREDENTIALS.18")
@pytest.mark.parametrize("padded", [f"  {USERNAME}\n", f"\t{USERNAME} "])
def test_a_username_with_surrounding_whitespace_is_trimmed(env: dict[str, str], padded: str) -> None:
    """Like a command's output (closest requirement: CREDENTIALS.18 trims command stdout)."""
    env["COOKED_LOGIN_USERNAME"] = padded
    assert load_settings(config_path=None, environ=env).username == USERNAME


@pytest.mark.req("authentication.CREDENTIALS.3", "authentication.CREDENTIALS.18")
def test_a_file_username_with_surrounding_whitespace_is_trimmed(
    bare_env: dict[str, str], tmp_path: Path
) -> None:
    path = write(tmp_path / "c.toml", f'[user]\nname = " {USERNAME} "\npassword = "{PASSWORD}"\n')
    path.chmod(0o600)
    assert load_settings(config_path=str(path), environ=bare_env).username == USERNAME


@pytest.mark.req("server.SECURITY.5", "server.SECURITY.11")
def test_a_bad_token_in_the_file_is_reported_with_file_and_line(env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", '[mcp]\n\nhttp_token = "two words"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=str(path), environ=env, transport="http")
    assert str(caught.value).startswith(f"mcp.http_token in {path}:3 must contain only visible ASCII")


@pytest.mark.req("server.SECURITY.5", "server.TRANSPORT.1")
def test_a_stdio_server_does_not_check_the_shape_of_a_token_it_never_uses(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A config file shared with an HTTP set-up may hold a token stdio never sends; only the checks
    every transport shares (set once, not empty) apply to it there."""
    path = write(tmp_path / "c.toml", '[mcp]\n\nhttp_token = "two words"\n')
    assert load_settings(config_path=str(path), environ=env).http_token is None
    empty = write(tmp_path / "e.toml", '[mcp]\nhttp_token = " "\n')
    with pytest.raises(ConfigError, match=r"mcp\.http_token is empty"):
        load_settings(config_path=str(empty), environ=env)


@pytest.mark.req("server.CONFIG.3", "authentication.CREDENTIALS.11")
def test_a_file_setting_beaten_by_the_environment_is_named_as_overridden(
    env: dict[str, str], tmp_path: Path
) -> None:
    path = write(tmp_path / "c.toml", '[user]\nname_cmd = "echo file-user"\n\n[log]\nlevel = "info"\n')
    env["COOKED_MCP_LOG_LEVEL"] = "debug"
    settings = load_settings(config_path=str(path), environ=env)
    assert settings.overridden == {
        "username": f"user.name_cmd in {path}:2",
        "log_level": f"log.level in {path}:5",
    }
    account = settings.describe_account()
    assert account[0] == f"account: {USERNAME}"
    assert (
        "  username:  the account above (the environment variable COOKED_LOGIN_USERNAME, "
        f"overriding user.name_cmd in {path}:2)" in account
    )
    assert (
        "  password:  set, not shown (the environment variable COOKED_LOGIN_PASSWORD)" in account
    )  # nothing in the file
    # Each line gives the value, then its source: "read-only  from the default" gave no value.
    assert "  read-only: off (default)" in account
    assert "  base URL:  https://cooked.wiki (default)" in account
    # The message of a rejected login says so too, not only --check.
    assert settings.describe_credentials() == (
        f"the username from the environment variable COOKED_LOGIN_USERNAME (overriding user.name_cmd in "
        f"{path}:2) and the password from the environment variable COOKED_LOGIN_PASSWORD"
    )
