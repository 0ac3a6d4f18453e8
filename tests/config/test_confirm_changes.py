"""The setting that turns confirmation off: on by default, from the environment or the file,
checked like every boolean, and named in --help."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_support import write
from servers import run_main

from cooked_mcp.config import load_settings
from cooked_mcp.exceptions import ConfigError


@pytest.mark.req("extensions.CONFIRMATION.10", "server.CONFIG.1", "server.CONFIG.2", "server.CONFIG.3")
def test_confirmation_is_on_by_default_and_off_from_the_environment_or_the_file(
    env: dict[str, str], tmp_path: Path
) -> None:
    assert load_settings(config_path=None, environ=env).confirm_changes is True
    path = write(tmp_path / "config.toml", "[mcp]\nconfirm_changes = false\n")
    from_file = load_settings(config_path=str(path), environ=env)
    assert from_file.confirm_changes is False
    assert from_file.describe_source("confirm_changes") == f"mcp.confirm_changes in {path}:2"
    env["COOKED_MCP_CONFIRM_CHANGES"] = "yes"
    assert load_settings(config_path=str(path), environ=env).confirm_changes is True
    env["COOKED_MCP_CONFIRM_CHANGES"] = "maybe"
    with pytest.raises(ConfigError, match="COOKED_MCP_CONFIRM_CHANGES must be true or false"):
        load_settings(config_path=None, environ=env)


@pytest.mark.req("extensions.CONFIRMATION.10")
def test_help_names_the_setting_and_what_it_does(env: dict[str, str]) -> None:
    shown = run_main(env, "--help")
    assert shown.returncode == 0
    assert "COOKED_MCP_CONFIRM_CHANGES=false: no questions before changes that lose data" in shown.stdout
    assert "mcp.confirm_changes" in shown.stdout.split("config file keys")[1]
