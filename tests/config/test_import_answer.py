"""The URL import answer deadline: from the environment or the file, checked, and in force in the server.

The server here is the application the process builds from its environment, run in this process:
the deadline is a setting's effect, not the process boundary. tests/recipes/test_import_once_stories.py
and tests/transports/test_signals.py run the real process with a shortened deadline too."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_support import write
from guidance import data_only
from mcp import Client
from servers import server_env

from cooked_fake import FakeCooked
from cooked_mcp.app import build_application
from cooked_mcp.config import load_settings
from cooked_mcp.exceptions import ConfigError

pytestmark = pytest.mark.anyio


@pytest.mark.req("server.CONFIG.1", "server.CONFIG.2", "server.CONFIG.3")
def test_the_answer_deadline_defaults_to_50_s_and_comes_from_env_over_the_file(
    env: dict[str, str], tmp_path: Path
) -> None:
    assert load_settings(config_path=None, environ=env).import_answer_seconds == 50.0
    path = write(tmp_path / "config.toml", "[mcp]\nimport_answer_seconds = 25\n")
    assert load_settings(config_path=str(path), environ=env).import_answer_seconds == 25.0
    env["COOKED_MCP_IMPORT_ANSWER_SECONDS"] = "0.5"
    assert load_settings(config_path=str(path), environ=env).import_answer_seconds == 0.5


@pytest.mark.req("server.CONFIG.2", "server.CONFIG.3")
def test_the_answer_deadline_names_its_source(env: dict[str, str], tmp_path: Path) -> None:
    assert load_settings(config_path=None, environ=env).describe_source("import_answer_seconds") == (
        "the default"
    )
    path = write(tmp_path / "config.toml", "[mcp]\nimport_answer_seconds = 25\n")
    from_file = load_settings(config_path=str(path), environ=env)
    assert from_file.describe_source("import_answer_seconds") == f"mcp.import_answer_seconds in {path}:2"
    env["COOKED_MCP_IMPORT_ANSWER_SECONDS"] = "0.5"
    from_env = load_settings(config_path=str(path), environ=env)
    assert from_env.describe_source("import_answer_seconds") == (
        "the environment variable COOKED_MCP_IMPORT_ANSWER_SECONDS"
    )
    assert from_env.overridden["import_answer_seconds"] == f"mcp.import_answer_seconds in {path}:2"


@pytest.mark.req("server.CONFIG.1", "server.CONFIG.2")
@pytest.mark.parametrize("value", ["0", "-3", "601", "soon", "nan", "inf"])
def test_an_answer_deadline_out_of_range_is_refused_naming_the_setting(
    env: dict[str, str], tmp_path: Path, value: str
) -> None:
    env["COOKED_MCP_IMPORT_ANSWER_SECONDS"] = value
    with pytest.raises(ConfigError, match=r"COOKED_MCP_IMPORT_ANSWER_SECONDS must be a number of seconds"):
        load_settings(config_path=None, environ=env)
    del env["COOKED_MCP_IMPORT_ANSWER_SECONDS"]
    path = write(tmp_path / "config.toml", '[mcp]\nimport_answer_seconds = "50"\n')
    with pytest.raises(ConfigError, match=r"mcp.import_answer_seconds must be a number of seconds"):
        load_settings(config_path=str(path), environ=env)


@pytest.mark.req("server.CONFIG.1", "recipes.SAVE.3")
async def test_the_running_server_answers_a_slow_import_by_the_configured_deadline(
    fake: FakeCooked, tmp_path: Path
) -> None:
    fake.fail_with("slow", "POST", "/api/new", seconds=1.5)
    env = server_env(
        tmp_path,
        fake.base_url,
        COOKED_MCP_IMPORT_ANSWER_SECONDS="0.5",
    )

    async with build_application(load_settings(config_path=None, environ=env)) as application:
        async with Client(application.server) as client:
            result = await client.call_tool(
                "save_recipe", {"source": "url", "url": "https://example.org/slow"}
            )
        await application.tools.changes_finished()  # what a stop of the process waits for

    assert not result.is_error
    assert data_only(result) == {"source": "url", "saved": False, "import_running": True}
    assert "Do NOT retry" in (result.structured_content or {})["notice"]
