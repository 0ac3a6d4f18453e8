"""The /api surface of cooked-api.md: routing, session and body checks, one small function per endpoint."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qs, unquote

from . import text, variants
from .exchange import ApiError, Incoming, Reply, error_reply, json_reply
from .sessions import COOKIE_NAME, Sessions
from .state import State

SEARCH_PAGE_SIZE = 20
DEFAULT_PAGE_COUNT = 20
MAX_PAGE_COUNT = 50


def bad(message: str) -> ApiError:
    return ApiError(400, "INVALID_REQUEST", message)


@dataclass
class Call:
    state: State
    sessions: Sessions
    args: dict[str, str]
    query: dict[str, list[str]]
    body: dict[str, Any]
    username: str
    reply_headers: dict[str, str] = field(default_factory=dict)


# --- body and query checks ---------------------------------------------------------------------------

_MISSING = object()


def _get(body: dict[str, Any], key: str) -> Any:
    value = body.get(key, _MISSING)
    if value is _MISSING:
        raise bad(f"Missing key {key!r}")
    return value


def _str(body: dict[str, Any], key: str, *, nullable: bool = False, blank: bool = True) -> Any:
    value = _get(body, key)
    if value is None and nullable:
        return None
    if not isinstance(value, str) or (not blank and not value.strip()):
        raise bad(f"{key!r} must be a {'non-blank ' if not blank else ''}string")
    return value


def _portions(body: dict[str, Any]) -> int | None:
    value = _get(body, "portions")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise bad("'portions' must be a positive integer or null")
    return value


def _ids(body: dict[str, Any]) -> list[str]:
    value = _get(body, "product-group-ids")
    if not isinstance(value, list) or not all(isinstance(i, str) for i in value):
        raise bad("'product-group-ids' must be a list of strings")
    return value


def _int_param(call: Call, name: str, default: int, high: int | None = None) -> int:
    raw = call.query.get(name, [str(default)])[-1]
    try:
        value = int(raw)
    except ValueError:
        raise bad(f"{name!r} must be an integer") from None
    if value < 1 or (high is not None and value > high):
        raise bad(f"{name!r} must be between 1 and {high}" if high else f"{name!r} must be at least 1")
    return value


# --- endpoints ---------------------------------------------------------------------------------------


def login(c: Call) -> Any:
    username, password = _str(c.body, "username"), _str(c.body, "password")
    if (
        username.casefold() not in {c.state.login_name.casefold(), c.state.username.casefold()}
        or password != c.state.password
    ):
        raise ApiError(401, "INVALID_AUTHENTICATION", "Invalid username or password")
    token = c.sessions.issue(c.state.username)
    c.reply_headers["Set-Cookie"] = f"{COOKIE_NAME}={token}; Path=/; HttpOnly"
    return {"message": "Authenticated successfully", "username": c.state.username}


def list_recipes(c: Call) -> Any:
    page, size = _int_param(c, "page", 1), _int_param(c, "page-count", DEFAULT_PAGE_COUNT, MAX_PAGE_COUNT)
    chosen = c.state.newest_first()[(page - 1) * size : page * size]
    return {"items": [r.summary() for r in chosen]}


def search(c: Call) -> Any:
    if "query" not in c.query:
        raise bad("Missing query parameter 'query'")
    needle, page = c.query["query"][-1].casefold(), _int_param(c, "page", 1)
    hits = [r for r in c.state.newest_first() if r.title is not None and needle in r.title.casefold()]
    return {"items": [r.summary() for r in hits[(page - 1) * SEARCH_PAGE_SIZE : page * SEARCH_PAGE_SIZE]]}


def get_recipe(c: Call) -> Any:
    return c.state.recipe(c.args["id"]).detail(c.state.username)


def update_recipe(c: Call) -> Any:
    description, portions = _str(c.body, "description"), _portions(c.body)
    recipe = c.state.editable(c.args["id"])
    recipe.description, recipe.portions = description, portions
    return {"recipe-id": recipe.id}


def delete_recipe(c: Call) -> Any:
    del c.state.recipes[c.state.editable(c.args["id"]).id]
    return {"recipe-id": c.args["id"]}


def preview(c: Call) -> Any:
    title = _str(c.body, "title", nullable=True) if "title" in c.body else None
    title, description, portions = text.preview(title, _str(c.body, "text", blank=False))
    return {"title": title, "description": description, "portions": portions}


def save_recipe(c: Call) -> Any:
    title, description = _str(c.body, "title", nullable=True), _str(c.body, "description")
    return {"recipe-id": c.state.add_recipe(title, description, _portions(c.body)).id}


def import_url(c: Call) -> Any:
    url = _str(c.body, "url")
    if not url.startswith(("http://", "https://")):
        raise bad("'url' must be an http(s) URL")
    return c.state.import_url(url)


def get_draft(c: Call) -> Any:
    return c.state.draft(c.args["id"]).detail()


def save_draft(c: Call) -> Any:
    description, portions = _str(c.body, "description"), _portions(c.body)
    return {"recipe-id": c.state.save_draft(c.args["id"], description, portions).id}


def get_list(c: Call) -> Any:
    return c.state.shopping_list()


def add_ingredients(c: Call) -> Any:
    recipe_id = _str(c.body, "recipe-id", nullable=True) if "recipe-id" in c.body else None
    return {"added": c.state.add_ingredients(_str(c.body, "text"), recipe_id)}


def put_group(c: Call) -> Any:
    name, quantity = _str(c.body, "name", blank=False), _str(c.body, "quantity", nullable=True)
    aisle_id, selected = _str(c.body, "aisle-id"), _get(c.body, "selected")
    if not isinstance(selected, bool):
        raise bad("'selected' must be true or false")
    c.state.replace_group(c.args["id"], name, quantity, aisle_id, selected)
    return {"id": c.args["id"]}


def put_selected(c: Call) -> Any:
    return {"product-group-ids": c.state.set_selected(_ids(c.body))}


def remove_groups(c: Call) -> Any:
    return {"removed": c.state.remove_groups(_ids(c.body))}


def clear_list(c: Call) -> Any:
    c.state.clear_list()
    return {}


@dataclass(frozen=True)
class Route:
    method: str
    pattern: str  # "{name}" segments capture one percent-decoded path segment
    handler: Callable[[Call], Any]
    auth: bool = True

    def match(self, segments: list[str]) -> dict[str, str] | None:
        parts = self.pattern.strip("/").split("/")
        if len(parts) != len(segments):
            return None
        args: dict[str, str] = {}
        for part, seg in zip(parts, segments, strict=True):
            if part.startswith("{"):
                args[part[1:-1]] = seg
            elif part != seg:
                return None
        return args


LIST = "/api/user/{user}/shopping-list"
ROUTES = (
    Route("POST", "/api/public/login", login, auth=False),
    Route("GET", "/api/user/recipes/search", search),
    Route("GET", "/api/user/{user}/recipes", list_recipes),
    Route("GET", "/api/saved/{id}", get_recipe),
    Route("PUT", "/api/saved/{id}", update_recipe),
    Route("DELETE", "/api/saved/{id}", delete_recipe),
    Route("POST", "/api/recipes/preview", preview),
    Route("POST", "/api/recipes", save_recipe),
    Route("POST", "/api/new", import_url),
    Route("GET", "/api/extract/{id}", get_draft),
    Route("POST", "/api/extract/{id}/save", save_draft),
    Route("GET", LIST, get_list),
    Route("DELETE", LIST, clear_list),
    Route("POST", LIST + "/ingredients", add_ingredients),
    Route("PUT", LIST + "/product-groups/{id}", put_group),
    Route("PUT", LIST + "/selected", put_selected),
    Route("POST", LIST + "/remove", remove_groups),
)
BODY_METHODS = {"POST", "PUT", "PATCH"}


def _session_token(headers: dict[str, str]) -> str | None:
    cookie = SimpleCookie()
    try:
        cookie.load(headers.get("cookie", ""))
    except CookieError:
        return None
    morsel = cookie.get(COOKIE_NAME)
    return morsel.value if morsel else None


def _json_object(incoming: Incoming) -> dict[str, Any]:
    media_type = incoming.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise bad("Content-Type must be application/json")
    try:
        body = json.loads(incoming.body)
    except ValueError:
        raise bad("Request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise bad("Request body must be a JSON object")
    return body


def dispatch(
    incoming: Incoming,
    state: State,
    sessions: Sessions,
    reject_sessions: bool,
    active: frozenset[str] = frozenset(),
) -> Reply:
    """Checks run in the order a real service would: route, session, user scope, body, then the endpoint.

    ``active`` names the contract variants (variants.py) that reshape the answer.
    """
    segments = [unquote(s) for s in incoming.path.split("/")[1:]]
    matches = [(r, args) for r in ROUTES if (args := r.match(segments)) is not None]
    route = next(((r, a) for r, a in matches if r.method == incoming.method), None)
    if route is None:
        if matches:
            return error_reply(405, "METHOD_NOT_ALLOWED", f"{incoming.method} is not allowed here")
        return error_reply(404, "NOT_FOUND", "No such endpoint")
    chosen, args = route
    try:
        username = ""
        if chosen.auth:
            user = sessions.user_for(_session_token(incoming.headers))
            if user is None or reject_sessions:
                raise ApiError(401, "UNAUTHORIZED", "Not logged in or the session has expired")
            username = user
            # Decision: another user's scope answers 403 FORBIDDEN (never 404), so a client that
            # builds paths from the login name instead of the canonical username fails loudly.
            if "user" in args and args["user"] != username:
                raise ApiError(403, "FORBIDDEN", f"Not allowed to access user {args['user']!r}")
        body = _json_object(incoming) if incoming.method in BODY_METHODS else {}
        call = Call(
            state, sessions, args, parse_qs(incoming.query_string, keep_blank_values=True), body, username
        )
        with state.lock:
            value = chosen.handler(call)
        status, value = variants.reshape(active, chosen.handler.__name__, value)
        if value is None:
            return Reply(status, b"", list(call.reply_headers.items()))
        return json_reply(status, value, call.reply_headers)
    except ApiError as err:
        if chosen.handler is login and err.status == 401:
            err = ApiError(variants.rejected_login_status(active), err.code, err.message)
        if "drifted" in active and chosen.handler is get_recipe and err.status == 404:
            err = ApiError(410, "GONE", err.message)
        return error_reply(err.status, err.code, err.message)
