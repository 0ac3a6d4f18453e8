"""The whole recipe journey against the real cooked-mcp process over stdio, as an agent would make it.

Every ID the agent uses comes from an earlier result: the text it reads, cross-checked against
the structured output.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from recipe_support import failed, ok
from servers import server_env, stdio_client

from cooked_fake import FakeCooked

pytestmark = pytest.mark.anyio


def id_after(text: str, pattern: str) -> str:
    match = re.search(pattern, text)
    assert match, (pattern, text)
    return match.group(1)


@pytest.mark.req(
    "recipes.READ.2",
    "recipes.READ.5",
    "recipes.SAVE.3",
    "recipes.SAVE.5",
    "recipes.SAVE.6",
    "recipes.SAVE.7",
    "recipes.SAVE.8",
    "recipes.SAVE.9",
    "recipes.DELETE.1",
    "recipes.DELETE.2",
    "recipes.VERIFICATION.1",
    "recipes.VERIFICATION.2",
    "tools.RESPONSES.2",
    "tools.RESPONSES.5",
)
async def test_find_read_import_review_save_update_and_delete_over_stdio(
    fake: FakeCooked, tmp_path: Path
) -> None:
    url = "https://example.org/blog/draft-green-shakshuka"
    fake.fail_with("slow", "POST", "/api/new", seconds=0.5)
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    env = server_env(tmp_path, fake.base_url)
    async with stdio_client(env) as client:
        text, found = ok(await client.call_tool("read", {"target": "recipes", "query": "shakshuka"}), "read")
        recipe_id = id_after(text, r"\n(r-\S+)  Shakshuka\n")
        assert {"id": recipe_id, "title": "Shakshuka"} in found["recipes"]

        text, read = ok(await client.call_tool("read", {"target": "recipe", "recipe_id": recipe_id}), "read")
        assert read["recipe"]["title"] == "Shakshuka" and "4 eggs" in read["recipe"]["markdown"]

        result = await client.call_tool(
            "save_recipe", {"source": "url", "url": url}, progress_callback=on_progress
        )
        text, imported = ok(result, "save_recipe")
        draft_id = id_after(text, r"draft_id=(\S+)")
        assert imported["saved"] is False and imported["draft"]["draft_id"] == draft_id
        assert progress, "no progress notification arrived over stdio"
        reviewed = imported["draft"]["markdown"] + "\n\nReviewed by the agent."

        arguments = {"source": "draft", "draft_id": draft_id, "markdown": reviewed, "portions": 3}
        text, saved = ok(await client.call_tool("save_recipe", arguments), "save_recipe")
        new_id = id_after(text, r"recipe_id=(\S+)\.$")
        assert saved == {"source": "draft", "saved": True, "recipe_id": new_id}

        arguments = {
            "source": "existing",
            "recipe_id": new_id,
            "markdown": reviewed + " Twice.",
            "portions": None,
        }
        text, updated = ok(await client.call_tool("save_recipe", arguments), "save_recipe")
        assert updated["recipe_id"] == new_id and f"Updated recipe {new_id}" in text

        text, deleted = ok(await client.call_tool("delete_recipe", {"recipe_id": new_id}), "delete_recipe")
        assert deleted == {"recipe_id": new_id, "deleted": True} and new_id in text

        gone = failed(await client.call_tool("read", {"target": "recipe", "recipe_id": new_id}))
        assert "404" in gone and "read target=recipes" in gone

    assert fake.api_calls() == [
        ("GET", "/api/user/recipes/search", None),
        ("GET", f"/api/saved/{recipe_id}", None),
        ("POST", "/api/new", {"url": url}),
        ("GET", f"/api/extract/{draft_id}", None),
        ("POST", f"/api/extract/{draft_id}/save", {"description": reviewed, "portions": 3}),
        ("PUT", f"/api/saved/{new_id}", {"description": reviewed + " Twice.", "portions": None}),
        ("DELETE", f"/api/saved/{new_id}", None),
        ("GET", f"/api/saved/{new_id}", None),
    ]
    assert fake.login_count == 1
    assert new_id not in fake.state.recipes and draft_id not in fake.state.drafts
