"""Messages that ask to check the Cooked base URL name the setting it actually came from (issue 16 item 2).

The client built from the settings (as the server builds it) says ``cooked.base_url in
path:line`` or the environment variable that won, never a guessed ``COOKED_BASE_URL``. Against
the fake Cooked over real HTTP on 127.0.0.1, or a free port on it where nothing listens.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from servers import free_port

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, SEED_USERNAME, FakeCooked
from cooked_mcp.config import Settings, load_settings
from cooked_mcp.cooked import CookedClient
from cooked_mcp.exceptions import CookedAuthError, CookedUnavailable

pytestmark = pytest.mark.anyio

SHOPPING = f"/api/user/{SEED_USERNAME}/shopping-list"


def settings_for(tmp_path: Path, file_url: str, env_url: str | None = None) -> tuple[Settings, Path]:
    """Settings with ``cooked.base_url = file_url`` in a config file, beaten by ``env_url`` if given."""
    config = tmp_path / "config.toml"
    config.write_text(f'[cooked]\nbase_url = "{file_url}"\n', "utf-8")
    environ = {
        "HOME": str(tmp_path),
        "COOKED_LOGIN_USERNAME": SEED_LOGIN,
        "COOKED_LOGIN_PASSWORD": SEED_PASSWORD,
    }
    if env_url is not None:
        environ["COOKED_BASE_URL"] = env_url
    return load_settings(config_path=str(config), environ=environ), config


@pytest.mark.req("server.CONFIG.4-2", "api-client.ERRORS.5")
async def test_a_connection_failure_names_the_config_file_line_of_the_base_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    settings, config = settings_for(tmp_path, url)
    async with CookedClient.from_settings(settings) as client:
        with pytest.raises(CookedUnavailable) as caught:
            await client.list_recipes(1, 1)

    assert "connection was refused" in str(caught.value)
    assert f"check the host and port in the base URL {url} from cooked.base_url in {config}:2" in (
        caught.value.next_step
    )
    assert "COOKED_BASE_URL" not in caught.value.next_step


@pytest.mark.req("server.CONFIG.4-1", "server.CONFIG.3", "authentication.SESSION.6")
async def test_a_rejected_session_names_the_variable_that_beat_the_file(
    fake: FakeCooked, tmp_path: Path
) -> None:
    settings, config = settings_for(tmp_path, f"http://127.0.0.1:{free_port()}", env_url=fake.base_url)
    fake.fail(method="GET", path=SHOPPING, status=401, times=None)
    async with CookedClient.from_settings(settings) as client:
        with pytest.raises(CookedAuthError) as caught:
            await client.get_shopping_list()

    assert (
        f"check that the base URL {fake.base_url} from the environment variable COOKED_BASE_URL "
        f"(overriding cooked.base_url in {config}:2) points straight at Cooked"
    ) in caught.value.next_step


@pytest.mark.req("server.CONFIG.4-2", "api-client.ERRORS.5")
async def test_a_redirect_and_a_broken_answer_name_the_config_file_line(
    fake: FakeCooked, tmp_path: Path
) -> None:
    settings, config = settings_for(tmp_path, fake.base_url)
    setting = f"the base URL {fake.base_url} from cooked.base_url in {config}:2"
    async with CookedClient.from_settings(settings) as client:
        fake.fail(method="GET", path=SHOPPING, status=302, headers={"Location": "/elsewhere"})
        with pytest.raises(CookedUnavailable) as redirected:
            await client.get_shopping_list()
        fake.fail_with("cut_off", method="GET", path=SHOPPING)
        with pytest.raises(CookedUnavailable) as broken:
            await client.get_shopping_list()

    assert f"change {setting} to the address Cooked answers at directly" in redirected.value.next_step
    assert f"check that {setting} is right" in broken.value.next_step
    assert "COOKED_BASE_URL" not in redirected.value.next_step + broken.value.next_step
