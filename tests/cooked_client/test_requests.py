"""What the client puts on the wire: methods, paths, bodies, headers, path and query encoding."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
import respx
from client_support import CANONICAL_USERNAME, LOGIN_NAME, LOGIN_PATH, PASSWORD, make_client, user_path

from cooked_mcp.cooked import CookedClient
from cooked_mcp.cooked.endpoints import API_PREFIX, ENDPOINTS
from cooked_mcp.cooked.sender import MAX_PARSED_URLS
from cooked_mcp.exceptions import CookedRequestError

USER = user_path()


@dataclass(frozen=True)
class Case:
    """One client method: the request it must send and what it makes of the contract's answer."""

    name: str
    call: Callable[[CookedClient], Awaitable[Any]]
    method: str
    path: str
    body: Any  # the exact JSON sent, or None for no body
    answer: Any
    result: Any
    query: dict[str, list[str]] | None = None


CASES = [
    Case(
        "list_recipes",
        lambda c: c.list_recipes(2, 25),
        "GET",
        f"{USER}/recipes",
        None,
        {
            "items": [
                {"id": "r-1", "title": "Shakshuka", "thumbnail-url": "https://cdn/x.jpg", "type": "saved"}
            ]
        },
        "r-1",
        {"page": ["2"], "page-count": ["25"]},
    ),
    Case(
        "search_recipes",
        lambda c: c.search_recipes("soup", 3),
        "GET",
        "/api/user/recipes/search",
        None,
        {"items": [{"id": "r-2"}]},
        "r-2",
        {"query": ["soup"], "page": ["3"]},
    ),
    Case(
        "get_recipe",
        lambda c: c.get_recipe("r-7f3a"),
        "GET",
        "/api/saved/r-7f3a",
        None,
        {"id": "r-7f3a", "description": "## Ingredients", "portions": 2, "can-edit": True, "owner": "a"},
        "r-7f3a",
    ),
    Case(
        "preview_recipe",
        lambda c: c.preview_recipe("Shakshuka", "4 eggs"),
        "POST",
        "/api/recipes/preview",
        {"title": "Shakshuka", "text": "4 eggs"},
        {"title": "Shakshuka", "description": "## Ingredients", "portions": None},
        "## Ingredients",
    ),
    Case(
        "save_recipe",
        lambda c: c.save_recipe("Shakshuka", "## Ingredients", None),
        "POST",
        "/api/recipes",
        {"title": "Shakshuka", "description": "## Ingredients", "portions": None},
        {"recipe-id": "r-91c2"},
        "r-91c2",
    ),
    Case(
        "update_recipe",
        lambda c: c.update_recipe("r-7f3a", "## New", 4),
        "PUT",
        "/api/saved/r-7f3a",
        {"description": "## New", "portions": 4},
        {"recipe-id": "r-7f3a"},
        "r-7f3a",
    ),
    Case(
        "delete_recipe",
        lambda c: c.delete_recipe("r-7f3a"),
        "DELETE",
        "/api/saved/r-7f3a",
        None,
        {"recipe-id": "r-7f3a"},
        "r-7f3a",
    ),
    Case(
        "import_url",
        lambda c: c.import_url("https://example.org/shakshuka"),
        "POST",
        "/api/new",
        {"url": "https://example.org/shakshuka"},
        {"extraction-id": "x-55d0"},
        "x-55d0",
    ),
    Case(
        "get_draft",
        lambda c: c.get_draft("x-55d0"),
        "GET",
        "/api/extract/x-55d0",
        None,
        {"id": "x-55d0", "description": "## Draft", "source-url": "https://example.org"},
        "x-55d0",
    ),
    Case(
        "save_draft",
        lambda c: c.save_draft("x-55d0", "## Draft", 2),
        "POST",
        "/api/extract/x-55d0/save",
        {"description": "## Draft", "portions": 2},
        {"recipe-id": "r-a001"},
        "r-a001",
    ),
    Case(
        "get_shopping_list",
        lambda c: c.get_shopping_list(),
        "GET",
        f"{USER}/shopping-list",
        None,
        {
            "aisles": [
                {
                    "id": "produce",
                    "name": "Produce",
                    "product-groups": [
                        {"id": "pg-11", "name": "Tomatoes", "quantity": None, "selected": True}
                    ],
                }
            ]
        },
        "pg-11",
    ),
    Case(
        "add_ingredients",
        lambda c: c.add_ingredients("4 eggs\n1 can tomatoes", "r-7f3a"),
        "POST",
        f"{USER}/shopping-list/ingredients",
        {"text": "4 eggs\n1 can tomatoes", "recipe-id": "r-7f3a"},
        {"added": 2},
        2,
    ),
    Case(
        "add_ingredients without recipe",
        lambda c: c.add_ingredients("salt"),
        "POST",
        f"{USER}/shopping-list/ingredients",
        {"text": "salt"},
        {"added": 1},
        1,
    ),
    Case(
        "update_product_group",
        lambda c: c.update_product_group(
            "pg-11", name="Tomatoes", quantity=None, aisle_id="produce", selected=True
        ),
        "PUT",
        f"{USER}/shopping-list/product-groups/pg-11",
        {"name": "Tomatoes", "quantity": None, "aisle-id": "produce", "selected": True},
        {"id": "pg-11"},
        "pg-11",
    ),
    Case(
        "set_selected",
        lambda c: c.set_selected(["pg-11", "pg-12"]),
        "PUT",
        f"{USER}/shopping-list/selected",
        {"product-group-ids": ["pg-11", "pg-12"]},
        {"product-group-ids": ["pg-11", "pg-12"]},
        ["pg-11", "pg-12"],
    ),
    Case(
        "remove_product_groups",
        lambda c: c.remove_product_groups(("pg-11", "pg-99")),
        "POST",
        f"{USER}/shopping-list/remove",
        {"product-group-ids": ["pg-11", "pg-99"]},
        {"removed": ["pg-11"]},
        ["pg-11"],
    ),
    Case(
        "clear_shopping_list",
        lambda c: c.clear_shopping_list(),
        "DELETE",
        f"{USER}/shopping-list",
        None,
        {},
        None,
    ),
]


def _key_result(value: Any) -> Any:
    """Reduce a method's result to the one fact the case table checks."""
    if isinstance(value, list) and value and hasattr(value[0], "id"):
        return value[0].id
    if hasattr(value, "aisles"):
        return value.aisles[0].product_groups[0].id
    if hasattr(value, "extraction_id"):
        return value.extraction_id or value.recipe_id
    if hasattr(value, "portions") and not hasattr(value, "id"):
        return value.description
    if hasattr(value, "id"):
        return value.id
    return value


@pytest.mark.req(
    "api-client.REQUESTS.1",
    "api-client.REQUESTS.2",
    "api-client.REQUESTS.5",
    "api-client.RESPONSES.1",
    "authentication.LOGIN.6",
)
@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_each_method_sends_the_contract_request(router: respx.MockRouter, case: Case) -> None:
    route = router.route(method=case.method, path=case.path).mock(
        return_value=httpx.Response(200, json=case.answer)
    )
    async with make_client(router) as client:
        result = await case.call(client)

    assert route.call_count == 1
    request = route.calls.last.request
    assert request.headers["accept"] == "application/json"
    if case.body is None:
        assert request.content == b""
        assert "content-type" not in request.headers
    else:
        assert request.headers["content-type"] == "application/json"
        assert json.loads(request.content) == case.body
    if case.query is not None:
        assert parse_qs(request.url.query.decode()) == case.query
    assert _key_result(result) == case.result


@pytest.mark.req("authentication.LOGIN.2", "authentication.CREDENTIALS.10", "api-client.REQUESTS.1")
@pytest.mark.anyio
async def test_login_posts_json_credentials_to_the_public_login_endpoint(router: respx.MockRouter) -> None:
    router.get(user_path("/shopping-list")).mock(return_value=httpx.Response(200, json={"aisles": []}))
    async with make_client(router) as client:
        await client.get_shopping_list()

    login = router.routes["login"].calls.last.request
    assert login.method == "POST"
    assert login.url.path == LOGIN_PATH
    assert login.headers["content-type"] == "application/json"
    assert login.headers["accept"] == "application/json"
    assert json.loads(login.content) == {"username": LOGIN_NAME, "password": PASSWORD}


@pytest.mark.req("authentication.LOGIN.1")
@pytest.mark.anyio
async def test_login_happens_lazily_when_the_first_request_needs_a_session(router: respx.MockRouter) -> None:
    recipe = router.get("/api/saved/r-1").mock(
        return_value=httpx.Response(200, json={"id": "r-1", "description": "x"})
    )
    async with make_client(router) as client:
        assert router.routes["login"].call_count == 0  # constructing the client sends nothing
        await client.get_recipe("r-1")
        await client.get_recipe("r-1")

    assert router.routes["login"].call_count == 1
    assert recipe.call_count == 2
    first_two = [call.request.url.path for call in router.calls][:2]
    assert first_two == [LOGIN_PATH, "/api/saved/r-1"]


HOSTILE_IDS = ["../x", "a/b", "?q=1", "%2e%2e", "#frag", "..%2f..", "é ü", "r-1;x", "\\..\\"]


@pytest.mark.req("api-client.REQUESTS.3")
@pytest.mark.anyio
@pytest.mark.parametrize("recipe_id", HOSTILE_IDS)
async def test_path_parameters_stay_one_encoded_segment(router: respx.MockRouter, recipe_id: str) -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"id": recipe_id, "description": "x"})

    router.route(method="GET", path__startswith="/api/saved/").mock(side_effect=answer)
    async with make_client(router) as client:
        recipe = await client.get_recipe(recipe_id)

    assert recipe.id == recipe_id
    raw = seen[0].url.raw_path.decode("ascii")
    assert raw == "/api/saved/" + quote(recipe_id, safe="")
    assert "?" not in raw and "#" not in raw
    assert raw.count("/") == 3  # /api/saved/<one segment>
    assert seen[0].url.query == b""


@pytest.mark.req("api-client.REQUESTS.3")
@pytest.mark.anyio
@pytest.mark.parametrize("recipe_id", ["", ".", ".."])
async def test_ids_that_would_collapse_the_path_are_refused_before_sending(
    router: respx.MockRouter, recipe_id: str
) -> None:
    async with make_client(router) as client:
        with pytest.raises(CookedRequestError) as caught:
            await client.delete_recipe(recipe_id)

    assert "not a valid Cooked ID" in str(caught.value)
    assert caught.value.next_step
    assert [call.request.url.path for call in router.calls if call.request.url.path != LOGIN_PATH] == []


@pytest.mark.req("api-client.REQUESTS.3", "api-client.REQUESTS.5")
@pytest.mark.anyio
async def test_the_canonical_username_is_encoded_as_one_segment_too(router: respx.MockRouter) -> None:
    router.routes["login"].mock(
        return_value=httpx.Response(
            200, json={"username": "al/ice?x#y"}, headers={"Set-Cookie": "s=1; Path=/"}
        )
    )
    route = router.get("/api/user/al%2Fice%3Fx%23y/shopping-list").mock(
        return_value=httpx.Response(200, json={"aisles": []})
    )
    async with make_client(router) as client:
        await client.get_shopping_list()

    assert route.calls.last.request.url.raw_path == b"/api/user/al%2Fice%3Fx%23y/shopping-list"


@pytest.mark.req("api-client.REQUESTS.4")
@pytest.mark.anyio
@pytest.mark.parametrize("query", ["a&b=c", "soup #1 / 2?", "100% é", "page=9", "+plus +"])
async def test_query_values_are_url_encoded(router: respx.MockRouter, query: str) -> None:
    route = router.get("/api/user/recipes/search").mock(return_value=httpx.Response(200, json={"items": []}))
    async with make_client(router) as client:
        await client.search_recipes(query, 1)

    url = str(route.calls.last.request.url)
    assert parse_qs(urlsplit(url).query, keep_blank_values=True) == {"query": [query], "page": ["1"]}
    assert urlsplit(url).path == "/api/user/recipes/search"


@pytest.mark.req("api-client.REQUESTS.5", "authentication.LOGIN.5", "authentication.LOGIN.6")
@pytest.mark.anyio
async def test_user_scoped_paths_use_the_username_cooked_returned(router: respx.MockRouter) -> None:
    route = router.get(user_path("/recipes")).mock(return_value=httpx.Response(200, json={"items": []}))
    async with make_client(router) as client:
        await client.list_recipes(1, 10)

    assert route.call_count == 1
    paths = [call.request.url.path for call in router.calls]
    assert all(LOGIN_NAME not in path for path in paths)
    assert CANONICAL_USERNAME != LOGIN_NAME


@pytest.mark.req("api-client.REQUESTS.3")
def test_no_module_but_the_endpoint_table_spells_a_cooked_path() -> None:
    """Paths are only ever built by the table, so no ad-hoc string join can produce one."""
    package = Path(__import__("cooked_mcp").__file__).parent
    offenders = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path.name != "endpoints.py" and API_PREFIX in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
    assert all(endpoint.path_template.startswith(API_PREFIX) for endpoint in ENDPOINTS)


@pytest.mark.req("server.SINGLE_USER.2", "server.SINGLE_USER.3")
def test_no_client_method_accepts_a_username_or_credentials() -> None:
    """The account is fixed when the client is built; no call can pick or change the Cooked user."""
    import inspect

    for name, method in inspect.getmembers(CookedClient, inspect.isfunction):
        if name.startswith("_"):
            continue
        parameters = set(inspect.signature(method).parameters)
        assert not parameters & {"username", "user", "password", "login", "credentials", "cookie"}, name


@pytest.mark.req("api-client.REQUESTS.1", "api-client.REQUESTS.4")
@pytest.mark.anyio
async def test_an_address_used_again_is_not_parsed_again_and_at_most_128_are_kept(
    router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpx checks a URL character by character (~35 µs a request): each address is parsed once;
    past ``MAX_PARSED_URLS`` the least recently used is forgotten, and every request still goes where it
    should."""
    parsed: list[str] = []
    parse = httpx.URL

    def counted(url: Any = "", **kwargs: Any) -> httpx.URL:
        if isinstance(url, str) and url.startswith("https://cooked.test/api/user/"):
            parsed.append(url)
        return parse(url, **kwargs)

    monkeypatch.setattr(httpx, "URL", counted)
    route = router.get(user_path("/recipes")).mock(return_value=httpx.Response(200, json={"items": []}))
    async with make_client(router) as client:
        for _ in range(3):
            await client.list_recipes(1, 10)
        assert len(parsed) == 1
        for page in range(1, MAX_PARSED_URLS + 2):  # page 1 is kept already: 128 more addresses
            await client.list_recipes(page, 10)
        assert len(parsed) == MAX_PARSED_URLS + 1
        await client.list_recipes(1, 10)  # forgotten once the 129th came
        assert len(parsed) == MAX_PARSED_URLS + 2
        await client.list_recipes(MAX_PARSED_URLS + 1, 10)  # used lately: kept (not all were forgotten)
    assert len(parsed) == MAX_PARSED_URLS + 2
    pages = [parse_qs(call.request.url.query.decode())["page"] for call in route.calls]
    later = [[str(page)] for page in range(2, MAX_PARSED_URLS + 2)]
    assert pages == [["1"]] * 4 + later + [["1"], [str(MAX_PARSED_URLS + 1)]]
