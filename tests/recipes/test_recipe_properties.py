"""Property tests: random recipes and random arguments through real MCP sessions and the fake Cooked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from mcp import Client
from recipe_support import (
    OUTPUT_MODELS,
    as_fenced,
    assert_agent_facing,
    fenced_block,
    ok,
    segment,
)
from sessions import text_of
from strategies import ANY_CHARACTER, SPECS, mode_rules, null_is_a_value, properties, valid_arguments

import cooked_mcp.handlers.writes as writes
from cooked_fake import SEED_USERNAME, FakeCooked, Recipe
from cooked_fake.text import preview as fake_preview

pytestmark = pytest.mark.anyio

FAST = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# One shared MCP session makes an example cheap, so the argument properties can afford more.
MANY = settings(FAST, max_examples=80)
RECIPE_TOOLS = ["read", "preview_recipe_text", "save_recipe", "delete_recipe"]


def calls(
    arguments: Callable[[str], st.SearchStrategy[dict[str, Any]]], tools: list[str]
) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """(tool, arguments) drawn up front: a draw inside the async test body could raise Hypothesis's
    StopTest (a BaseException) in the anyio runner task and kill it for every later test."""
    return st.sampled_from(tools).flatmap(lambda tool: st.tuples(st.just(tool), arguments(tool)))


# Chunks, not characters, so backtick runs of every length and markdown-looking lines are common.
CHUNKS = st.one_of(
    st.sampled_from(["`", "```", "````", "\n", "\n```\n", " ", "# ", "- ", "ht", "tp"]),
    st.text(ANY_CHARACTER, max_size=6),
)


def without_urls(text: str) -> bool:
    return "http" not in text.lower()


TITLES = st.one_of(st.none(), st.lists(CHUNKS, max_size=8).map("".join).filter(without_urls))
MARKDOWN = st.lists(CHUNKS, max_size=40).map("".join).filter(without_urls)
RECIPES = st.lists(
    st.tuples(TITLES, MARKDOWN, st.one_of(st.none(), st.integers(1, 1000))), min_size=1, max_size=6
)


def store(fake: FakeCooked, rows: list[tuple[str | None, str, int | None]]) -> list[str]:
    """Random recipes replace the seed; each carries picture and source URLs that must never surface."""
    fake.reset()
    with fake.state.lock:
        fake.state.recipes = {
            f"p-{n}": Recipe(
                f"p-{n}",
                title,
                markdown,
                portions,
                SEED_USERNAME,
                source_url=f"https://example.org/source/{n}",
                thumbnail_url=f"https://cdn.example/t/{n}.jpg",
                image_url=f"http://cdn.example/i/{n}.jpg",
            )
            for n, (title, markdown, portions) in enumerate(rows, 1)
        }
        return list(fake.state.recipes)


@pytest.mark.req(
    "recipes.READ.4",
    "recipes.READ.9",
    "tools.RESPONSES.3",
    "tools.RESPONSES.4",
    "tools.RESPONSES.5",
    "recipes.READ.3",
    "recipes.READ.7",
)
@FAST
@given(rows=RECIPES, query=st.text(st.sampled_from("abcdet `"), min_size=1, max_size=2))
async def test_no_image_thumbnail_or_source_url_ever_reaches_the_agent(
    fake: FakeCooked, client: Client, rows: list[tuple[str | None, str, int | None]], query: str
) -> None:
    ids = store(fake, rows)
    listed = await client.call_tool("read", {"target": "recipes", "limit": 30})
    searched = await client.call_tool("read", {"target": "recipes", "query": query, "limit": 30})
    opened = [await client.call_tool("read", {"target": "recipe", "recipe_id": rid}) for rid in ids]

    _, out = ok(listed, "read")
    assert [r["id"] for r in out["recipes"]] == ids[::-1]
    ok(searched, "read")
    for (title, markdown, portions), result in zip(rows, opened, strict=True):
        _, out = ok(result, "read")
        assert out["recipe"]["markdown"] == markdown and out["recipe"].get("portions") == portions
        assert out["recipe"].get("title") == title


@pytest.mark.req("recipes.READ.7", "tools.RESPONSES.1")
@FAST
@given(title=TITLES, markdown=MARKDOWN)
async def test_recipe_content_stays_inside_a_fence_it_cannot_close(
    fake: FakeCooked, client: Client, title: str | None, markdown: str
) -> None:
    (rid,) = store(fake, [(title, markdown, None)])

    text, _ = ok(await client.call_tool("read", {"target": "recipe", "recipe_id": rid}), "read")

    assert fenced_block(text, "Title") == as_fenced(title or "(no title)")
    assert fenced_block(text, "Recipe markdown") == as_fenced(markdown)


# --- random valid arguments: exactly the right Cooked calls ------------------------------------


@pytest.fixture
def imports_forgotten_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis may draw one URL twice for the shared session; the server would report the
    earlier import (handlers/writes.py) instead of importing it again."""
    monkeypatch.setattr(writes, "KEEP_SECONDS", -1.0)


def expected_requests(tool: str, args: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """What cooked-api.md says each call sends, worked out independently of the handlers."""
    ident = args.get("recipe_id", args.get("draft_id", ""))
    if ident in (".", ".."):
        return []  # cannot be one path segment: refused before any request
    source = args.get("source")
    if tool == "preview_recipe_text":
        return [("POST", "/api/recipes/preview", {"title": args["title"], "text": args["text"]})]
    if tool == "delete_recipe":
        return [("DELETE", f"/api/saved/{segment(ident)}", None)]
    if source == "prepared":
        body = {"title": args["title"], "description": args["markdown"], "portions": args["portions"]}
        return [("POST", "/api/recipes", body)]
    if source == "url":
        return [("POST", "/api/new", {"url": args["url"]})]  # the fake saves these URLs at once
    if source == "draft":
        body = {"description": args["markdown"], "portions": args["portions"]}
        return [("POST", f"/api/extract/{segment(ident)}/save", body)]
    if source == "existing":
        body = {"description": args["markdown"], "portions": args["portions"]}
        return [("PUT", f"/api/saved/{segment(ident)}", body)]
    preview = ("POST", "/api/recipes/preview", {"title": args["title"], "text": args["text"]})
    if not args["text"].strip():
        return [preview]  # Cooked refuses blank text, so nothing is saved
    title, description, portions = fake_preview(args["title"], args["text"])
    return [
        preview,
        ("POST", "/api/recipes", {"title": title, "description": description, "portions": portions}),
    ]


@pytest.mark.req(
    "recipes.PREVIEW_TEXT.1",
    "recipes.SAVE.1",
    "recipes.SAVE.2",
    "recipes.SAVE.3",
    "recipes.SAVE.7",
    "recipes.SAVE.8",
    "recipes.SAVE.10-1",
    "recipes.SAVE.11",
    "recipes.SAVE.13",
    "recipes.SAVE.16",
    "recipes.DELETE.1",
    "tools.RESPONSES.5",
    "tools.RESPONSES.6",
)
@MANY
@example(case=("preview_recipe_text", {"title": "0", "text": "HTTP"}))  # the agent's text says http
@example(case=("preview_recipe_text", {"title": "0", "text": "recipe-id"}))  # ... or a Cooked key name
@given(case=calls(valid_arguments, ["preview_recipe_text", "save_recipe", "delete_recipe"]))
async def test_random_valid_arguments_make_exactly_the_contracted_cooked_calls(
    fake: FakeCooked, client: Client, imports_forgotten_at_once: None, case: tuple[str, dict[str, Any]]
) -> None:
    tool, args = case
    fake.clear_requests()

    result = await client.call_tool(tool, args)

    requests = fake.api_calls(renewals=False)
    assert requests == expected_requests(tool, args)
    assert not any(path.endswith("/save") for _, path, _ in requests) or args.get("source") == "draft"
    if result.is_error:
        assert result.structured_content is None and text_of(result)
    else:
        OUTPUT_MODELS[tool].model_validate(result.structured_content)
        # A preview echoes the agent's own text, which may say "http" or "recipe-id" (hypothesis
        # found both); only what it says is let through. A URL argument is not echoed: its URL
        # must not come back.
        echoed = " ".join(str(value) for name, value in args.items() if name != "url")
        assert_agent_facing(result, urls="http" in echoed.lower(), echoed=echoed)


# --- random invalid arguments: nothing reaches Cooked ------------------------------------------


def _drop_required(args: dict[str, Any], tool: str, draw: st.DrawFn) -> dict[str, Any] | None:
    mode = SPECS[tool].modes
    requires = mode_rules(tool)[args[mode.param] if mode else ""][0]
    if not requires:
        return None
    name = draw(st.sampled_from(requires))
    return {k: v for k, v in args.items() if k != name}


def _unknown_parameter(args: dict[str, Any], tool: str, draw: st.DrawFn) -> dict[str, Any] | None:
    name = draw(st.sampled_from(["bogus", "thumbnail_url", "username", "description", "id"]))
    return {**args, name: "x"}


def _unused_parameter(args: dict[str, Any], tool: str, draw: st.DrawFn) -> dict[str, Any] | None:
    mode = SPECS[tool].modes
    if mode is None:
        return None
    requires, accepts = mode_rules(tool)[args[mode.param]]
    unused = sorted(set(properties(tool)) - {mode.param, *requires, *accepts})
    if not unused:
        return None
    name = draw(st.sampled_from(unused))
    # Not null and not the declared default (page=1): a client that fills those in is accepted.
    return {**args, name: "r-0001" if properties(tool)[name].get("type") == "string" else 2}


def _wrong_type(args: dict[str, Any], tool: str, draw: st.DrawFn) -> dict[str, Any] | None:
    name = draw(st.sampled_from(sorted(args)))
    return {**args, name: draw(st.sampled_from([[1], {"a": 1}, 1.5, True if name != "selected" else "x"]))}


def _null(args: dict[str, Any], tool: str, draw: st.DrawFn) -> dict[str, Any] | None:
    """Null for a required parameter that does not allow it (for an optional one it means left out)."""
    mode = SPECS[tool].modes
    value = args[mode.param] if mode else ""
    requires = mode_rules(tool)[value][0]
    candidates = [n for n in requires if n in args and not null_is_a_value(tool, value, n)]
    if not candidates:
        return None
    return {**args, draw(st.sampled_from(candidates)): None}


def _out_of_bounds(args: dict[str, Any], tool: str, draw: st.DrawFn) -> dict[str, Any] | None:
    bounded = [
        n for n in sorted(args) if "maximum" in properties(tool)[n] or "minLength" in properties(tool)[n]
    ]
    if not bounded:
        return None
    name = draw(st.sampled_from(bounded))
    schema = properties(tool)[name]
    if "maximum" in schema:
        return {**args, name: draw(st.sampled_from([schema["minimum"] - 1, schema["maximum"] + 1]))}
    return {**args, name: ""}


MUTATIONS = [_drop_required, _unknown_parameter, _unused_parameter, _wrong_type, _null, _out_of_bounds]


@st.composite
def invalid_arguments(draw: st.DrawFn, tool: str) -> dict[str, Any]:
    args = draw(valid_arguments(tool))
    broken = draw(st.sampled_from(MUTATIONS))(args, tool, draw)
    assume(broken is not None)
    assert broken is not None
    return broken


@pytest.mark.req(
    "recipes.PREVIEW_TEXT.1-1",
    "recipes.PREVIEW_TEXT.1-2",
    "recipes.SAVE.10",
    "recipes.SAFETY.1",
    "recipes.SAFETY.2",
    "recipes.SAFETY.3",
    "tools.RESPONSES.6",
)
@MANY
@given(case=calls(invalid_arguments, RECIPE_TOOLS))
async def test_random_invalid_arguments_send_nothing_to_cooked(
    fake: FakeCooked, client: Client, case: tuple[str, dict[str, Any]]
) -> None:
    tool, args = case
    fake.clear_requests()

    result = await client.call_tool(tool, args)

    assert result.is_error, (args, text_of(result))
    assert text_of(result).endswith("Nothing was sent to Cooked.")
    assert fake.requests == []
