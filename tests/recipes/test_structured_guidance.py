"""An agent that sees only the structured output is told what the text tells.

pydantic-ai (by default) and smolagents (structured mode) give the model structuredContent
alone. Every result's ``notice`` (warnings: nothing saved, an import still running), its
``next_step`` (the follow-up call) and ``data_from_cooked`` (which fields are web-page data,
not instructions) say it there, in the text's own words (guidance.data_only checks that for
every result the recipe and shopping-list tests see).
"""

from __future__ import annotations

import pytest
from recipe_support import ok
from sessions import call

from cooked_fake import FakeCooked

pytestmark = pytest.mark.anyio


@pytest.mark.req("tools.RESPONSES.5", "recipes.PREVIEW_TEXT.1", "tools.RESPONSES.2")
async def test_a_preview_says_in_its_output_that_nothing_was_saved_and_how_to_keep_it(
    fake: FakeCooked,
) -> None:
    result = await call(fake, "preview_recipe_text", {"title": "Soup", "text": "2 leeks\nBoil them."})
    ok(result, "preview_recipe_text")
    out = result.structured_content or {}
    assert out["saved"] is False and out["notice"] == "Preview only: NOTHING was saved."
    assert out["next_step"].startswith("To keep it: save_recipe source=prepared")
    assert out["data_from_cooked"] == ["title", "markdown"]


@pytest.mark.req("tools.RESPONSES.5", "recipes.SAVE.5", "tools.RESPONSES.2")
async def test_an_import_draft_says_in_its_output_that_it_is_not_saved(fake: FakeCooked) -> None:
    url = "https://example.org/blog/spring-frittata"
    fake.set_import_result(url, "draft")
    result = await call(fake, "save_recipe", {"source": "url", "url": url})
    ok(result, "save_recipe")
    out = result.structured_content or {}
    assert "NOT saved" in out["notice"]
    draft_id = out["draft"]["draft_id"]
    assert f"save_recipe source=draft draft_id={draft_id}" in out["next_step"]
    assert out["data_from_cooked"] == ["draft.title", "draft.markdown"]


@pytest.mark.req("tools.RESPONSES.5", "recipes.READ.5", "tools.RESPONSES.2")
async def test_a_recipe_and_a_list_mark_cookeds_text_as_data_and_give_the_next_call(fake: FakeCooked) -> None:
    listed = await call(fake, "read", {"target": "recipes", "limit": 2})
    ok(listed, "read")
    out = listed.structured_content or {}
    assert out["data_from_cooked"] == ["recipes[].title"]
    assert "read target=recipes page=2 limit=2" in out["next_step"]
    for summary in out["recipes"]:
        one = await call(fake, "read", {"target": "recipe", "recipe_id": summary["id"]})
        ok(one, "read")
        got = one.structured_content or {}
        assert got["data_from_cooked"] == ["recipe.title", "recipe.markdown", "recipe.owner"]
        # A recipe this account cannot edit gets no change or delete call, in text or output.
        if got["recipe"].get("can_edit") is False:
            assert "next_step" not in got
        else:
            assert f"delete_recipe recipe_id={summary['id']}" in got["next_step"]
