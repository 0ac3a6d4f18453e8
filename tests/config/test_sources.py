"""Where settings come from: environment, TOML file (explicit or XDG default), flags, defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_support import PASSWORD, USERNAME, write

from cooked_mcp.config import load_settings
from cooked_mcp.exceptions import ConfigError

FULL_TOML = """
[cooked]
base_url = "https://toml.cooked.test"

[user]
name = "toml-user"
password = "toml-password"

[mcp]
http_addr = "127.0.0.1:9001"
read_only = true
allowed_hosts = ["localhost:9001"]
allowed_origins = ["http://localhost:9001"]

[log]
level = "debug"
"""


@pytest.mark.req(
    "server.CONFIG.1",
    "server.CONFIG.4-1",
    "server.CONFIG.8-1",
    "authentication.CREDENTIALS.1",
    "authentication.CREDENTIALS.2",
)
def test_settings_from_the_environment_alone(bare_env: dict[str, str]) -> None:
    bare_env.update(
        {
            "COOKED_BASE_URL": "http://127.0.0.1:8765/",
            "COOKED_LOGIN_USERNAME": USERNAME,
            "COOKED_LOGIN_PASSWORD": PASSWORD,
            "COOKED_MCP_HTTP_ADDR": "127.0.0.1:9100",
            "COOKED_MCP_READ_ONLY": "true",
            "COOKED_MCP_LOG_LEVEL": "ERROR",
        }
    )
    settings = load_settings(config_path=None, environ=bare_env)

    assert settings.base_url == "http://127.0.0.1:8765"
    assert settings.username == USERNAME
    assert settings.password.get_secret_value() == PASSWORD
    assert settings.http_addr == ("127.0.0.1", 9100)
    assert settings.read_only is True
    assert settings.log_level == "error"
    assert settings.config_file is None


@pytest.mark.req(
    "server.CONFIG.2",
    "server.CONFIG.4-2",
    "server.CONFIG.6",
    "server.CONFIG.8-2",
    "authentication.CREDENTIALS.3",
    "authentication.CREDENTIALS.4",
)
def test_settings_from_a_toml_file_named_by_config(bare_env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "elsewhere" / "cooked.toml", FULL_TOML)
    settings = load_settings(config_path=str(path), environ=bare_env)

    assert settings.config_file == path
    assert settings.base_url == "https://toml.cooked.test"
    assert settings.username == "toml-user"
    assert settings.password.get_secret_value() == "toml-password"
    assert settings.http_addr == ("127.0.0.1", 9001)
    assert settings.read_only is True
    assert settings.allowed_hosts == ("localhost:9001",)
    assert settings.allowed_origins == ("http://localhost:9001",)
    assert settings.log_level == "debug"


# Each setting's case also proves the requirement naming its variable, where there is one.
ENV_OVER_TOML = [
    (
        "COOKED_BASE_URL",
        "https://env.cooked.test",
        lambda s: s.base_url,
        "https://env.cooked.test",
        ["server.CONFIG.4-1"],
    ),
    (
        "COOKED_LOGIN_USERNAME",
        "env-user",
        lambda s: s.username,
        "env-user",
        ["authentication.CREDENTIALS.11"],
    ),
    (
        "COOKED_LOGIN_PASSWORD",
        "env-password",
        lambda s: s.password.get_secret_value(),
        "env-password",
        ["authentication.CREDENTIALS.12"],
    ),
    (
        "COOKED_MCP_HTTP_ADDR",
        "127.0.0.1:9002",
        lambda s: s.http_addr,
        ("127.0.0.1", 9002),
        ["server.CONFIG.8-1"],
    ),
    ("COOKED_MCP_READ_ONLY", "0", lambda s: s.read_only, False, []),
    ("COOKED_MCP_LOG_LEVEL", "warning", lambda s: s.log_level, "warning", []),
]


@pytest.mark.req("server.CONFIG.3")
@pytest.mark.parametrize(
    ("variable", "value", "read", "expected"),
    [pytest.param(*case[:4], marks=pytest.mark.req(*case[4]), id=case[0]) for case in ENV_OVER_TOML],
)
def test_the_environment_wins_over_the_file_for_each_setting(
    bare_env: dict[str, str], tmp_path: Path, variable: str, value: str, read: object, expected: object
) -> None:
    path = write(tmp_path / "config.toml", FULL_TOML)
    bare_env[variable] = value
    settings = load_settings(config_path=str(path), environ=bare_env)

    assert callable(read)
    assert read(settings) == expected


@pytest.mark.req("server.CONFIG.3")
def test_an_empty_environment_variable_counts_as_unset(bare_env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", FULL_TOML)
    bare_env.update({"COOKED_BASE_URL": "", "COOKED_LOGIN_USERNAME": "", "COOKED_MCP_LOG_LEVEL": ""})
    settings = load_settings(config_path=str(path), environ=bare_env)

    assert (settings.base_url, settings.username, settings.log_level) == (
        "https://toml.cooked.test",
        "toml-user",
        "debug",
    )


@pytest.mark.req("server.CONFIG.4", "server.TRANSPORT.3-1")
def test_defaults(env: dict[str, str]) -> None:
    settings = load_settings(config_path=None, environ=env)

    assert settings.base_url == "https://cooked.wiki"
    assert settings.http_addr == ("127.0.0.1", 8123)
    assert settings.transport == "stdio"
    assert settings.read_only is False
    assert settings.http_token is None
    assert settings.allowed_hosts == () and settings.allowed_origins == ()
    assert settings.log_level == "warning"


@pytest.mark.req("server.CONFIG.7")
def test_the_default_file_is_read_from_xdg_config_home(
    bare_env: dict[str, str], tmp_path: Path, home: Path
) -> None:
    xdg = tmp_path / "xdg"
    path = write(xdg / "cooked-mcp" / "config.toml", FULL_TOML)
    write(home / ".config" / "cooked-mcp" / "config.toml", "[user]\nname = 'wrong'\npassword = 'wrong'\n")
    bare_env["XDG_CONFIG_HOME"] = str(xdg)
    settings = load_settings(config_path=None, environ=bare_env)

    assert settings.config_file == path
    assert settings.username == "toml-user"


@pytest.mark.req("server.CONFIG.7-1")
@pytest.mark.parametrize("xdg", [None, ""], ids=["unset", "empty"])
def test_without_xdg_config_home_the_file_is_read_from_dot_config(
    bare_env: dict[str, str], home: Path, xdg: str | None
) -> None:
    path = write(home / ".config" / "cooked-mcp" / "config.toml", FULL_TOML)
    if xdg is not None:
        bare_env["XDG_CONFIG_HOME"] = xdg
    settings = load_settings(config_path=None, environ=bare_env)

    assert settings.config_file == path
    assert settings.base_url == "https://toml.cooked.test"


@pytest.mark.req("server.CONFIG.7", "server.CONFIG.7-1")
def test_a_missing_default_file_is_fine(env: dict[str, str], tmp_path: Path) -> None:
    env["XDG_CONFIG_HOME"] = str(tmp_path / "nothing-here")
    assert load_settings(config_path=None, environ=env).config_file is None


@pytest.mark.req("server.CONFIG.6")
def test_a_config_file_named_by_config_must_exist(env: dict[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=str(missing), environ=env)

    assert str(missing) in str(caught.value)
    assert "--config" in str(caught.value)


@pytest.mark.req("server.CONFIG.6", "server.CONFIG.7")
def test_config_replaces_the_default_file(env: dict[str, str], tmp_path: Path, home: Path) -> None:
    write(home / ".config" / "cooked-mcp" / "config.toml", "[log]\nlevel = 'debug'\n")
    chosen = write(tmp_path / "chosen.toml", "[log]\nlevel = 'error'\n")
    settings = load_settings(config_path=str(chosen), environ=env)

    assert (settings.config_file, settings.log_level) == (chosen, "error")


@pytest.mark.req("server.CONFIG.8", "server.CONFIG.8-1", "server.CONFIG.8-2", "server.TRANSPORT.3")
def test_http_address_precedence_flag_then_environment_then_file(env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", '[mcp]\nhttp_addr = "127.0.0.1:9001"\n')
    assert load_settings(config_path=str(path), environ=env).http_addr.port == 9001
    env["COOKED_MCP_HTTP_ADDR"] = "127.0.0.1:9002"
    assert load_settings(config_path=str(path), environ=env).http_addr.port == 9002
    flagged = load_settings(config_path=str(path), environ=env, http_addr="[::1]:9003")
    assert flagged.http_addr == ("::1", 9003)


@pytest.mark.req("server.TRANSPORT.4")
@pytest.mark.parametrize("transport", ["sse", "HTTP", "", "stdio "])
def test_unknown_transports_are_refused(env: dict[str, str], transport: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=None, environ=env, transport=transport)

    assert str(caught.value) == (
        f"unknown transport '{transport}': use --transport stdio or --transport http"
    )


@pytest.mark.req("server.TRANSPORT.3")
@pytest.mark.parametrize(("transport", "expected"), [(None, "stdio"), ("stdio", "stdio"), ("http", "http")])
def test_known_transports(env: dict[str, str], transport: str | None, expected: str) -> None:
    assert load_settings(config_path=None, environ=env, transport=transport).transport == expected


@pytest.mark.req("server.CONFIG.1")
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        *[("1", True), ("true", True), ("TRUE", True), ("yes", True), ("on", True)],
        *[("0", False), ("false", False), ("No", False), ("off", False)],
    ],
)
def test_read_only_from_the_environment(env: dict[str, str], value: str, expected: bool) -> None:
    env["COOKED_MCP_READ_ONLY"] = value
    assert load_settings(config_path=None, environ=env).read_only is expected


@pytest.mark.req("server.CONFIG.1")
@pytest.mark.parametrize("value", ["2", "maybe", "truthy", "t", "y", "n", "f"])
def test_read_only_must_be_a_boolean(env: dict[str, str], value: str) -> None:
    env["COOKED_MCP_READ_ONLY"] = value
    with pytest.raises(ConfigError, match="COOKED_MCP_READ_ONLY must be true or false"):
        load_settings(config_path=None, environ=env)


@pytest.mark.req("server.CONFIG.1", "server.CONFIG.2")
def test_the_log_level_must_be_known(env: dict[str, str], tmp_path: Path) -> None:
    env["COOKED_MCP_LOG_LEVEL"] = "verbose"
    with pytest.raises(ConfigError, match="COOKED_MCP_LOG_LEVEL: use one of debug, info, warning, error"):
        load_settings(config_path=None, environ=env)
    del env["COOKED_MCP_LOG_LEVEL"]
    path = write(tmp_path / "c.toml", '\n[log]\nlevel = "trace"\n')
    with pytest.raises(ConfigError, match=r"log\.level in .*c\.toml:3"):
        load_settings(config_path=str(path), environ=env)
