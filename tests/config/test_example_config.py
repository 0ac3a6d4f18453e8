"""config.example.toml is a file users copy: it must load, and name every key there is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from config_support import PASSWORD, TOKEN, USERNAME, write

from cooked_mcp.config import load_settings, schema_keys

EXAMPLE = Path(__file__).resolve().parent.parent.parent / "config.example.toml"
_COMMENTED_KEY = re.compile(r"^# (\w+ = .*)$", re.MULTILINE)


def _credentials(home: Path) -> dict[str, str]:
    """Credentials from the environment, which wins: no ``*_cmd`` of the example ever runs."""
    return {
        "HOME": str(home),
        "COOKED_LOGIN_USERNAME": USERNAME,
        "COOKED_LOGIN_PASSWORD": PASSWORD,
        "COOKED_MCP_HTTP_TOKEN": TOKEN,
        "COOKED_MCP_OWNER_PASSWORD": PASSWORD,
    }


@pytest.mark.req("server.CONFIG.2", "server.CONFIG.6", "server.CONFIG.4-2")
def test_the_example_config_loads_as_shipped(home: Path) -> None:
    settings = load_settings(config_path=str(EXAMPLE), environ=_credentials(home))
    assert settings.base_url == "https://cooked.wiki" and settings.log_level == "warning"
    assert settings.describe_source("base_url").startswith(f"cooked.base_url in {EXAMPLE}:")


@pytest.mark.req("server.CONFIG.2", "server.CONFIG.8-2", "server.SECURITY.5")
def test_the_example_names_every_key_and_loads_with_all_of_them_switched_on(
    home: Path, tmp_path: Path
) -> None:
    text = EXAMPLE.read_text("utf-8")
    tables = dict(re.findall(r"^\[(\w+)\]\n(.*?)(?=^\[|\Z)", text, re.MULTILINE | re.DOTALL))
    for dotted in schema_keys():  # a key, or its exclusive alternative mentioned in a comment
        table, key = dotted.split(".")
        assert re.search(rf"\b{key} = ", tables.get(table, "")), dotted
    switched_on = write(tmp_path / "all.toml", _COMMENTED_KEY.sub(r"\1", text))
    settings = load_settings(config_path=str(switched_on), environ=_credentials(home), transport="http")
    assert settings.allowed_hosts == ("kitchen.lan:8123",) and settings.http_addr.port == 8123


@pytest.mark.tooling
def test_every_example_command_is_an_absolute_path_as_its_comment_asks() -> None:
    """Desktop clients start servers with a short PATH; a copied bare command name would exit 127."""
    commands = re.findall(r'^(?:# )?\w+_cmd = "([^"]*)"', EXAMPLE.read_text("utf-8"), re.MULTILINE)
    assert commands and all(command.startswith("/") for command in commands), commands
