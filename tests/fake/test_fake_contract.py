"""The fake Cooked server honours the Cooked contract (docs/cooked-api.md) over real HTTP.

Every other API-client test trusts this fake, so its own contract is checked here first.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from cooked_fake import (
    DRAFT_ID,
    EMPTY_AISLE_ID,
    FAULT_KINDS,
    FOREIGN_RECIPE_ID,
    INJECTION_LINE,
    INJECTION_RECIPE_ID,
    NULL_PORTIONS_RECIPE_ID,
    SEED_LOGIN,
    SEED_PASSWORD,
    SEED_USERNAME,
    SELECTED_GROUP_IDS,
    UNTITLED_DRAFT_ID,
    UNTITLED_RECIPE_ID,
    FakeCooked,
    Recipe,
    control,
)
from cooked_fake import faults as fault_module
from cooked_fake.exchange import Incoming

LIST = f"/api/user/{SEED_USERNAME}/shopping-list"
LOGIN = "/api/public/login"

# These check the fake itself against cooked-api.md; they prove no product requirement.
pytestmark = pytest.mark.tooling


@pytest.fixture(scope="module")
def shared_client(running_fake: FakeCooked) -> Iterator[httpx.Client]:
    """One client for the module: building an httpx.Client costs ~0.1 s (TLS context), a test far less."""
    with httpx.Client(base_url=running_fake.base_url, timeout=5) as client:
        yield client


@pytest.fixture
def anon(fake: FakeCooked, shared_client: httpx.Client) -> httpx.Client:
    shared_client.cookies.clear()
    return shared_client


@pytest.fixture
def client(anon: httpx.Client) -> httpx.Client:
    assert anon.post(LOGIN, json={"username": SEED_LOGIN, "password": SEED_PASSWORD}).status_code == 200
    return anon


def error(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["code"]


def groups(client: httpx.Client) -> dict[str, tuple[str, dict[str, Any]]]:
    """Group ID -> (aisle ID, group) from the live shopping list."""
    body = client.get(LIST).json()
    return {g["id"]: (a["id"], g) for a in body["aisles"] for g in a["product-groups"]}


# --- isolation ---------------------------------------------------------------------------------------


def test_fake_listens_on_loopback_only(fake: FakeCooked) -> None:
    assert urlsplit(fake.base_url).hostname == "127.0.0.1"
    assert fake.port > 0


def test_stopping_closes_the_port_and_keepalive_connections() -> None:
    fake = FakeCooked().start()
    with httpx.Client(base_url=fake.base_url, timeout=2) as client:
        assert client.post(LOGIN, json={"username": SEED_LOGIN, "password": SEED_PASSWORD}).status_code == 200
        fake.stop()
        with pytest.raises(httpx.TransportError):
            client.get("/api/saved/r-0001")


# --- login and sessions ------------------------------------------------------------------------------


@pytest.mark.parametrize("login_name", [SEED_LOGIN, SEED_LOGIN.upper(), SEED_USERNAME])
def test_login_returns_canonical_username_and_session_cookie(anon: httpx.Client, login_name: str) -> None:
    response = anon.post(LOGIN, json={"username": login_name, "password": SEED_PASSWORD})
    assert response.status_code == 200
    assert response.json() == {"message": "Authenticated successfully", "username": SEED_USERNAME}
    cookie = response.headers["set-cookie"]
    assert cookie.startswith("ring-session=") and "Path=/" in cookie and "HttpOnly" in cookie
    assert anon.get("/api/saved/r-0001").status_code == 200


@pytest.mark.parametrize(
    "body",
    [{"username": SEED_LOGIN, "password": "hunter2"}, {"username": "mallory", "password": SEED_PASSWORD}],
)
def test_login_with_wrong_credentials_is_invalid_authentication(
    anon: httpx.Client, body: dict[str, str]
) -> None:
    response = anon.post(LOGIN, json=body)
    assert response.status_code == 401
    assert response.json() == {"code": "INVALID_AUTHENTICATION", "message": "Invalid username or password"}
    assert "set-cookie" not in response.headers


def test_login_body_must_be_json_with_both_keys(anon: httpx.Client) -> None:
    assert error(anon.post(LOGIN, json={"username": SEED_LOGIN})) == (400, "INVALID_REQUEST")
    form = anon.post(LOGIN, data={"username": SEED_LOGIN, "password": SEED_PASSWORD})
    assert error(form) == (400, "INVALID_REQUEST")
    assert error(anon.post(LOGIN, json=["not", "an", "object"])) == (400, "INVALID_REQUEST")


AUTHENTICATED: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", f"/api/user/{SEED_USERNAME}/recipes", None),
    ("GET", "/api/user/recipes/search?query=soup", None),
    ("GET", "/api/saved/r-0001", None),
    ("PUT", "/api/saved/r-0001", {"description": "x", "portions": 1}),
    ("DELETE", "/api/saved/r-0001", None),
    ("POST", "/api/recipes/preview", {"title": "T", "text": "1 egg"}),
    ("POST", "/api/recipes", {"title": "T", "description": "d", "portions": None}),
    ("POST", "/api/new", {"url": "https://example.org/x"}),
    ("GET", f"/api/extract/{DRAFT_ID}", None),
    ("POST", f"/api/extract/{DRAFT_ID}/save", {"description": "d", "portions": 2}),
    ("GET", LIST, None),
    ("DELETE", LIST, None),
    ("POST", f"{LIST}/ingredients", {"text": "1 egg"}),
    (
        "PUT",
        f"{LIST}/product-groups/pg-01",
        {"name": "n", "quantity": None, "aisle-id": "other", "selected": True},
    ),
    ("PUT", f"{LIST}/selected", {"product-group-ids": []}),
    ("POST", f"{LIST}/remove", {"product-group-ids": []}),
]


@pytest.mark.parametrize(("method", "path", "body"), AUTHENTICATED)
def test_every_authenticated_endpoint_needs_a_session(
    fake: FakeCooked, anon: httpx.Client, method: str, path: str, body: Any
) -> None:
    assert error(anon.request(method, path, json=body)) == (401, "UNAUTHORIZED")
    assert fake.state.recipes["r-0001"].portions == 2  # nothing changed
    assert len(fake.state.groups) == 6


@pytest.mark.parametrize(("method", "path", "body"), AUTHENTICATED)
def test_every_endpoint_answers_200_with_a_session(
    client: httpx.Client, method: str, path: str, body: Any
) -> None:
    assert client.request(method, path, json=body).status_code == 200


@pytest.mark.parametrize("who", [SEED_LOGIN, "Alice", "bob"])
def test_user_scoped_paths_need_the_canonical_username(client: httpx.Client, who: str) -> None:
    assert error(client.get(f"/api/user/{who}/recipes")) == (403, "FORBIDDEN")
    assert error(client.get(f"/api/user/{who}/shopping-list")) == (403, "FORBIDDEN")


def test_expired_sessions_answer_401_until_a_new_login(fake: FakeCooked, client: httpx.Client) -> None:
    fake.expire_sessions()
    assert error(client.get("/api/saved/r-0001")) == (401, "UNAUTHORIZED")
    assert client.post(LOGIN, json={"username": SEED_LOGIN, "password": SEED_PASSWORD}).status_code == 200
    assert client.get("/api/saved/r-0001").status_code == 200
    assert fake.login_count == 2


def test_reject_sessions_refuses_even_a_fresh_login(fake: FakeCooked, client: httpx.Client) -> None:
    fake.reject_sessions = True
    assert client.post(LOGIN, json={"username": SEED_LOGIN, "password": SEED_PASSWORD}).status_code == 200
    assert error(client.get("/api/saved/r-0001")) == (401, "UNAUTHORIZED")


def test_unknown_endpoint_and_wrong_method(client: httpx.Client) -> None:
    assert error(client.get("/api/nothing-here")) == (404, "NOT_FOUND")
    assert client.patch("/api/saved/r-0001", json={}).status_code == 405


# --- recipes -----------------------------------------------------------------------------------------


def test_recipe_list_pages_newest_first(client: httpx.Client) -> None:
    pages = [
        client.get(f"/api/user/{SEED_USERNAME}/recipes", params={"page": n, "page-count": 20}).json()["items"]
        for n in (1, 2, 3, 4)
    ]
    assert [len(p) for p in pages] == [20, 20, 6, 0]
    ids = [item["id"] for page in pages for item in page]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 46
    assert set(pages[0][0]) >= {"id", "title", "thumbnail-url", "type", "source-url"}
    assert pages[0][0]["type"] == "saved"


@pytest.mark.parametrize("params", [{"page-count": 0}, {"page-count": 51}, {"page-count": "x"}, {"page": 0}])
def test_recipe_list_rejects_bad_paging(client: httpx.Client, params: dict[str, Any]) -> None:
    assert error(client.get(f"/api/user/{SEED_USERNAME}/recipes", params=params)) == (400, "INVALID_REQUEST")


def test_search_is_case_insensitive_with_fixed_page_size(client: httpx.Client) -> None:
    def search(query: str, page: int = 1) -> list[dict[str, Any]]:
        response = client.get("/api/user/recipes/search", params={"query": query, "page": page})
        items: list[dict[str, Any]] = response.json()["items"]
        return items

    soups = search("SOUP")
    assert len(soups) == 8 and all("soup" in item["title"].lower() for item in soups)
    assert len(search("chicken")) == 8
    assert len(search("a")) == 20 and 0 < len(search("a", 2)) < 20
    assert search("no such dish") == []
    assert error(client.get("/api/user/recipes/search")) == (400, "INVALID_REQUEST")


def test_get_recipe_has_full_detail(client: httpx.Client) -> None:
    body = client.get("/api/saved/r-0001").json()
    assert body["title"] == "Shakshuka" and body["portions"] == 2 and body["owner"] == SEED_USERNAME
    assert body["can-edit"] is True and body["description"].startswith("## Ingredients\n- ")
    assert {"thumbnail-url", "image-url", "source-url"} <= set(body)
    assert error(client.get("/api/saved/r-9999")) == (404, "NOT_FOUND")


def test_seed_has_the_awkward_recipes(client: httpx.Client) -> None:
    foreign = client.get(f"/api/saved/{FOREIGN_RECIPE_ID}").json()
    assert foreign["owner"] == "bob" and foreign["can-edit"] is False
    assert "title" not in client.get(f"/api/saved/{UNTITLED_RECIPE_ID}").json()
    assert client.get(f"/api/saved/{NULL_PORTIONS_RECIPE_ID}").json()["portions"] is None
    assert INJECTION_LINE in client.get(f"/api/saved/{INJECTION_RECIPE_ID}").json()["description"]


def test_update_recipe_replaces_content(fake: FakeCooked, client: httpx.Client) -> None:
    response = client.put("/api/saved/r-0001", json={"description": "## Steps\n1. New", "portions": None})
    assert response.json() == {"recipe-id": "r-0001"}
    assert fake.state.recipes["r-0001"].description == "## Steps\n1. New"
    assert fake.state.recipes["r-0001"].portions is None


@pytest.mark.parametrize(
    ("path", "body", "expected"),
    [
        (f"/api/saved/{FOREIGN_RECIPE_ID}", {"description": "x", "portions": 1}, (403, "FORBIDDEN")),
        ("/api/saved/r-9999", {"description": "x", "portions": 1}, (404, "NOT_FOUND")),
        ("/api/saved/r-0001", {"description": "x"}, (400, "INVALID_REQUEST")),
        ("/api/saved/r-0001", {"portions": 1}, (400, "INVALID_REQUEST")),
        ("/api/saved/r-0001", {"description": "x", "portions": 0}, (400, "INVALID_REQUEST")),
        ("/api/saved/r-0001", {"description": "x", "portions": "2"}, (400, "INVALID_REQUEST")),
        ("/api/saved/r-0001", {"description": "x", "portions": True}, (400, "INVALID_REQUEST")),
    ],
)
def test_update_recipe_errors(
    client: httpx.Client, path: str, body: dict[str, Any], expected: tuple[int, str]
) -> None:
    assert error(client.put(path, json=body)) == expected


def test_delete_recipe(fake: FakeCooked, client: httpx.Client) -> None:
    assert client.delete("/api/saved/r-0005").json() == {"recipe-id": "r-0005"}
    assert error(client.get("/api/saved/r-0005")) == (404, "NOT_FOUND")
    assert error(client.delete("/api/saved/r-0005")) == (404, "NOT_FOUND")
    assert error(client.delete(f"/api/saved/{FOREIGN_RECIPE_ID}")) == (403, "FORBIDDEN")
    assert FOREIGN_RECIPE_ID in fake.state.recipes


def test_ids_of_deleted_things_are_never_handed_out_again(fake: FakeCooked, client: httpx.Client) -> None:
    """A stale id must keep answering 404: were it reused, a test of a stale id would pass on a new record."""
    body = {"title": "Toast", "description": "## Steps\n1. Toast it", "portions": 1}
    # The seed's two newest recipes of this account, deleted before anything is saved.
    seeded = sorted(r.id for r in fake.state.recipes.values() if r.owner == SEED_USERNAME)[-2:]
    for recipe_id in seeded:
        assert client.delete(f"/api/saved/{recipe_id}").status_code == 200
    first = client.post("/api/recipes", json=body).json()["recipe-id"]
    assert client.delete(f"/api/saved/{first}").status_code == 200
    second = client.post("/api/recipes", json=body).json()["recipe-id"]
    assert len({*seeded, first, second}) == 4
    for stale in (*seeded, first):
        assert error(client.get(f"/api/saved/{stale}")) == (404, "NOT_FOUND")

    def group_ids() -> set[str]:
        return {g["id"] for aisle in client.get(LIST).json()["aisles"] for g in aisle["product-groups"]}

    before = group_ids()
    assert before and client.delete(LIST).status_code == 200
    client.post(f"{LIST}/ingredients", json={"text": "1 widget"})
    after = group_ids()
    assert after and not after & before

    draft = client.post("/api/new", json={"url": "https://example.org/draft/pie"}).json()["extraction-id"]
    assert (
        client.post(f"/api/extract/{draft}/save", json={"description": "x", "portions": 2}).status_code == 200
    )
    again = client.post("/api/new", json={"url": "https://example.org/draft/pie"}).json()["extraction-id"]
    assert again != draft and error(client.get(f"/api/extract/{draft}")) == (404, "NOT_FOUND")

    fake.reset()  # a reset starts over from the seed, ids included (and logs every session out)
    assert fake.state.add_recipe("Toast", body["description"], 1).id == f"r-{len(fake.state.recipes):04d}"


def test_preview_then_save_creates_the_newest_recipe(fake: FakeCooked, client: httpx.Client) -> None:
    text = "4 eggs, 1 can tomatoes. Simmer the tomatoes. Crack in the eggs and cover. Serves 2"
    preview = client.post("/api/recipes/preview", json={"title": "Shakshuka", "text": text}).json()
    assert preview["title"] == "Shakshuka" and preview["portions"] == 2
    assert "- 4 eggs" in preview["description"] and "1. Simmer the tomatoes" in preview["description"]
    assert fake.state.saved_count == 0  # preview saves nothing
    saved = client.post("/api/recipes", json=preview).json()
    assert saved == {"recipe-id": "r-0047"} and fake.state.saved_count == 1
    newest = client.get(f"/api/user/{SEED_USERNAME}/recipes", params={"page": 1, "page-count": 1}).json()
    assert newest["items"][0]["id"] == "r-0047"
    nameless = client.post("/api/recipes/preview", json={"text": "Just stir it"}).json()
    assert nameless["portions"] is None
    assert client.post("/api/recipes", json=nameless).status_code == 200


@pytest.mark.parametrize("missing", ["title", "description", "portions"])
def test_save_recipe_needs_all_three_keys(client: httpx.Client, missing: str) -> None:
    body = {"title": "T", "description": "d", "portions": 2}
    del body[missing]
    assert error(client.post("/api/recipes", json=body)) == (400, "INVALID_REQUEST")


def test_preview_needs_text(client: httpx.Client) -> None:
    assert error(client.post("/api/recipes/preview", json={"title": "T"})) == (400, "INVALID_REQUEST")
    assert error(client.post("/api/recipes/preview", json={"text": "  "})) == (400, "INVALID_REQUEST")


def test_import_saves_drafts_or_fails_by_url(fake: FakeCooked, client: httpx.Client) -> None:
    saved = client.post("/api/new", json={"url": "https://example.org/green-curry"}).json()
    assert set(saved) == {"recipe-id"}
    assert client.get(f"/api/saved/{saved['recipe-id']}").json()["title"] == "Green Curry"
    draft = client.post("/api/new", json={"url": "https://example.org/draft/pie"}).json()
    assert set(draft) == {"extraction-id"} and draft["extraction-id"] not in fake.state.recipes
    for url in ("https://example.org/fail", "https://example.org/norecipe-here"):
        assert error(client.post("/api/new", json={"url": url})) == (422, "EXTRACTION_FAILED")
    fake.set_import_result("https://example.org/green-curry", "fail")
    assert client.post("/api/new", json={"url": "https://example.org/green-curry"}).status_code == 422
    fake.set_import_result("https://example.org/fail", "draft")
    assert "extraction-id" in client.post("/api/new", json={"url": "https://example.org/fail"}).json()
    assert error(client.post("/api/new", json={"url": "ftp://x"})) == (400, "INVALID_REQUEST")
    with pytest.raises(ValueError):
        fake.set_import_result("https://x", "maybe")  # type: ignore[arg-type]


def test_drafts_read_and_save(fake: FakeCooked, client: httpx.Client) -> None:
    draft = client.get(f"/api/extract/{DRAFT_ID}").json()
    assert draft["title"] == "Green Shakshuka" and draft["portions"] == 2
    assert {"id", "description", "source-url", "thumbnail-url"} <= set(draft)
    untitled = client.get(f"/api/extract/{UNTITLED_DRAFT_ID}").json()
    assert "title" not in untitled and untitled["portions"] is None
    saved = client.post(
        f"/api/extract/{DRAFT_ID}/save", json={"description": "edited", "portions": None}
    ).json()
    recipe = fake.state.recipes[saved["recipe-id"]]
    assert (recipe.title, recipe.description, recipe.portions) == ("Green Shakshuka", "edited", None)
    assert error(client.get(f"/api/extract/{DRAFT_ID}")) == (404, "NOT_FOUND")
    assert error(client.post(f"/api/extract/{DRAFT_ID}/save", json={"description": "d", "portions": 1})) == (
        404,
        "NOT_FOUND",
    )
    assert error(client.post(f"/api/extract/{UNTITLED_DRAFT_ID}/save", json={"portions": 1})) == (
        400,
        "INVALID_REQUEST",
    )


# --- shopping list -----------------------------------------------------------------------------------


def test_shopping_list_seed_shape(client: httpx.Client) -> None:
    body = client.get(LIST).json()
    aisles = {a["id"]: a for a in body["aisles"]}
    assert len(aisles) >= 4 and aisles[EMPTY_AISLE_ID]["product-groups"] == []
    found = groups(client)
    assert len(found) == 6
    assert {gid for gid, (_, g) in found.items() if g["selected"]} == set(SELECTED_GROUP_IDS)
    assert any(g["quantity"] is None for _, g in found.values())
    assert all(set(g) == {"id", "name", "quantity", "selected"} for _, g in found.values())
    assert body["recipe-ids"] == ["r-0001"]


def test_add_ingredients_counts_parsed_lines_and_merges(fake: FakeCooked, client: httpx.Client) -> None:
    text = "## Ingredients\n- 4 eggs\n1 can tomatoes\n\n?? smudged line\n# note\nsalt\n500 g chicken thighs\n"
    response = client.post(f"{LIST}/ingredients", json={"text": text, "recipe-id": "r-0001"})
    assert response.json() == {"added": 4}
    found = {g["name"]: (aisle, g) for aisle, g in groups(client).values()}
    assert found["Eggs"][0] == "dairy" and found["Eggs"][1]["quantity"] == "4"
    assert found["Salt"][0] == "pantry" and found["Salt"][1]["quantity"] is None
    assert found["Tomatoes"][1]["quantity"] == "1 can + 1 can"  # merged into pg-01
    assert found["Chicken thighs"][1]["id"] == "pg-04"
    assert len(found) == 8
    client.post(f"{LIST}/ingredients", json={"text": "1 widget", "recipe-id": DRAFT_ID})
    assert found.keys() < {g["name"] for _, g in groups(client).values()}
    assert groups(client)["pg-09"][0] == "other"
    assert client.get(LIST).json()["recipe-ids"] == ["r-0001", DRAFT_ID]
    unknown = client.post(f"{LIST}/ingredients", json={"text": "1 egg", "recipe-id": "r-9999"})
    assert error(unknown) == (404, "NOT_FOUND")
    assert error(client.post(f"{LIST}/ingredients", json={"recipe-id": "r-0001"})) == (400, "INVALID_REQUEST")


def test_put_product_group_replaces_and_moves(client: httpx.Client) -> None:
    body = {"name": "Tinned tomatoes", "quantity": None, "aisle-id": "pantry", "selected": True}
    assert client.put(f"{LIST}/product-groups/pg-01", json=body).json() == {"id": "pg-01"}
    aisle, group = groups(client)["pg-01"]
    assert aisle == "pantry"
    assert group == {"id": "pg-01", "name": "Tinned tomatoes", "quantity": None, "selected": True}
    body = {"name": "Garlic", "quantity": "1 head", "aisle-id": "produce", "selected": False}
    client.put(f"{LIST}/product-groups/pg-03", json=body)
    assert groups(client)["pg-03"] == (
        "produce",
        {"id": "pg-03", **{k: body[k] for k in ("name", "quantity", "selected")}},
    )


@pytest.mark.parametrize("missing", ["name", "quantity", "aisle-id", "selected"])
def test_put_product_group_needs_all_four_keys(client: httpx.Client, missing: str) -> None:
    body = {"name": "n", "quantity": "1", "aisle-id": "other", "selected": False}
    del body[missing]
    assert error(client.put(f"{LIST}/product-groups/pg-01", json=body)) == (400, "INVALID_REQUEST")


def test_put_product_group_unknown_group_or_aisle(client: httpx.Client) -> None:
    body = {"name": "n", "quantity": None, "aisle-id": "other", "selected": False}
    assert error(client.put(f"{LIST}/product-groups/pg-99", json=body)) == (404, "NOT_FOUND")
    body["aisle-id"] = "spaceship"
    assert error(client.put(f"{LIST}/product-groups/pg-01", json=body)) == (400, "INVALID_REQUEST")
    assert groups(client)["pg-01"][0] == "produce"


def test_put_selected_sets_the_whole_set(fake: FakeCooked, client: httpx.Client) -> None:
    response = client.put(f"{LIST}/selected", json={"product-group-ids": ["pg-01", "pg-05"]})
    assert response.json() == {"product-group-ids": ["pg-01", "pg-05"]}
    assert fake.state.selected == {"pg-01", "pg-05"}
    bad = client.put(f"{LIST}/selected", json={"product-group-ids": ["pg-01", "pg-99"]})
    assert error(bad) == (400, "INVALID_REQUEST")
    assert fake.state.selected == {"pg-01", "pg-05"}
    assert error(client.put(f"{LIST}/selected", json={"product-group-ids": "pg-01"})) == (
        400,
        "INVALID_REQUEST",
    )


def test_remove_returns_only_existing_ids(client: httpx.Client) -> None:
    response = client.post(f"{LIST}/remove", json={"product-group-ids": ["pg-01", "pg-99", "pg-02"]})
    assert response.json() == {"removed": ["pg-01", "pg-02"]}
    assert set(groups(client)) == {"pg-03", "pg-04", "pg-05", "pg-06"}
    assert client.post(f"{LIST}/remove", json={"product-group-ids": ["pg-01"]}).json() == {"removed": []}


def test_delete_list_keeps_aisles(client: httpx.Client) -> None:
    before = [a["id"] for a in client.get(LIST).json()["aisles"]]
    assert client.delete(LIST).json() == {}
    after = client.get(LIST).json()
    assert [a["id"] for a in after["aisles"]] == before
    assert all(a["product-groups"] == [] for a in after["aisles"])


def test_body_must_be_a_json_object_with_json_content_type(client: httpx.Client) -> None:
    raw = json.dumps({"product-group-ids": []})
    as_text = client.post(f"{LIST}/remove", content=raw, headers={"Content-Type": "text/plain"})
    assert error(as_text) == (400, "INVALID_REQUEST")
    with_charset = client.post(
        f"{LIST}/remove", content=raw, headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert with_charset.status_code == 200
    broken = client.post(f"{LIST}/remove", content=b"{", headers={"Content-Type": "application/json"})
    assert error(broken) == (400, "INVALID_REQUEST")


# --- percent-encoding --------------------------------------------------------------------------------


def test_percent_encoded_ids_are_one_segment(fake: FakeCooked, client: httpx.Client) -> None:
    odd = "a/b c?d"
    fake.state.recipes[odd] = Recipe(odd, "Odd", "text", 1, SEED_USERNAME)
    response = client.get("/api/saved/a%2Fb%20c%3Fd")
    assert response.status_code == 200 and response.json()["id"] == odd
    assert fake.requests[-1].path == "/api/saved/a%2Fb%20c%3Fd"
    missing = client.get("/api/saved/r-0001%2Fx")
    assert missing.json() == {"code": "NOT_FOUND", "message": "No recipe with id 'r-0001/x'"}


# --- recording, reset, delay -------------------------------------------------------------------------


def test_requests_are_recorded_with_what_was_answered(fake: FakeCooked, client: httpx.Client) -> None:
    fake.clear_requests()
    client.get(f"/api/user/{SEED_USERNAME}/recipes", params={"page": 2, "page-count": 5})
    client.put("/api/saved/r-0001", json={"description": "d"}, headers={"X-Probe": "yes"})
    first, second = fake.requests
    assert (first.method, first.path, first.query, first.status) == (
        "GET",
        f"/api/user/{SEED_USERNAME}/recipes",
        {"page": ["2"], "page-count": ["5"]},
        200,
    )
    assert (second.method, second.status, second.json) == ("PUT", 400, {"description": "d"})
    assert second.body == b'{"description":"d"}'
    assert second.headers["x-probe"] == "yes" and "ring-session=" in second.headers["cookie"]
    assert second.headers["content-type"] == "application/json"
    assert fake.login_count == 1
    fake.clear_requests()
    assert fake.requests == [] and fake.login_count == 1


def test_reset_restores_everything(fake: FakeCooked, client: httpx.Client) -> None:
    seeded = client.get("/api/saved/r-0005").json()
    client.put("/api/saved/r-0005", json={"description": "edited in place", "portions": 1})
    client.delete(LIST)
    client.delete("/api/saved/r-0001")
    fake.fail(path="/api/saved/r-0002", times=None)
    fake.reject_sessions = True
    fake.reset()
    assert fake.requests == [] and fake.login_count == 0 and not fake.reject_sessions
    assert "r-0001" in fake.state.recipes and len(fake.state.groups) == 6
    assert error(client.get("/api/saved/r-0002")) == (401, "UNAUTHORIZED")  # sessions are gone
    client.post(LOGIN, json={"username": SEED_LOGIN, "password": SEED_PASSWORD})
    assert client.get("/api/saved/r-0002").status_code == 200  # faults are gone
    assert client.get("/api/saved/r-0005").json() == seeded  # an edit made in place is gone too


def test_delay_slows_every_answer(fake: FakeCooked, client: httpx.Client) -> None:
    fake.delay = 0.15
    started = time.perf_counter()
    assert client.get("/api/saved/r-0001").status_code == 200
    assert time.perf_counter() - started >= 0.15


# --- faults ------------------------------------------------------------------------------------------


def test_fail_once_on_an_exact_path(fake: FakeCooked, client: httpx.Client) -> None:
    fake.fail(
        method="GET",
        path="/api/saved/r-0001",
        status=500,
        body=b"<h1>oops</h1>",
        headers={"Content-Type": "text/html"},
    )
    first = client.get("/api/saved/r-0001")
    assert (first.status_code, first.text, first.headers["content-type"]) == (
        500,
        "<h1>oops</h1>",
        "text/html",
    )
    assert client.get("/api/saved/r-0001").status_code == 200
    assert [r.status for r in fake.requests[-2:]] == [500, 200]


def test_fail_by_regex_until_cleared_with_json_bodies(fake: FakeCooked, client: httpx.Client) -> None:
    fake.fail(path_regex=r"^/api/saved/r-000[12]$", status=418, body={"code": "TEAPOT"}, times=None)
    for _ in range(3):
        assert client.get("/api/saved/r-0001").json() == {"code": "TEAPOT"}
    assert client.get("/api/saved/r-0003").status_code == 200
    fake.clear_faults()
    assert client.get("/api/saved/r-0002").status_code == 200
    fake.fail(method="POST", status=503, times=2)
    assert client.get("/api/saved/r-0002").status_code == 200  # other method untouched
    assert error(client.post(LIST + "/remove", json={"product-group-ids": []})) == (503, "INTERNAL_ERROR")


def test_faults_apply_before_authentication(fake: FakeCooked, anon: httpx.Client) -> None:
    fake.fail(path=LOGIN, status=502)
    assert anon.post(LOGIN, json={"username": SEED_LOGIN, "password": SEED_PASSWORD}).status_code == 502
    assert fake.login_count == 1


def test_fault_kinds_with_simple_answers(fake: FakeCooked, client: httpx.Client) -> None:
    path = "/api/saved/r-0001"
    for kind in (
        "malformed_json",
        "wrong_shape",
        "rate_limited",
        "rate_limited_no_retry_after",
        "html_502",
        "empty_503",
    ):
        fake.fail_with(kind, path=path)
    malformed = client.get(path)
    assert malformed.status_code == 200
    with pytest.raises(ValueError):
        malformed.json()
    assert not isinstance(client.get(path).json(), dict)
    limited = client.get(path)
    assert error(limited) == (429, "RATE_LIMITED") and limited.headers["retry-after"] == "7"
    limited = client.get(path)
    assert error(limited) == (429, "RATE_LIMITED") and "retry-after" not in limited.headers
    html = client.get(path)
    assert (
        html.status_code == 502
        and html.headers["content-type"].startswith("text/html")
        and "<html" in html.text
    )
    empty = client.get(path)
    assert (empty.status_code, empty.content) == (503, b"")
    assert client.get(path).status_code == 200


def test_extra_fields_add_unknown_keys_at_every_level(fake: FakeCooked, client: httpx.Client) -> None:
    fake.fail_with("extra_fields", path=LIST)
    body = client.get(LIST).json()
    assert "zz-unknown-text" in body
    assert all("zz-unknown-object" in aisle for aisle in body["aisles"])
    assert all("zz-unknown-flag" in g for a in body["aisles"] for g in a["product-groups"])
    assert body["recipe-ids"] == ["r-0001"]
    plain = client.get(LIST).json()
    assert {"aisles", "recipe-ids"} == set(plain)


def test_huge_error_is_ten_megabytes_streamed(fake: FakeCooked, client: httpx.Client) -> None:
    reply = fault_module.render(
        fault_module.named("huge_error", method=None, path=None, path_regex=None, times=1, seconds=0),
        Incoming("GET", "/api/x", "", {}, b""),
        lambda: pytest.fail("not used"),
        0,
    )
    assert not isinstance(reply.body, bytes)  # chunks, never one 10 MB object
    fake.fail_with("huge_error", path="/api/saved/r-0001", times=2)
    with client.stream("GET", "/api/saved/r-0001") as response:
        assert response.status_code == 500
        assert response.headers["content-length"] == str(10 * 1024 * 1024)
        prefix = next(response.iter_bytes())
        assert prefix.startswith(b'{"code": "INTERNAL_ERROR"')
    assert len(client.get("/api/saved/r-0001").content) == 10 * 1024 * 1024
    assert client.get("/api/saved/r-0001").status_code == 200


def test_cut_off_body_breaks_the_connection(fake: FakeCooked, client: httpx.Client) -> None:
    fake.fail_with("cut_off", path="/api/saved/r-0001")
    with pytest.raises(httpx.RemoteProtocolError):
        client.get("/api/saved/r-0001")
    assert client.get("/api/saved/r-0001").status_code == 200


def test_answer_lost_carries_the_request_out_then_hangs_up_unanswered(
    fake: FakeCooked, client: httpx.Client
) -> None:
    fake.fail_with("answer_lost", "DELETE", "/api/saved/r-0001", seconds=0)
    with pytest.raises(httpx.RemoteProtocolError):
        client.delete("/api/saved/r-0001")
    assert "r-0001" not in fake.state.recipes
    assert client.get("/api/saved/r-0001").status_code == 404


def test_redirect_points_at_another_loopback_host(fake: FakeCooked, client: httpx.Client) -> None:
    fake.fail_with("redirect_other_host", path="/api/user/recipes/search")
    response = client.get("/api/user/recipes/search", params={"query": "soup"})
    assert response.status_code == 302
    target = urlsplit(response.headers["location"])
    assert target.hostname == "127.0.0.2" and target.port == fake.port
    assert (target.path, target.query) == ("/api/user/recipes/search", "query=soup")


def test_slow_fault_sleeps_then_answers_normally(fake: FakeCooked, client: httpx.Client) -> None:
    fake.fail_with("slow", path="/api/saved/r-0001", seconds=0.3)
    with pytest.raises(httpx.ReadTimeout):
        client.get("/api/saved/r-0001", timeout=0.05)
    fake.fail_with("slow", path="/api/saved/r-0001", seconds=0.2)
    started = time.perf_counter()
    assert client.get("/api/saved/r-0001").status_code == 200
    assert time.perf_counter() - started >= 0.2


def test_fault_arguments_are_checked(fake: FakeCooked) -> None:
    assert "huge_error" in FAULT_KINDS and len(FAULT_KINDS) == 13
    with pytest.raises(ValueError):
        fake.fail_with("gremlins")
    with pytest.raises(ValueError):
        fake.fail(times=0)


# --- out-of-process control --------------------------------------------------------------------------


def test_control_endpoints_drive_the_fake_without_being_recorded(
    fake: FakeCooked, client: httpx.Client
) -> None:
    control = "/_fake"
    client.get("/api/saved/r-0001")
    listed = client.get(f"{control}/requests").json()
    assert [r["path"] for r in listed["requests"]] == [LOGIN, "/api/saved/r-0001"]
    assert listed["requests"][0]["json"]["username"] == SEED_LOGIN and listed["login-count"] == 1
    assert client.post(f"{control}/expire-sessions").json() == {}
    assert client.get("/api/saved/r-0001").status_code == 401
    assert client.post(f"{control}/delay", json={"seconds": 0.01}).json() == {"seconds": 0.01}
    assert fake.delay == 0.01
    assert (
        client.post(f"{control}/fail", json={"path": "/api/saved/r-0001", "status": 500}).status_code == 200
    )
    assert (
        client.post(f"{control}/fail", json={"kind": "rate_limited", "path": "/api/saved/r-0001"}).status_code
        == 200
    )
    assert client.get("/api/saved/r-0001").status_code == 500
    assert client.get("/api/saved/r-0001").status_code == 429
    assert error(client.post(f"{control}/fail", json={"kind": "gremlins"})) == (400, "INVALID_REQUEST")
    assert error(client.post(f"{control}/delay", json={})) == (400, "INVALID_REQUEST")
    assert client.get(f"{control}/nope").status_code == 404
    assert client.post(f"{control}/reset").json() == {}
    assert fake.requests == [] and fake.delay == 0.0


# --- concurrency and CLI -----------------------------------------------------------------------------


def test_concurrent_requests_keep_state_consistent(fake: FakeCooked, client: httpx.Client) -> None:
    def work(n: int) -> tuple[int, str]:  # one httpx.Client is safe to share between threads
        added = client.post(f"{LIST}/ingredients", json={"text": f"{n} gizmo-{n}"}).json()["added"]
        body = {"title": f"T{n}", "description": "d", "portions": n}
        return added, client.post("/api/recipes", json=body).json()["recipe-id"]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(1, 17)))
    assert sum(a for a, _ in results) == 16
    assert len({rid for _, rid in results}) == 16
    assert len(fake.state.groups) == 6 + 16 and fake.state.saved_count == 16
    assert len([r for r in fake.requests if r.status == 200]) == 1 + 32


def test_cli_prints_base_url_and_login_and_stops_on_ctrl_c() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "cooked_fake", "--delay-ms", "1"],
        stdout=subprocess.PIPE,
        text=True,
        # Ctrl-C's default action, as at a shell prompt, even when this run was started with SIGINT
        # ignored (a background job in a script): Python then installs no KeyboardInterrupt.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(2)]
        base_url = lines[0].split()[-1]
        assert (
            base_url.startswith("http://127.0.0.1:") and SEED_LOGIN in lines[1] and SEED_PASSWORD in lines[1]
        )
        login = httpx.post(f"{base_url}{LOGIN}", json={"username": SEED_LOGIN, "password": SEED_PASSWORD})
        assert login.status_code == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_stop_wakes_a_slow_answer_promptly() -> None:
    fake = FakeCooked().start()
    fake.fail_with("slow", seconds=30)

    def call() -> None:
        with contextlib.suppress(httpx.HTTPError):
            httpx.get(f"{fake.base_url}/api/saved/r-0001", timeout=5)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    time.sleep(0.1)
    started = time.perf_counter()
    fake.stop()
    assert time.perf_counter() - started < 2


def test_cli_on_a_busy_port_says_so_in_one_line() -> None:
    with FakeCooked() as busy:
        port = busy.port
        done = subprocess.run(
            [sys.executable, "-m", "cooked_fake", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr and "--port" in done.stderr


def test_the_advertised_control_url_lists_every_control_endpoint(
    fake: FakeCooked, anon: httpx.Client
) -> None:
    listed = anon.get("/_fake/")
    assert listed.status_code == 200
    endpoints = {(e["method"], e["path"]) for e in listed.json()["endpoints"]}
    assert ("GET", "/_fake/requests") in endpoints and ("POST", "/_fake/fail") in endpoints
    for method, path in endpoints - {("GET", "/_fake/")}:
        # Every listed endpoint exists: an empty body is either accepted or refused as invalid, never 404.
        assert anon.request(method, path, json={}).status_code in (200, 400), (method, path)
    assert "GET /_fake/ lists them" in anon.get("/_fake/nope").json()["message"]


def test_every_control_action_is_in_the_listing() -> None:
    """A new ``case`` in the control dispatcher without a line in ENDPOINTS would be undiscoverable."""
    handled = set(re.findall(r'case \("(\w+)", "([\w-]*)"\)', inspect.getsource(control._act)))
    assert handled and handled == set(control.ENDPOINTS)


def test_trickle_fault_sends_the_normal_answer_one_byte_at_a_time(
    fake: FakeCooked, client: httpx.Client
) -> None:
    fake.fail_with("trickle", path="/api/saved/r-0001", seconds=0.001)
    trickled = client.get("/api/saved/r-0001")
    assert trickled.status_code == 200
    assert trickled.json() == client.get("/api/saved/r-0001").json()
