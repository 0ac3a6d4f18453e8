"""THE table of Cooked's API: every path, method, query parameter and JSON key (docs/cooked-api.md).

Much of the contract is not public, so correcting it against the live service must be a
one-place edit: nothing else in the code base spells a Cooked path or JSON key. Path
parameters are percent-encoded as exactly one segment each, so no ID can change which
endpoint is called.
"""

from __future__ import annotations

import functools
import string
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from cooked_mcp.exceptions import InvalidPathValue

API_PREFIX: Final = "/api/"

#: The path parameter every user-scoped path has; filled from the login response, never by a caller.
USERNAME_PARAM: Final = "username"


class Key:
    """JSON keys, kebab-case as Cooked (a Clojure service) spells them.

    Cooked's app reads boolean keys with a trailing ``?`` (``is-patron?``), so every answer
    model accepts a key with that ``?`` as the key without it (see ``models``); the
    spellings here are the ones sent and expected first.
    """

    # login
    USERNAME: Final = "username"
    PASSWORD: Final = "password"
    # errors
    CODE: Final = "code"
    MESSAGE: Final = "message"
    # recipes
    ITEMS: Final = "items"
    ID: Final = "id"
    TITLE: Final = "title"
    TEXT: Final = "text"
    DESCRIPTION: Final = "description"
    PORTIONS: Final = "portions"
    OWNER: Final = "owner"
    CAN_EDIT: Final = "can-edit"
    RECIPE_ID: Final = "recipe-id"
    EXTRACTION_ID: Final = "extraction-id"
    #: The draft ID's other spelling, which Cooked's app reads in answers other than /api/new.
    EXTRACT_ID: Final = "extract-id"
    URL: Final = "url"
    # shopping list
    AISLES: Final = "aisles"
    NAME: Final = "name"
    PRODUCT_GROUPS: Final = "product-groups"
    QUANTITY: Final = "quantity"
    SELECTED: Final = "selected"
    RECIPE_IDS: Final = "recipe-ids"
    ADDED: Final = "added"
    AISLE_ID: Final = "aisle-id"
    PRODUCT_GROUP_IDS: Final = "product-group-ids"
    REMOVED: Final = "removed"


class Query:
    """Query parameter names."""

    PAGE: Final = "page"
    PAGE_COUNT: Final = "page-count"
    QUERY: Final = "query"


@dataclass(frozen=True)
class Provenance:
    """How sure the project is that a row matches the live Cooked, and why.

    ``confirmed`` rows were seen in a public source (named in ``source``); the others are
    the project's reconstruction, the first suspects when ``--check`` finds a mismatch.
    """

    confirmed: bool
    source: str

    @property
    def label(self) -> str:
        return f"{'confirmed' if self.confirmed else 'reconstructed'}: {self.source}"


#: The public sources: Cooked's mobile app (by Cooked's author) and the readable part of its API notes.
CONFIRMED: Final = Provenance(True, "Cooked's public mobile app and customer-API notes")
#: Everything else: the shape in docs/cooked-api.md that no public source shows.
RECONSTRUCTED: Final = Provenance(
    False, "the project's reconstruction (docs/cooked-api.md), no public source"
)


@dataclass(frozen=True)
class Endpoint:
    """One Cooked operation.

    ``name`` is what logs and error messages call it (never the filled path, which may hold
    the username). ``provenance`` says whether a public source confirms the row. ``slow`` selects the long read timeout. ``query`` lists the only query
    parameter names the operation may be sent. ``changes`` marks operations that change the
    account: when their answer is lost (timeout, broken connection) the change may still have
    happened, and a blind retry could repeat it (a second copy of a recipe, ingredients added twice).
    """

    name: str
    method: str
    path_template: str
    provenance: Provenance
    slow: bool = False
    query: tuple[str, ...] = ()
    changes: bool = False

    @functools.cached_property  # parsing the template costs more than the rest of path()
    def path_params(self) -> tuple[str, ...]:
        return tuple(field for _, field, _, _ in string.Formatter().parse(self.path_template) if field)

    @property
    def user_scoped(self) -> bool:
        return USERNAME_PARAM in self.path_params

    # implements: api-client.REQUESTS.3
    def path(self, **params: str) -> str:
        """Fill the template; each value becomes one percent-encoded segment or is refused.

        ``.`` and ``..`` are refused rather than encoded: unreserved characters pass through
        ``quote`` unchanged and HTTP clients resolve such segments, which would call a
        different endpoint. An empty value would do the same by collapsing the segment.
        """
        expected = set(self.path_params)
        if set(params) != expected:
            raise ValueError(f"{self.name} needs path parameters {sorted(expected)}, got {sorted(params)}")
        encoded: dict[str, str] = {}
        for field, value in params.items():
            if value in ("", ".", ".."):
                raise InvalidPathValue(field, "empty" if not value else f"'{value}'")
            encoded[field] = quote(value, safe="")
        path = self.path_template.format(**encoded)
        if not path.startswith(API_PREFIX):
            raise ValueError(f"{self.name}: built path does not start with {API_PREFIX}")
        return path


LOGIN: Final = Endpoint("login", "POST", "/api/public/login", CONFIRMED)
LIST_RECIPES: Final = Endpoint(
    "list recipes", "GET", "/api/user/{username}/recipes", RECONSTRUCTED, query=(Query.PAGE, Query.PAGE_COUNT)
)
# The path, ``query`` and ``{items}`` are public; ``page`` is not.
SEARCH_RECIPES: Final = Endpoint(
    "search recipes", "GET", "/api/user/recipes/search", CONFIRMED, query=(Query.QUERY, Query.PAGE)
)
GET_RECIPE: Final = Endpoint("get recipe", "GET", "/api/saved/{recipe_id}", RECONSTRUCTED)
PREVIEW_RECIPE: Final = Endpoint("preview recipe", "POST", "/api/recipes/preview", RECONSTRUCTED)
SAVE_RECIPE: Final = Endpoint("save recipe", "POST", "/api/recipes", RECONSTRUCTED, changes=True)
UPDATE_RECIPE: Final = Endpoint("update recipe", "PUT", "/api/saved/{recipe_id}", RECONSTRUCTED, changes=True)
DELETE_RECIPE: Final = Endpoint(
    "delete recipe", "DELETE", "/api/saved/{recipe_id}", RECONSTRUCTED, changes=True
)
IMPORT_URL: Final = Endpoint("import URL", "POST", "/api/new", CONFIRMED, slow=True, changes=True)
GET_DRAFT: Final = Endpoint("get draft", "GET", "/api/extract/{extraction_id}", RECONSTRUCTED)
SAVE_DRAFT: Final = Endpoint(
    "save draft", "POST", "/api/extract/{extraction_id}/save", RECONSTRUCTED, changes=True
)
GET_SHOPPING_LIST: Final = Endpoint(
    "get shopping list", "GET", "/api/user/{username}/shopping-list", RECONSTRUCTED
)
ADD_INGREDIENTS: Final = Endpoint(
    "add ingredients", "POST", "/api/user/{username}/shopping-list/ingredients", RECONSTRUCTED, changes=True
)
UPDATE_PRODUCT_GROUP: Final = Endpoint(
    "update product group",
    "PUT",
    "/api/user/{username}/shopping-list/product-groups/{product_group_id}",
    RECONSTRUCTED,
    changes=True,
)
SET_SELECTED: Final = Endpoint(
    "set selection", "PUT", "/api/user/{username}/shopping-list/selected", RECONSTRUCTED, changes=True
)
REMOVE_PRODUCT_GROUPS: Final = Endpoint(
    "remove product groups", "POST", "/api/user/{username}/shopping-list/remove", RECONSTRUCTED, changes=True
)
CLEAR_SHOPPING_LIST: Final = Endpoint(
    "clear shopping list", "DELETE", "/api/user/{username}/shopping-list", RECONSTRUCTED, changes=True
)

#: Every operation, for tests and documentation that need to walk the whole table.
ENDPOINTS: Final = (
    LOGIN,
    LIST_RECIPES,
    SEARCH_RECIPES,
    GET_RECIPE,
    PREVIEW_RECIPE,
    SAVE_RECIPE,
    UPDATE_RECIPE,
    DELETE_RECIPE,
    IMPORT_URL,
    GET_DRAFT,
    SAVE_DRAFT,
    GET_SHOPPING_LIST,
    ADD_INGREDIENTS,
    UPDATE_PRODUCT_GROUP,
    SET_SELECTED,
    REMOVE_PRODUCT_GROUPS,
    CLEAR_SHOPPING_LIST,
)
