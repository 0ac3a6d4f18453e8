"""THE table of Cooked's API: every path, method, query parameter and JSON key (docs/cooked-api.md),
so correcting the partly reconstructed contract is a one-place edit.
"""

from __future__ import annotations

import functools
import string
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from cooked_mcp.exceptions import InvalidPathValue

#: Every path starts so (tests check each request against it).
API_PREFIX: Final = "/api/"

#: The path parameter every user-scoped path has; filled from the login response, never by a caller.
USERNAME_PARAM: Final = "username"


class Key:
    """JSON keys as Cooked spells them (models also accept a boolean key with a trailing ``?``)."""

    USERNAME: Final = "username"
    PASSWORD: Final = "password"
    CODE: Final = "code"
    MESSAGE: Final = "message"
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

    PAGE: Final = "page"  # list recipes, search recipes
    PAGE_COUNT: Final = "page-count"  # list recipes
    QUERY: Final = "query"  # search recipes


@dataclass(frozen=True)
class Provenance:
    """Whether a public source (``source``) confirms the row; the others are the first suspects for ``--check``."""

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
    """One Cooked operation. ``name`` is what logs call it (never the filled path, which may hold the
    username); ``slow`` selects the long read timeout; ``changes``: a lost answer may hide a made change.
    The query parameters each takes are in ``Query``'s comments."""

    name: str
    method: str
    path_template: str
    provenance: Provenance
    slow: bool = False
    changes: bool = False

    @functools.cached_property  # user_scoped asks on every request
    def path_params(self) -> tuple[str, ...]:
        return tuple(field for _, field, _, _ in string.Formatter().parse(self.path_template) if field)

    @property
    def user_scoped(self) -> bool:
        return USERNAME_PARAM in self.path_params

    # implements: api-client.REQUESTS.3
    def path(self, **params: str) -> str:
        """Fill the template; each value becomes one percent-encoded segment or is refused (``.``, ``..`` and
        empty values would change which endpoint is called).
        """
        for field, value in params.items():
            if value in ("", ".", ".."):
                raise InvalidPathValue(field, "empty" if not value else f"'{value}'")
        return self.path_template.format(**{field: quote(value, safe="") for field, value in params.items()})


LOGIN: Final = Endpoint("login", "POST", "/api/public/login", CONFIRMED)
LIST_RECIPES: Final = Endpoint("list recipes", "GET", "/api/user/{username}/recipes", RECONSTRUCTED)
# The path, ``query`` and ``{items}`` are public; ``page`` is not.
SEARCH_RECIPES: Final = Endpoint("search recipes", "GET", "/api/user/recipes/search", CONFIRMED)
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

#: Every operation in the order above, for tests and documentation that walk the whole table.
ENDPOINTS: Final = tuple(value for value in list(globals().values()) if isinstance(value, Endpoint))
