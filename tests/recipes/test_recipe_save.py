"""preview_recipe_text, save_recipe (all five sources) and delete_recipe against the fake Cooked."""

from __future__ import annotations

from typing import Any

import pytest
from recipe_support import as_fenced, failed, fenced_block, ok
from sessions import call, cooked_session

from cooked_fake import DRAFT_ID, FakeCooked

pytestmark = pytest.mark.anyio

RAW_TEXT = "4 eggs\n1 can tomatoes\nSimmer the tomatoes. Crack in the eggs and cover. Serves 2"
SHAKSHUKA_MD = "## Ingredients\n- 4 eggs\n- 1 can tomatoes\n\n## Steps\n1. Simmer\n2. Crack in the eggs"
SAVE_PATH = "/api/recipes"
PREVIEW_PATH = "/api/recipes/preview"


def saved_count(fake: FakeCooked) -> int:
    return fake.state.saved_count


# --- preview ------------------------------------------------------------------------------------


@pytest.mark.req(
    "recipes.PREVIEW_TEXT.1",
    "recipes.PREVIEW_TEXT.2",
    "recipes.PREVIEW_TEXT.3",
    "recipes.PREVIEW_TEXT.4",
    "recipes.SAVE.13",
    "tools.RESPONSES.1",
    "tools.RESPONSES.4",
    "tools.RESPONSES.5",
)
async def test_preview_returns_cookeds_title_markdown_and_portions_and_saves_nothing(
    fake: FakeCooked,
) -> None:
    before = dict(fake.state.recipes)

    text, out = ok(
        await call(fake, "preview_recipe_text", {"title": "Shakshuka", "text": RAW_TEXT}),
        "preview_recipe_text",
    )

    assert fake.api_calls() == [("POST", PREVIEW_PATH, {"title": "Shakshuka", "text": RAW_TEXT})]
    assert fake.state.recipes == before and saved_count(fake) == 0
    assert out["saved"] is False
    assert (out["title"], out["portions"]) == ("Shakshuka", 2)
    assert out["markdown"].startswith("## Ingredients\n- 4 eggs\n- 1 can tomatoes\n\n## Steps\n1. Simmer")
    assert text.startswith("Preview only: NOTHING was saved.")
    assert fenced_block(text, "Title") == "Shakshuka\n"
    assert fenced_block(text, "Recipe markdown") == as_fenced(out["markdown"])
    assert "save_recipe source=prepared" in text and "portions=2" in text and "source=raw_text" in text


@pytest.mark.req("recipes.PREVIEW_TEXT.4")
async def test_preview_without_portions_says_they_are_unknown(fake: FakeCooked) -> None:
    text, out = ok(
        await call(fake, "preview_recipe_text", {"title": "Toast", "text": "2 slices bread\nToast them."}),
        "preview_recipe_text",
    )

    assert "portions" not in out
    assert "(portions unknown)" in text and "portions=null" in text


@pytest.mark.req("tools.RESPONSES.6")
@pytest.mark.parametrize(
    ("arguments", "missing"),
    [
        pytest.param({"text": RAW_TEXT}, "title", marks=pytest.mark.req("recipes.PREVIEW_TEXT.1-1")),
        pytest.param({"title": "Shakshuka"}, "text", marks=pytest.mark.req("recipes.PREVIEW_TEXT.1-2")),
        pytest.param({"title": "", "text": "x"}, "title", marks=pytest.mark.req("recipes.PREVIEW_TEXT.1-1")),
    ],
)
async def test_preview_needs_title_and_text(
    fake: FakeCooked, arguments: dict[str, Any], missing: str
) -> None:
    text = failed(await call(fake, "preview_recipe_text", arguments))

    assert missing in text and "Nothing was sent to Cooked" in text
    assert fake.requests == []


# --- raw_text -----------------------------------------------------------------------------------


@pytest.mark.req(
    "recipes.SAVE.1",
    "recipes.SAVE.9",
    "recipes.SAVE.11",
    "recipes.SAVE.13",
    "recipes.PREVIEW_TEXT.1",
    "tools.RESPONSES.2",
)
@pytest.mark.parametrize(
    "raw", [RAW_TEXT, "2 slices bread\nToast the bread."], ids=["portions", "no-portions"]
)
async def test_raw_text_is_previewed_then_saved_unchanged_in_one_call_of_two_requests(
    fake: FakeCooked, raw: str
) -> None:
    async with cooked_session(fake) as client:
        preview = (
            await client.call_tool("preview_recipe_text", {"title": "Breakfast", "text": raw})
        ).structured_content
        assert preview is not None
        fake.clear_requests()  # logged in now: what follows is the steady state

        result = await client.call_tool(
            "save_recipe", {"source": "raw_text", "title": "Breakfast", "text": raw}
        )

    text, out = ok(result, "save_recipe")
    expected_body = {
        "title": preview["title"],
        "description": preview["markdown"],
        "portions": preview.get("portions"),
    }
    assert [(r.method, r.path, r.json) for r in fake.requests] == [
        ("POST", PREVIEW_PATH, {"title": "Breakfast", "text": raw}),
        ("POST", SAVE_PATH, expected_body),
    ]
    new_id = out["recipe_id"]
    assert out == {"source": "raw_text", "saved": True, "recipe_id": new_id}
    assert fake.state.recipes[new_id].description == preview["markdown"]
    assert f"recipe {new_id}" in text and f"read target=recipe recipe_id={new_id}" in text


@pytest.mark.req("recipes.SAVE.11")
async def test_raw_text_that_cooked_cannot_preview_saves_nothing(fake: FakeCooked) -> None:
    fake.fail("POST", PREVIEW_PATH, status=400)

    text = failed(await call(fake, "save_recipe", {"source": "raw_text", "title": "X", "text": "y"}))

    assert "400 INVALID_REQUEST" in text
    assert fake.api_calls() == [("POST", PREVIEW_PATH, {"title": "X", "text": "y"})]
    assert saved_count(fake) == 0


# --- prepared -----------------------------------------------------------------------------------


@pytest.mark.req("recipes.SAVE.2", "recipes.SAVE.9", "recipes.SAVE.13", "recipes.SAVE.10-1")
@pytest.mark.parametrize("portions", [2, None])
async def test_prepared_markdown_is_saved_as_cookeds_description(
    fake: FakeCooked, portions: int | None
) -> None:
    arguments = {"source": "prepared", "title": "Shakshuka", "markdown": SHAKSHUKA_MD, "portions": portions}

    text, out = ok(await call(fake, "save_recipe", arguments), "save_recipe")

    body = {"title": "Shakshuka", "description": SHAKSHUKA_MD, "portions": portions}
    assert fake.api_calls() == [("POST", SAVE_PATH, body)]
    stored = fake.state.recipes[out["recipe_id"]]
    assert (stored.title, stored.description, stored.portions) == ("Shakshuka", SHAKSHUKA_MD, portions)
    assert out == {"source": "prepared", "saved": True, "recipe_id": stored.id}
    assert text.startswith(f"Saved recipe {stored.id} (")


# --- url ----------------------------------------------------------------------------------------


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.4", "recipes.SAVE.9", "recipes.SAVE.10-1")
async def test_url_import_that_cooked_saves_returns_the_new_recipe_id(fake: FakeCooked) -> None:
    url = "https://example.org/recipes/green-curry"

    text, out = ok(await call(fake, "save_recipe", {"source": "url", "url": url}), "save_recipe")

    assert fake.api_calls() == [("POST", "/api/new", {"url": url})]
    new_id = out["recipe_id"]
    assert out == {"source": "url", "saved": True, "recipe_id": new_id}
    assert fake.state.recipes[new_id].title == "Green Curry"
    assert f"saved it as recipe {new_id}" in text


@pytest.mark.req(
    "recipes.SAVE.3",
    "recipes.SAVE.5",
    "recipes.SAVE.6",
    "recipes.SAVE.12",
    "recipes.SAVE.14",
    "recipes.SAVE.15",
    "recipes.SAVE.16",
    "recipes.SAFETY.1",
    "tools.RESPONSES.2",
    "tools.RESPONSES.3",
)
async def test_url_import_that_makes_a_draft_returns_it_for_review_and_saves_nothing(
    fake: FakeCooked,
) -> None:
    url = "https://example.org/blog/spring-frittata"
    fake.set_import_result(url, "draft")

    text, out = ok(await call(fake, "save_recipe", {"source": "url", "url": url}), "save_recipe")

    draft_id = out["draft"]["draft_id"]
    stored = fake.state.drafts[draft_id]
    assert fake.api_calls() == [("POST", "/api/new", {"url": url}), ("GET", f"/api/extract/{draft_id}", None)]
    assert saved_count(fake) == 0
    assert out == {
        "source": "url",
        "saved": False,
        "draft": {
            "draft_id": draft_id,
            "title": "Spring Frittata",
            "markdown": stored.description,
            "portions": 4,
        },
    }
    assert "recipe_id" not in out
    assert f"import DRAFT {draft_id}" in text and "It is NOT saved." in text
    assert f"save_recipe source=draft draft_id={draft_id} markdown=<reviewed markdown> portions=4" in text
    assert fenced_block(text, "Title") == "Spring Frittata\n"
    assert fenced_block(text, "Recipe markdown") == as_fenced(stored.description)


@pytest.mark.req("recipes.SAVE.15", "recipes.SAVE.12")
async def test_a_draft_without_title_or_portions_is_returned_without_them(fake: FakeCooked) -> None:
    url = "https://example.org/draft/untitled"
    fake.fail("GET", path_regex=r"^/api/extract/", status=200, body={"id": "x-0003", "description": "Rice."})

    text, out = ok(await call(fake, "save_recipe", {"source": "url", "url": url}), "save_recipe")

    assert out["draft"] == {"draft_id": "x-0003", "markdown": "Rice."}
    assert "(portions unknown)" in text and "portions=<portions or null>" in text
    assert fenced_block(text, "Title") == "(no title)\n"


@pytest.mark.req("recipes.SAVE.16", "recipes.SAVE.6", "recipes.SAFETY.1")
async def test_a_draft_stays_unsaved_through_other_calls_until_saved_by_its_id(fake: FakeCooked) -> None:
    url = "https://example.org/draft/lemon-cake"
    async with cooked_session(fake) as client:
        imported = await client.call_tool("save_recipe", {"source": "url", "url": url})
        assert imported.structured_content is not None
        draft = imported.structured_content["draft"]
        for tool, arguments in [
            ("read", {"target": "recipes"}),
            ("read", {"target": "recipes", "query": "lemon"}),
            ("preview_recipe_text", {"title": "Lemon Cake", "text": draft["markdown"]}),
            ("save_recipe", {"source": "url", "url": url}),
            ("save_recipe", {"source": "existing", "recipe_id": "r-0001", "markdown": "x", "portions": None}),
        ]:
            await client.call_tool(tool, arguments)
        assert draft["draft_id"] in fake.state.drafts
        assert not any(path.endswith("/save") for _, path, _ in fake.api_calls())

        saved = await client.call_tool(
            "save_recipe",
            {"source": "draft", "draft_id": draft["draft_id"], "markdown": draft["markdown"], "portions": 4},
        )

    _, out = ok(saved, "save_recipe")
    assert draft["draft_id"] not in fake.state.drafts
    assert fake.state.recipes[out["recipe_id"]].title == "Lemon Cake"


# --- draft --------------------------------------------------------------------------------------


@pytest.mark.req(
    "recipes.SAVE.7", "recipes.SAVE.9", "recipes.SAVE.13", "recipes.SAVE.10-1", "recipes.SAFETY.1"
)
@pytest.mark.parametrize("portions", [3, None])
async def test_a_reviewed_draft_is_saved_with_the_reviewed_markdown_and_portions(
    fake: FakeCooked, portions: int | None
) -> None:
    arguments = {"source": "draft", "draft_id": DRAFT_ID, "markdown": SHAKSHUKA_MD, "portions": portions}

    text, out = ok(await call(fake, "save_recipe", arguments), "save_recipe")

    body = {"description": SHAKSHUKA_MD, "portions": portions}
    assert fake.api_calls() == [("POST", f"/api/extract/{DRAFT_ID}/save", body)]
    new_id = out["recipe_id"]
    assert out == {"source": "draft", "saved": True, "recipe_id": new_id}
    stored = fake.state.recipes[new_id]
    assert (stored.description, stored.portions) == (SHAKSHUKA_MD, portions)
    assert f"Saved import draft {DRAFT_ID} as recipe {new_id}" in text


# --- existing -----------------------------------------------------------------------------------


@pytest.mark.req(
    "recipes.SAVE.8", "recipes.SAVE.9", "recipes.SAVE.13", "recipes.SAVE.10-1", "recipes.SAFETY.2"
)
@pytest.mark.parametrize("portions", [6, None])
async def test_an_existing_recipe_is_updated_by_its_id(fake: FakeCooked, portions: int | None) -> None:
    arguments = {"source": "existing", "recipe_id": "r-0005", "markdown": SHAKSHUKA_MD, "portions": portions}

    text, out = ok(await call(fake, "save_recipe", arguments), "save_recipe")

    assert fake.api_calls() == [
        ("PUT", "/api/saved/r-0005", {"description": SHAKSHUKA_MD, "portions": portions})
    ]
    assert out == {"source": "existing", "saved": True, "recipe_id": "r-0005"}
    stored = fake.state.recipes["r-0005"]
    assert (stored.title, stored.description, stored.portions) == ("Tomato Soup", SHAKSHUKA_MD, portions)
    assert text.startswith("Updated recipe r-0005:")


# --- required parameters per source -------------------------------------------------------------

FULL = {
    "raw_text": {"title": "T", "text": "2 eggs"},
    "prepared": {"title": "T", "markdown": "M", "portions": 2},
    "url": {"url": "https://example.org/r"},
    "draft": {"draft_id": DRAFT_ID, "markdown": "M", "portions": None},
    "existing": {"recipe_id": "r-0001", "markdown": "M", "portions": None},
}


# What each missing parameter proves: each case cites only its own rule.
REQUIRED_BY = {
    ("raw_text", "title"): ("recipes.SAVE.1-1",),
    ("raw_text", "text"): ("recipes.SAVE.1-2",),
    ("prepared", "title"): ("recipes.SAVE.2-1",),
    ("prepared", "markdown"): ("recipes.SAVE.2-2",),
    ("prepared", "portions"): ("recipes.SAVE.2-3",),
    ("url", "url"): ("recipes.SAVE.3-1",),
    ("draft", "draft_id"): ("recipes.SAVE.7-1", "recipes.SAFETY.1"),
    ("draft", "markdown"): ("recipes.SAVE.7-2",),
    ("draft", "portions"): ("recipes.SAVE.7-3",),
    ("existing", "recipe_id"): ("recipes.SAVE.8-1", "recipes.SAFETY.2"),
    ("existing", "markdown"): ("recipes.SAVE.8-2",),
    ("existing", "portions"): ("recipes.SAVE.8-3",),
}


@pytest.mark.req("tools.RESPONSES.6")
@pytest.mark.parametrize(
    ("source", "missing"),
    [
        pytest.param(source, name, marks=pytest.mark.req(*REQUIRED_BY[source, name]))
        for source, arguments in FULL.items()
        for name in arguments
    ],
)
async def test_each_source_refuses_to_run_without_its_required_parameters(
    fake: FakeCooked, source: str, missing: str
) -> None:
    arguments = {"source": source, **{k: v for k, v in FULL[source].items() if k != missing}}

    text = failed(await call(fake, "save_recipe", arguments))

    assert f"{missing} is required when source is '{source}'" in text
    assert fake.requests == []


@pytest.mark.req("recipes.SAVE.10", "recipes.SAVE.10-1", "tools.RESPONSES.6")
@pytest.mark.parametrize("source", ["text", "markdown", "import", "RAW_TEXT", ""])
async def test_save_needs_one_of_the_five_explicit_sources(fake: FakeCooked, source: str) -> None:
    text = failed(await call(fake, "save_recipe", {"source": source, "title": "T", "text": "x"}))

    assert "source" in text
    assert fake.requests == []


# --- delete -------------------------------------------------------------------------------------


@pytest.mark.req("recipes.DELETE.1", "recipes.DELETE.2", "recipes.SAFETY.3", "tools.RESPONSES.2")
async def test_delete_removes_the_recipe_and_names_its_id(fake: FakeCooked) -> None:
    text, out = ok(await call(fake, "delete_recipe", {"recipe_id": "r-0007"}), "delete_recipe")

    assert fake.api_calls() == [("DELETE", "/api/saved/r-0007", None)]
    assert out == {"recipe_id": "r-0007", "deleted": True}
    assert "r-0007" not in fake.state.recipes
    assert text == "Deleted recipe r-0007 from Cooked. This cannot be undone."


@pytest.mark.req("recipes.SAFETY.3", "tools.RESPONSES.6")
@pytest.mark.parametrize(
    "arguments", [{}, {"recipe_id": ""}, {"recipe_id": None}, {"recipe_ids": ["r-0001"]}]
)
async def test_delete_needs_one_explicit_recipe_id(fake: FakeCooked, arguments: dict[str, Any]) -> None:
    text = failed(await call(fake, "delete_recipe", arguments))

    assert "recipe_id" in text and "Nothing was sent to Cooked" in text
    assert fake.requests == []
    assert len(fake.state.recipes) == 46
