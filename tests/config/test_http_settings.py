"""HTTP settings at the config level: address, bearer token sources, precedence, the shared command
rules, emptiness, listener and host policy.

Process-level counterparts (the same rules seen from the command line) are in
tests/transports/test_http_startup.py; these are the fast, exhaustive ones.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from canaries import assert_no_canary
from config_support import CANARIES, TOKEN, write
from pydantic import ValidationError
from servers import python_command

from cooked_mcp import credential_command
from cooked_mcp.config import Settings, load_settings
from cooked_mcp.exceptions import ConfigError, CredentialCommandError
from cooked_mcp.transports.http import transport_security

PRINT_PADDED_TOKEN = f"print(' \\t{TOKEN}  ')"


def toml(tmp_path: Path, text: str) -> str:
    return str(write(tmp_path / "config.toml", text))


def http(env: dict[str, str], config: str | None = None, addr: str | None = None) -> Settings:
    return load_settings(config_path=config, environ=env, transport="http", http_addr=addr)


def token_of(settings: Settings) -> str | None:
    return None if settings.http_token is None else settings.http_token.get_secret_value()


def refused(
    env: dict[str, str],
    config: str | None = None,
    addr: str | None = None,
    *,
    transport: str = "http",
    error: type[ConfigError] = ConfigError,
) -> str:
    with pytest.raises(error) as caught:
        load_settings(config_path=config, environ=env, transport=transport, http_addr=addr)
    message = str(caught.value)
    assert "\n" not in message and TOKEN not in message
    return message


@pytest.mark.req("server.TRANSPORT.3-1", "server.TRANSPORT.2-2")
def test_http_listens_on_127_0_0_1_port_8123_without_flag_environment_or_file(env: dict[str, str]) -> None:
    settings = http(env)
    assert settings.transport == "http"
    assert settings.http_addr == ("127.0.0.1", 8123)
    assert settings.http_token is None


# --- where the token comes from ------------------------------------------------------------------


@pytest.mark.req("server.SECURITY.4", "server.SECURITY.3")
def test_the_token_comes_from_cooked_mcp_http_token(env: dict[str, str]) -> None:
    env["COOKED_MCP_HTTP_TOKEN"] = TOKEN
    settings = http(env)
    assert token_of(settings) == TOKEN
    assert TOKEN not in repr(settings)


@pytest.mark.req("server.SECURITY.5")
def test_the_token_comes_from_toml_http_token(env: dict[str, str], tmp_path: Path) -> None:
    config = toml(tmp_path, f'[mcp]\nhttp_token = "{TOKEN}"\n')
    assert token_of(http(env, config)) == TOKEN


@pytest.mark.req("server.SECURITY.5", "server.SECURITY.10")
@pytest.mark.parametrize(
    "line",
    [
        f"http_token_cmd = \"printf ' {TOKEN}\\\\n\\\\n'\"",
        f"http_token_cmd = '''{python_command(PRINT_PADDED_TOKEN)}'''",
    ],
    ids=["printf", "python"],
)
def test_the_token_comes_from_toml_http_token_cmd_trimmed(
    env: dict[str, str], tmp_path: Path, line: str
) -> None:
    config = toml(tmp_path, f"[mcp]\n{line}\n")
    assert token_of(http(env, config)) == TOKEN


@pytest.mark.req("server.SECURITY.5", "server.SECURITY.10")
def test_the_token_command_runs_only_for_the_http_transport(env: dict[str, str], tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    config = toml(tmp_path, f'[mcp]\nhttp_token_cmd = "touch {marker}; echo {TOKEN}"\n')
    settings = load_settings(config_path=config, environ=env, transport="stdio")
    assert settings.http_token is None and not marker.exists()
    assert token_of(http(env, config)) == TOKEN
    assert marker.exists()


@pytest.mark.req("server.SECURITY.9", "server.SECURITY.4")
@pytest.mark.parametrize("key", ["http_token", "http_token_cmd"])
def test_the_environment_token_wins_over_the_file(env: dict[str, str], tmp_path: Path, key: str) -> None:
    marker = tmp_path / "ran"
    value = "file-token" if key == "http_token" else f"touch {marker} && echo file-token"
    config = toml(tmp_path, f'[mcp]\n{key} = "{value}"\n')
    env["COOKED_MCP_HTTP_TOKEN"] = TOKEN
    assert token_of(http(env, config)) == TOKEN
    assert not marker.exists(), "the file's token command ran although the environment won"


@pytest.mark.req("server.SECURITY.8")
@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("with_env_token", [False, True])
def test_http_token_and_http_token_cmd_together_are_refused(
    env: dict[str, str], tmp_path: Path, with_env_token: bool, transport: str
) -> None:
    config = toml(tmp_path, f'[mcp]\nhttp_token = "{TOKEN}"\nhttp_token_cmd = "echo x"\n')
    if with_env_token:
        env["COOKED_MCP_HTTP_TOKEN"] = "env-token"  # a mistake in the file is reported all the same
    message = refused(env, config, transport=transport)
    assert message == f"{config}:3: mcp.http_token and mcp.http_token_cmd are both set; keep only one of them"
    assert "mcp.http_token and mcp.http_token_cmd are both set" in message
    assert "config.toml:3" in message


# --- the command runs by the credential command rules ---------------------------------------------


@pytest.mark.req("server.SECURITY.10", "server.SECURITY.2", "server.SECURITY.11")
@pytest.mark.parametrize(
    ("command", "problem"),
    [
        pytest.param(
            f"echo STDOUT-CANARY {TOKEN}; echo STDERR-CANARY {TOKEN} >&2; exit 3",
            "failed with exit status 3",
            id="failing",
        ),
        pytest.param("printf '\\n'", "produced no output", id="no-output"),
        # Only whitespace trims to an empty token: refused before serving (server.SECURITY.11).
        pytest.param("printf ' \\\\n'", "produced no output", id="only-whitespace"),
        pytest.param(
            "head -c 70000 /dev/zero | tr '\\\\0' a", "produced more than 64 KiB of output", id="flood"
        ),
    ],
)
def test_the_token_command_follows_the_credential_command_rules(
    env: dict[str, str], tmp_path: Path, command: str, problem: str
) -> None:
    config = toml(tmp_path, f'[mcp]\nhttp_token_cmd = "{command}"\n')
    message = refused(env, config, error=CredentialCommandError)
    assert message.startswith(f"{config}:2: mcp.http_token_cmd command {problem}")
    assert "CANARY" not in message and "aaaa" not in message


@pytest.mark.req("server.SECURITY.10")
def test_a_hanging_token_command_times_out_like_a_credential_command(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same resolver as user.password_cmd, with its deadline shortened to keep the test fast.
    calls: list[str] = []
    real = credential_command.run_secret_command

    def spy(setting: str, command: str, *, where: str | None = None) -> str:
        calls.append(setting)
        return functools.partial(real, timeout=0.3, where=where)(setting, command)

    monkeypatch.setattr(credential_command, "run_secret_command", spy)
    config = toml(tmp_path, '[mcp]\nhttp_token_cmd = "sleep 10"\n')
    assert refused(env, config).startswith(f"{config}:2: mcp.http_token_cmd command timed out after 0.3 s")
    assert calls == ["mcp.http_token_cmd"]


# --- empty and malformed tokens ---------------------------------------------------------------------


@pytest.mark.req("server.SECURITY.11")
@pytest.mark.parametrize("value", ["", " ", "\t\n"])
@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_an_empty_environment_token_is_refused(env: dict[str, str], value: str, transport: str) -> None:
    env["COOKED_MCP_HTTP_TOKEN"] = value
    assert "COOKED_MCP_HTTP_TOKEN is empty" in refused(env, transport=transport)


@pytest.mark.req("server.SECURITY.11")
@pytest.mark.parametrize("value", ["", "  ", "   "])
def test_an_empty_toml_token_is_refused(env: dict[str, str], tmp_path: Path, value: str) -> None:
    config = toml(tmp_path, f'[mcp]\nhttp_token = "{value}"\n')
    message = refused(env, config)
    assert message.startswith(f"{config}:2: mcp.http_token is empty")
    assert "mcp.http_token is empty" in message


@pytest.mark.req("server.SECURITY.11")
def test_a_token_with_inner_whitespace_is_refused(env: dict[str, str]) -> None:
    env["COOKED_MCP_HTTP_TOKEN"] = "two words"
    message = refused(env)
    assert "only visible ASCII" in message
    assert "visible ASCII" in message


@pytest.mark.req("server.SECURITY.2")
def test_the_token_never_shows_in_reprs_or_errors(env: dict[str, str], tmp_path: Path) -> None:
    env["COOKED_MCP_HTTP_TOKEN"] = TOKEN
    settings = http(env)
    assert_no_canary(CANARIES, repr(settings), repr(settings.http_token), str(settings.http_token))

    config = toml(tmp_path, f'[mcp]\nhttp_token = "{TOKEN}"\nhttp_token_cmd = "echo {TOKEN}"\n')
    with pytest.raises(ConfigError) as caught:
        http(env, config)
    assert_no_canary(CANARIES, str(caught.value))


# --- listeners, hosts and origins -----------------------------------------------------------------


@pytest.mark.req("server.SECURITY.1", "server.SECURITY.3")
@pytest.mark.parametrize(
    "addr",
    [
        "0.0.0.0:8123",
        "[::]:8123",
        "192.168.1.5:8123",
        "192.0.2.10:8123",
        "myhost.lan:8123",
        "cooked.example:8123",
    ],
)
def test_non_loopback_listeners_need_a_token(env: dict[str, str], addr: str) -> None:
    message = refused(env, addr=addr)
    assert "without a bearer token" in message
    assert "COOKED_MCP_HTTP_TOKEN" in message and "127.0.0.1" in message

    env["COOKED_MCP_HTTP_TOKEN"] = TOKEN
    assert http(env, addr=addr).http_token is not None
    assert token_of(http(env, addr=addr)) == TOKEN


@pytest.mark.req("server.SECURITY.1")
@pytest.mark.parametrize("addr", ["0.0.0.0:8123", "[::]:8123", "192.0.2.10:8123"])
def test_a_hand_built_settings_obeys_the_loopback_rule_too(addr: str) -> None:
    """The rule lives in the model, so no way of building settings (nor a transport) can skip it."""
    with pytest.raises(ValidationError) as caught:
        Settings(transport="http", http_addr=addr, username="u", password="p")
    assert f"refusing to serve HTTP on non-loopback address {addr} without a bearer token" in str(
        caught.value
    )
    built = Settings(transport="http", http_addr=addr, username="u", password="p", http_token=TOKEN)
    assert token_of(built) == TOKEN
    assert Settings(transport="stdio", http_addr=addr, username="u", password="p").http_token is None


@pytest.mark.req("server.CONFIG.1")
def test_a_hand_built_settings_reads_no_variable_of_the_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A settings library would read variables named like the fields (USERNAME is common): only
    load_settings's own layers, with cooked-mcp's own names, may feed the settings
    (closest requirement: CONFIG.1, the variables the server loads)."""
    for name, value in {"USERNAME": "shell-user", "LOG_LEVEL": "debug", "READ_ONLY": "1"}.items():
        monkeypatch.setenv(name, value)
    built = Settings(username="u", password="p")
    assert (built.username, built.log_level, built.read_only) == ("u", "warning", False)


@pytest.mark.req("server.SECURITY.1")
@pytest.mark.parametrize(
    "addr", ["127.0.0.1:8123", "127.0.0.2:8123", "127.3.4.5:8123", "[::1]:8123", "localhost:8123"]
)
def test_loopback_listeners_need_no_token(env: dict[str, str], addr: str) -> None:
    assert http(env, addr=addr).http_token is None


@pytest.mark.req("server.SECURITY.1")
@pytest.mark.parametrize(
    ("key", "value"), [("allowed_hosts", "cooked.lan:8123"), ("allowed_origins", "http://cooked.lan:8123")]
)
def test_extra_hosts_and_origins_need_a_token(
    env: dict[str, str], tmp_path: Path, key: str, value: str
) -> None:
    config = toml(tmp_path, f'[mcp]\n{key} = ["{value}"]\n')
    message = refused(env, config)
    assert f"mcp.{key} needs a bearer token" in message and "config.toml:2" in message
    env["COOKED_MCP_HTTP_TOKEN"] = TOKEN
    assert getattr(http(env, config), key) == (value,)


@pytest.mark.req("server.CONFIG.5")
@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("allowed_hosts", "", "empty entry"),
        ("allowed_hosts", "http://cooked.lan", "is not a Host value"),
        ("allowed_origins", "cooked.lan:8123", "is not an origin"),
        ("allowed_origins", "http://cooked.lan/mcp", "is not an origin"),
        ("allowed_origins", "ftp://cooked.lan", "is not an origin"),
    ],
)
def test_malformed_extra_hosts_and_origins_are_refused(
    env: dict[str, str], tmp_path: Path, key: str, value: str, problem: str
) -> None:
    env["COOKED_MCP_HTTP_TOKEN"] = TOKEN
    config = toml(tmp_path, f'[mcp]\n{key} = ["{value}"]\n')
    assert problem in refused(env, config)


@pytest.mark.req("server.TRANSPORT.2-2", "server.SECURITY.1")
def test_dns_rebinding_defence_is_on_for_loopback_and_wildcard_binds(
    env: dict[str, str], tmp_path: Path
) -> None:
    env["COOKED_MCP_HTTP_TOKEN"] = TOKEN
    config = toml(
        tmp_path, '[mcp]\nallowed_hosts = ["cooked.lan:8123"]\nallowed_origins = ["https://cooked.lan"]\n'
    )
    loopback = transport_security(http(env, config, addr="127.0.0.1:9000"))
    wildcard = transport_security(http(env, config, addr="0.0.0.0:9000"))
    for security in (loopback, wildcard):
        assert security.enable_dns_rebinding_protection
        assert {"127.0.0.1:*", "localhost:*", "[::1]:*", "cooked.lan:8123"} <= set(security.allowed_hosts)
        assert {"http://127.0.0.1:*", "http://localhost:*", "https://cooked.lan"} <= set(
            security.allowed_origins
        )
    # A wildcard is not a name a client should use: http://0.0.0.0:PORT from a web page stays refused.
    assert not any("0.0.0.0" in value for value in [*wildcard.allowed_hosts, *wildcard.allowed_origins])
    specific = transport_security(http(env, addr="192.0.2.10:9000"))
    assert (
        "192.0.2.10:9000" in specific.allowed_hosts and "http://192.0.2.10:9000" in specific.allowed_origins
    )
