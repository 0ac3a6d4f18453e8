"""The Cooked username and password: sources, precedence, commands, ambiguity, absence, secrecy."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from canaries import assert_no_canary
from config_support import CANARIES, PASSWORD, USERNAME, write

from cooked_mcp.config import Settings, load_settings
from cooked_mcp.exceptions import ConfigError, CredentialCommandError


def _marker_command(marker: Path, output: str) -> str:
    """A command that leaves a trace when it runs, so a test can prove it did not."""
    return f"touch {marker}; echo {output}"


@pytest.mark.req(
    "authentication.CREDENTIALS.5",
    "authentication.CREDENTIALS.6",
    "authentication.CREDENTIALS.7",
    "authentication.CREDENTIALS.7-1",
    "authentication.CREDENTIALS.15",
)
def test_username_and_password_from_commands(bare_env: dict[str, str], tmp_path: Path) -> None:
    path = write(
        tmp_path / "config.toml",
        f'[user]\nname_cmd = "printf \'{USERNAME}\\\\n\'"\npassword_cmd = "echo {PASSWORD} | cat"\n',
    )
    settings = load_settings(config_path=str(path), environ=bare_env)

    assert settings.username == USERNAME
    assert settings.password.get_secret_value() == PASSWORD


@pytest.mark.req("authentication.CREDENTIALS.11", "authentication.CREDENTIALS.1")
def test_the_username_variable_wins_over_name_cmd_which_then_never_runs(
    bare_env: dict[str, str], tmp_path: Path
) -> None:
    marker = tmp_path / "name_cmd-ran"
    path = write(
        tmp_path / "config.toml",
        f'[user]\nname_cmd = "{_marker_command(marker, "toml-user")}"\npassword = "p"\n',
    )
    bare_env["COOKED_LOGIN_USERNAME"] = "env-user"
    settings = load_settings(config_path=str(path), environ=bare_env)

    assert settings.username == "env-user"
    assert not marker.exists()


@pytest.mark.req("authentication.CREDENTIALS.12", "authentication.CREDENTIALS.2")
def test_the_password_variable_wins_over_password_cmd_which_then_never_runs(
    bare_env: dict[str, str], tmp_path: Path
) -> None:
    marker = tmp_path / "password_cmd-ran"
    path = write(
        tmp_path / "config.toml",
        f'[user]\nname = "u"\npassword_cmd = "{_marker_command(marker, "toml-password")}"\n',
    )
    bare_env["COOKED_LOGIN_PASSWORD"] = PASSWORD
    settings = load_settings(config_path=str(path), environ=bare_env)

    assert settings.password.get_secret_value() == PASSWORD
    assert not marker.exists()


@pytest.mark.req("authentication.CREDENTIALS.8", "authentication.CREDENTIALS.8-1")
def test_name_and_name_cmd_together_are_refused_even_when_the_variable_is_set(
    env: dict[str, str], tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    path = write(
        tmp_path / "config.toml", f'[user]\nname = "a"\nname_cmd = "{_marker_command(marker, "b")}"\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=str(path), environ=env)

    assert str(caught.value) == f"{path}:3: user.name and user.name_cmd are both set; keep only one of them"
    assert not marker.exists()


@pytest.mark.req("authentication.CREDENTIALS.8", "authentication.CREDENTIALS.8-2")
def test_password_and_password_cmd_together_are_refused_even_when_the_variable_is_set(
    env: dict[str, str], tmp_path: Path
) -> None:
    path = write(tmp_path / "config.toml", f'[user]\npassword_cmd = "echo x"\npassword = "{PASSWORD}"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=str(path), environ=env)

    assert "user.password and user.password_cmd are both set" in str(caught.value)
    assert str(caught.value).startswith(f"{path}:2:")
    assert_no_canary(CANARIES, str(caught.value))


@pytest.mark.req("authentication.CREDENTIALS.9")
@pytest.mark.parametrize(
    ("missing", "names"),
    [
        ("COOKED_LOGIN_USERNAME", ("COOKED_LOGIN_USERNAME", "user.name", "user.name_cmd")),
        ("COOKED_LOGIN_PASSWORD", ("COOKED_LOGIN_PASSWORD", "user.password", "user.password_cmd")),
    ],
)
def test_a_missing_credential_names_every_way_to_set_it(
    env: dict[str, str], home: Path, missing: str, names: tuple[str, ...]
) -> None:
    del env[missing]
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=None, environ=env)

    message = str(caught.value)
    assert all(name in message for name in names)
    assert str(home / ".config" / "cooked-mcp" / "config.toml") in message  # where the file would be
    assert_no_canary(CANARIES, message)


@pytest.mark.req("authentication.CREDENTIALS.9")
def test_with_both_credentials_missing_both_are_named(bare_env: dict[str, str], home: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=None, environ=bare_env)
    message = str(caught.value)
    assert message.startswith("no Cooked username or password configured: ")
    for name in ("COOKED_LOGIN_USERNAME", "COOKED_LOGIN_PASSWORD", "user.name_cmd", "user.password_cmd"):
        assert name in message
    assert str(home / ".config" / "cooked-mcp" / "config.toml") in message


@pytest.mark.req("authentication.CREDENTIALS.9", "server.CONFIG.1")
@pytest.mark.parametrize(
    ("missing", "misspelt"),
    [
        ("COOKED_LOGIN_PASSWORD", "COOKED_LOGIN_PASWORD"),
        ("COOKED_LOGIN_PASSWORD", "COOKED_PASSWORD"),
        ("COOKED_LOGIN_USERNAME", "COOKED_USERNAME"),
    ],
)
def test_a_missing_credential_names_the_misspelt_variable_that_was_meant_for_it(
    env: dict[str, str], missing: str, misspelt: str
) -> None:
    """The misspelling warning prints only once settings load; the refusal must carry the hint itself."""
    del env[missing]
    env[misspelt] = PASSWORD
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=None, environ=env)
    message = str(caught.value)
    assert f"{misspelt} is set but is not a cooked-mcp setting (did you mean {missing}?)" in message
    assert_no_canary(CANARIES, message)  # the name only, never the value


@pytest.mark.req("authentication.CREDENTIALS.9")
def test_with_both_missing_each_misspelling_is_named(bare_env: dict[str, str]) -> None:
    bare_env |= {"COOKED_USERNAME": "a", "COOKED_PASSWORD": "b", "COOKED_MCP_READONLY": "1"}
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=None, environ=bare_env)
    message = str(caught.value)
    assert "COOKED_USERNAME is set" in message and "COOKED_PASSWORD is set" in message
    assert "READONLY" not in message  # a misspelling of another setting is the warning's business


@pytest.mark.req("authentication.CREDENTIALS.9")
@pytest.mark.parametrize("key", ["name", "password", "name_cmd", "password_cmd"])
def test_empty_credentials_in_the_file_are_refused(
    bare_env: dict[str, str], tmp_path: Path, key: str
) -> None:
    other = {"name": "password", "password": "name", "name_cmd": "password", "password_cmd": "name"}[key]
    path = write(tmp_path / "config.toml", f'[user]\n{other} = "x"\n{key} = "  "\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=str(path), environ=bare_env)

    assert str(caught.value).startswith(f"{path}:3: user.{key} is empty")


@pytest.mark.req(
    "authentication.CREDENTIALS.20",
    "authentication.CREDENTIALS.19",
    "authentication.SECRETS.3",
)
def test_a_failing_password_command_stops_startup_without_its_output(
    bare_env: dict[str, str], tmp_path: Path
) -> None:
    path = write(
        tmp_path / "config.toml",
        f'[user]\nname = "u"\npassword_cmd = "echo {PASSWORD}; echo STDERR-CANARY >&2; exit 4"\n',
    )
    with pytest.raises(CredentialCommandError) as caught:
        load_settings(config_path=str(path), environ=bare_env)

    # Like every other config error, it names the file and line first.
    assert str(caught.value).startswith(f"{path}:3: user.password_cmd command failed with exit status 4")
    assert "STDERR-CANARY" not in str(caught.value)
    assert_no_canary(CANARIES, str(caught.value))


@pytest.mark.req("authentication.CREDENTIALS.7-2")
def test_an_empty_name_command_output_stops_startup(bare_env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", '[user]\nname_cmd = "printf \'\\\\n\'"\npassword = "p"\n')
    with pytest.raises(CredentialCommandError, match=r"user\.name_cmd command produced no output"):
        load_settings(config_path=str(path), environ=bare_env)


@pytest.mark.req("authentication.CREDENTIALS.15")
def test_commands_run_only_after_every_other_check_passed(bare_env: dict[str, str], tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = write(
        tmp_path / "config.toml",
        f'[user]\nname = "u"\npassword_cmd = "{_marker_command(marker, "p")}"\n[cooked]\nbase_url = "ftp://x"\n',
    )
    with pytest.raises(ConfigError, match="scheme must be http or https"):
        load_settings(config_path=str(path), environ=bare_env)
    assert not marker.exists()


@pytest.mark.req(
    "authentication.SECRETS.1",
    "authentication.SECRETS.3",
    "server.SECURITY.2",
)
def test_settings_never_show_the_credentials(env: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    env["COOKED_MCP_HTTP_TOKEN"] = "CANARY-TOKEN-c0de"
    settings = load_settings(config_path=None, environ=env, transport="http")

    assert settings.http_token is not None
    assert_no_canary(
        CANARIES, repr(settings), str(settings), repr(settings.password), str(settings.http_token)
    )
    assert_no_canary(CANARIES, *(record.getMessage() for record in caplog.records))
    assert settings.password.get_secret_value() == PASSWORD


@pytest.mark.parametrize(
    "line",
    [
        pytest.param('cookie = "ring-session=abc"', marks=pytest.mark.req("authentication.CREDENTIALS.13")),
        pytest.param('session = "abc"', marks=pytest.mark.req("authentication.CREDENTIALS.13")),
        pytest.param('provider = "google"', marks=pytest.mark.req("authentication.CREDENTIALS.14")),
        pytest.param("magic_link = true", marks=pytest.mark.req("authentication.CREDENTIALS.14")),
    ],
)
def test_session_cookies_and_social_logins_cannot_be_configured(
    env: dict[str, str], tmp_path: Path, line: str
) -> None:
    path = write(tmp_path / "config.toml", f"[user]\n{line}\n")
    with pytest.raises(ConfigError, match="unknown key user"):
        load_settings(config_path=str(path), environ=env)


@pytest.mark.req("authentication.CREDENTIALS.14", "authentication.CREDENTIALS.9")
def test_a_username_without_a_password_is_not_enough(bare_env: dict[str, str]) -> None:
    bare_env["COOKED_LOGIN_USERNAME"] = "alice@example.com"
    bare_env["COOKED_SESSION_COOKIE"] = "ring-session=abc"  # not a thing: ignored
    with pytest.raises(ConfigError, match="no Cooked password configured"):
        load_settings(config_path=None, environ=bare_env)


@pytest.mark.req("server.SINGLE_USER.1", "server.SINGLE_USER.3")
def test_settings_hold_exactly_one_account(env: dict[str, str], tmp_path: Path) -> None:
    env["COOKED_LOGIN_USERNAME"] = "alice,bob"
    settings = load_settings(config_path=None, environ=env)

    assert settings.username == "alice,bob"  # one opaque name, never split into several accounts
    credential_fields = [name for name in Settings.model_fields if name in {"username", "password"}]
    assert credential_fields == ["username", "password"]
    assert isinstance(settings.username, str)

    path = write(tmp_path / "users.toml", '[[user]]\nname = "alice"\n[[user]]\nname = "bob"\n')
    with pytest.raises(ConfigError, match="user must be a table"):
        load_settings(config_path=str(path), environ=env)
    per_client = write(tmp_path / "clients.toml", '[user.bob]\nname = "bob"\n')
    with pytest.raises(ConfigError, match=r"unknown key user\.bob"):
        load_settings(config_path=str(per_client), environ=env)


@pytest.mark.req("authentication.CREDENTIALS.6", "authentication.CREDENTIALS.20")
def test_a_command_that_is_not_found_names_file_and_line(bare_env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", '[user]\nname = "u"\n\npassword_cmd = "no-such-pass-5e1 show c"\n')
    with pytest.raises(CredentialCommandError) as caught:
        load_settings(config_path=str(path), environ=bare_env)

    assert str(caught.value).startswith(f"{path}:4: user.password_cmd command was not found")
    assert "absolute path" in str(caught.value)
