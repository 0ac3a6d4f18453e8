"""Set-ups that would work but are unsafe or probably mistaken get a word (or, for plain http, a refusal)."""

from __future__ import annotations

from pathlib import Path

import pytest
from canaries import assert_no_canary
from config_support import CANARIES, PASSWORD, USERNAME, write
from servers import MODULE, run_server

from cooked_mcp.config import load_settings
from cooked_mcp.exceptions import ConfigError


@pytest.mark.req("server.CONFIG.5", "server.CONFIG.4-1")
@pytest.mark.parametrize("url", ["http://cooked.wiki", "http://192.168.1.20:8080"])
def test_a_plain_http_base_url_off_this_machine_is_refused(env: dict[str, str], url: str) -> None:
    env["COOKED_BASE_URL"] = url
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=None, environ=env)
    message = str(caught.value)
    assert (
        "plain-http" in message and "COOKED_BASE_URL" in message and "COOKED_ALLOW_INSECURE_HTTP" in message
    )
    assert_no_canary(CANARIES, message)


@pytest.mark.req("server.CONFIG.5", "server.CONFIG.4-2")
def test_plain_http_is_accepted_when_explicitly_allowed(env: dict[str, str], tmp_path: Path) -> None:
    env["COOKED_BASE_URL"] = "http://cooked.lan:8080"
    env["COOKED_ALLOW_INSECURE_HTTP"] = "1"
    assert load_settings(config_path=None, environ=env).base_url == "http://cooked.lan:8080"
    del env["COOKED_ALLOW_INSECURE_HTTP"]
    path = write(tmp_path / "c.toml", "[cooked]\nallow_insecure_http = true\n")
    assert load_settings(config_path=str(path), environ=env).base_url == "http://cooked.lan:8080"


@pytest.mark.req("server.CONFIG.5")
@pytest.mark.parametrize("url", ["http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080"])
def test_plain_http_on_this_machine_needs_no_permission(env: dict[str, str], url: str) -> None:
    env["COOKED_BASE_URL"] = url
    assert load_settings(config_path=None, environ=env).base_url == url


@pytest.mark.req("server.CONFIG.2", "authentication.CREDENTIALS.4")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_plaintext_secret_others_can_read_is_warned_about(
    bare_env: dict[str, str], tmp_path: Path, mode: int
) -> None:
    path = write(tmp_path / "c.toml", f'[user]\nname = "{USERNAME}"\npassword = "{PASSWORD}"\n')
    path.chmod(mode)
    (warning,) = load_settings(config_path=str(path), environ=bare_env).warnings
    assert str(path) in warning and "user.password" in warning and f"chmod 600 {path}" in warning
    assert "\n" not in warning
    assert_no_canary(CANARIES, warning)


@pytest.mark.req("server.CONFIG.2", "authentication.CREDENTIALS.6", "authentication.CREDENTIALS.15")
@pytest.mark.parametrize("mode", [0o664, 0o646])
def test_a_command_others_can_change_is_warned_about(
    bare_env: dict[str, str], tmp_path: Path, mode: int
) -> None:
    path = write(tmp_path / "c.toml", '[user]\nname = "u"\npassword_cmd = "echo pw"\n')
    path.chmod(mode)
    (warning,) = load_settings(config_path=str(path), environ=bare_env).warnings
    assert str(path) in warning and "user.password_cmd" in warning and f"chmod 600 {path}" in warning


@pytest.mark.req("server.CONFIG.2")
def test_private_files_and_readable_files_without_secrets_get_no_warning(
    bare_env: dict[str, str], tmp_path: Path
) -> None:
    private = write(tmp_path / "a.toml", f'[user]\nname = "u"\npassword = "{PASSWORD}"\n')
    private.chmod(0o600)
    assert load_settings(config_path=str(private), environ=bare_env).warnings == ()
    commands = write(tmp_path / "b.toml", '[user]\nname = "u"\npassword_cmd = "echo pw"\n')
    commands.chmod(0o644)  # readable is fine: a command holds no secret
    assert load_settings(config_path=str(commands), environ=bare_env).warnings == ()


@pytest.mark.req("server.CONFIG.1")
@pytest.mark.parametrize(
    ("name", "nearest"),
    [
        ("COOKED_LOGIN_PASWORD", "COOKED_LOGIN_PASSWORD"),
        ("COOKED_MCP_READONLY", "COOKED_MCP_READ_ONLY"),
        ("COOKED_BASEURL", "COOKED_BASE_URL"),
    ],
)
def test_a_misspelt_variable_is_warned_about_with_the_nearest_name(
    env: dict[str, str], name: str, nearest: str
) -> None:
    env[name] = PASSWORD
    (warning,) = load_settings(config_path=None, environ=env).warnings
    assert name in warning and f"did you mean {nearest}?" in warning
    assert_no_canary(CANARIES, warning)  # the name only, never the value


@pytest.mark.req("server.CONFIG.1")
def test_known_variables_get_no_warning(env: dict[str, str]) -> None:
    env["COOKED_MCP_LOG_LEVEL"] = "info"
    env["OTHER_COOKED_THING"] = "x"  # not ours: only COOKED_* is looked at
    assert load_settings(config_path=None, environ=env).warnings == ()


@pytest.mark.req("server.CONFIG.1", "server.VERIFICATION.1")
def test_the_process_prints_each_warning_as_one_stderr_line(proc_env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", f'[user]\npassword = "{PASSWORD}"\n')
    path.chmod(0o644)
    proc_env["COOKED_LOGIN_PASWORD"] = "x"
    del proc_env["COOKED_LOGIN_PASSWORD"]
    done = run_server(proc_env, "--config", str(path), command=MODULE)
    warnings = [line for line in done.stderr.splitlines() if line.startswith("cooked-mcp: warning: ")]
    assert len(warnings) == 2, done.stderr
    assert f"chmod 600 {path}" in warnings[0] and "did you mean COOKED_LOGIN_PASSWORD?" in warnings[1]
    assert_no_canary(CANARIES, done.stderr)
