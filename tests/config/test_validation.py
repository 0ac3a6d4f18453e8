"""Every configuration mistake is one line naming what is wrong, where, and how to fix it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from canaries import assert_no_canary
from config_support import CANARIES, PASSWORD, write

from cooked_mcp.config import load_settings
from cooked_mcp.exceptions import ConfigError


@pytest.mark.req("server.CONFIG.4-1", "server.CONFIG.5")
@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://cooked.wiki", "https://cooked.wiki"),
        ("https://cooked.wiki/", "https://cooked.wiki"),
        ("HTTPS://cooked.wiki", "https://cooked.wiki"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://[::1]:8080/", "http://[::1]:8080"),
    ],
)
def test_valid_base_urls(env: dict[str, str], url: str, expected: str) -> None:
    env["COOKED_BASE_URL"] = url
    assert load_settings(config_path=None, environ=env).base_url == expected


INVALID_BASE_URLS = [
    ("ftp://cooked.wiki", "the scheme must be http or https"),
    ("cooked.wiki", "the scheme must be http or https"),
    ("https://", "it has no host"),
    ("https://user:CANARY-PW-7f3a@cooked.wiki", "must not contain a user name or password"),
    ("https://cooked.wiki?x=1", "must not have a query"),
    ("https://cooked.wiki/?", "must not have a query"),
    ("https://cooked.wiki#top", "must not have a fragment"),
    ("https://cooked.wiki/api", "must not have a path"),
    ("https://cooked.wiki//", "must not have a path"),
    ("https://cooked.wiki:99999", "the port is not a number"),
    ("https://cooked.wiki:abc", "the port is not a number"),
    ("https://cooked .wiki", "whitespace or control characters"),
    ("https://cooked.wiki\n", "whitespace or control characters"),
]


@pytest.mark.req("server.CONFIG.5", "server.CONFIG.4-1")
@pytest.mark.parametrize(("url", "problem"), INVALID_BASE_URLS, ids=[u for u, _ in INVALID_BASE_URLS])
def test_invalid_base_urls_are_refused_with_the_reason(env: dict[str, str], url: str, problem: str) -> None:
    env["COOKED_BASE_URL"] = url
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=None, environ=env)

    message = str(caught.value)
    assert problem in message
    assert "COOKED_BASE_URL" in message
    assert "https://cooked.wiki" in message  # the example of a correct value
    assert "\n" not in message
    assert_no_canary(CANARIES, message)


@pytest.mark.req("server.CONFIG.5", "server.CONFIG.4-2")
def test_an_invalid_base_url_in_the_file_names_file_and_line(env: dict[str, str], tmp_path: Path) -> None:
    del env["COOKED_LOGIN_USERNAME"]
    path = write(
        tmp_path / "c.toml", '[user]\nname = "x"\n\n[cooked]\nbase_url = "https://cooked.wiki/api"\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=str(path), environ=env)

    assert f"cooked.base_url in {path}:5" in str(caught.value)


INVALID_ADDRESSES = [
    ("8123", "it must be HOST:PORT"),
    (":8123", "it must be HOST:PORT"),
    ("localhost:", "the port must be a number"),
    ("localhost:http", "the port must be a number"),
    ("localhost:0", "between 1 and 65535"),
    ("localhost:65536", "between 1 and 65535"),
    ("::1:8123", "write an IPv6 host in brackets"),
    ("[::1:8123", "closing bracket"),
    ("[not-v6]:8123", "not an IPv6 address"),
    ("local host:8123", "not a valid host"),
    ("localhost:+80", "the port must be a number"),
]


@pytest.mark.req("server.CONFIG.8-1")
@pytest.mark.parametrize(("addr", "problem"), INVALID_ADDRESSES, ids=[a for a, _ in INVALID_ADDRESSES])
def test_malformed_http_addresses_are_refused(env: dict[str, str], addr: str, problem: str) -> None:
    env["COOKED_MCP_HTTP_ADDR"] = addr
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=None, environ=env)

    message = str(caught.value)
    assert problem in message and "COOKED_MCP_HTTP_ADDR" in message and "HOST:PORT" in message


@pytest.mark.req("server.CONFIG.8")
def test_a_malformed_http_addr_flag_is_named_as_the_flag(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="from --http-addr"):
        load_settings(config_path=None, environ=env, http_addr="nonsense")


@pytest.mark.req("server.CONFIG.8", "server.TRANSPORT.3")
@pytest.mark.parametrize(
    ("addr", "expected"),
    [
        ("127.0.0.1:1", ("127.0.0.1", 1)),
        ("localhost:65535", ("localhost", 65535)),
        ("[::1]:8123", ("::1", 8123)),
    ],
)
def test_well_formed_http_addresses(env: dict[str, str], addr: str, expected: tuple[str, int]) -> None:
    settings = load_settings(config_path=None, environ=env, http_addr=addr)
    assert settings.http_addr == expected


TOML_MISTAKES = [
    ('[cooked]\nbase_url = "https://x"\n[mcp\n', ":3:", "invalid TOML"),
    ('[user]\nname = "a"\nname = "b"\n', ":3:", "invalid TOML"),
    ('\n\n[user]\nnmae = "alice"\n', ":4:", "unknown key user.nmae"),
    ('[mcp]\nread_only = "yes"\n', ":2:", "mcp.read_only must be a boolean"),
    ("[mcp]\n\n  allowed_hosts = [1, 2]\n", ":3:", "mcp.allowed_hosts must be a list of strings"),
    ("[cooked]\nbase_url = 42\n", ":2:", "cooked.base_url must be a string"),
    ('[log]\nlevel = "info"\n\n[logging]\nlevel = "x"\n', ":4:", "unknown table [logging]"),
    ('password = "x"\n[user]\n', ":1:", "unknown key password"),
    ('cooked = "https://x"\n', ":1:", "cooked must be a table"),
    ('[[user]]\nname = "a"\n[[user]]\nname = "b"\n', ":1:", "user must be a table"),
    ('user.nmae = "alice"\n', ":1:", "unknown key user.nmae"),
    ('[ "user" ]\n"nmae" = "alice"\n', ":2:", "unknown key user.nmae"),
]


@pytest.mark.req("server.CONFIG.2", "server.VERIFICATION.1")
@pytest.mark.parametrize(("text", "line", "problem"), TOML_MISTAKES, ids=[m[2] for m in TOML_MISTAKES])
def test_toml_mistakes_name_the_file_line_and_key(
    env: dict[str, str], tmp_path: Path, text: str, line: str, problem: str
) -> None:
    path = write(tmp_path / "config.toml", text)
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=str(path), environ=env)

    message = str(caught.value)
    assert message.startswith(str(path) + line)
    assert problem in message
    assert "\n" not in message


@pytest.mark.req("server.CONFIG.2")
def test_an_unknown_key_lists_the_known_ones(env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", '[mcp]\nhttp_adr = "x"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=str(path), environ=env)

    assert "known keys in [mcp]: http_addr, http_token, http_token_cmd, read_only" in str(caught.value)


@pytest.mark.req("server.CONFIG.2")
def test_a_file_that_is_not_utf8_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'[user]\nname = "\xff"\n')
    with pytest.raises(ConfigError, match="is not valid UTF-8"):
        load_settings(config_path=str(path), environ=env)


@pytest.mark.req("server.CONFIG.2")
@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_an_unreadable_file_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", "")
    path.chmod(0)
    with pytest.raises(ConfigError, match=r"cannot read config file .*: Permission denied"):
        load_settings(config_path=str(path), environ=env)


@pytest.mark.req("server.CONFIG.2", "server.CONFIG.6")
def test_a_directory_is_not_a_config_file(env: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_settings(config_path=str(tmp_path), environ=env)


@pytest.mark.req("server.CONFIG.2", "authentication.SECRETS.3")
def test_toml_errors_never_quote_the_values_in_the_file(env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", f'[user]\npassword = "{PASSWORD}"\nextra = "{PASSWORD}"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=str(path), environ=env)

    assert "unknown key user.extra" in str(caught.value)
    assert_no_canary(CANARIES, str(caught.value), repr(caught.value))


@pytest.mark.req("server.CONFIG.2")
def test_of_several_mistakes_the_first_in_the_file_is_named(env: dict[str, str], tmp_path: Path) -> None:
    """Even when it sits in a sub-table written before its parent's own keys."""
    text = '[mcp.limits]\nkept_outcomes = 0\n\n[mcp]\nread_only = "yes"\n'
    path = write(tmp_path / "config.toml", text)
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=str(path), environ=env)

    assert str(caught.value).startswith(f"{path}:2: mcp.limits.kept_outcomes must be a whole number")
