"""THE table of Cooked's API: every path, method, query parameter and JSON key (docs/cooked-api.md),
so correcting the partly reconstructed contract is a one-place edit.
"""

from __future__ import annotations

import functools
import string
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from cooked_mcp.exceptions import CookedRequestError

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
CONFIRMED = Provenance(True, "Cooked's public mobile app and customer-API notes")
#: Everything else (an endpoint's default): the shape in docs/cooked-api.md that no public source shows.
RECONSTRUCTED = Provenance(False, "the project's reconstruction (docs/cooked-api.md), no public source")


@dataclass(frozen=True)
class Endpoint:
    """One Cooked operation. ``name`` is what logs call it (never the filled path, which may hold the
    username); ``slow`` selects the long read timeout; ``changes``: a lost answer may hide a made change.
    The query parameters each takes are in ``Query``'s comments."""

    name: str
    method: str
    path_template: str
    provenance: Provenance = RECONSTRUCTED
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
        empty values would change which endpoint is called), before anything is sent.
        """
        for field, value in params.items():
            if value in ("", ".", ".."):
                raise CookedRequestError(
                    f"Nothing was sent to Cooked: the {field.replace('_', ' ')} is "
                    f"{'empty' if not value else repr(value)}, which is not a valid Cooked ID",
                    next_step="use an ID exactly as Cooked returned it",
                )
        return self.path_template.format(**{field: quote(value, safe="") for field, value in params.items()})


LOGIN = Endpoint("login", "POST", "/api/public/login", CONFIRMED)
LIST_RECIPES = Endpoint("list recipes", "GET", "/api/user/{username}/recipes")
# The path, ``query`` and ``{items}`` are public; ``page`` is not.
SEARCH_RECIPES = Endpoint("search recipes", "GET", "/api/user/recipes/search", CONFIRMED)
#: Cooked's search answers pages of this fixed size; only the list endpoint takes a page size.
SEARCH_PAGE_SIZE: Final = 20
GET_RECIPE = Endpoint("get recipe", "GET", "/api/saved/{recipe_id}")
PREVIEW_RECIPE = Endpoint("preview recipe", "POST", "/api/recipes/preview")
SAVE_RECIPE = Endpoint("save recipe", "POST", "/api/recipes", changes=True)
UPDATE_RECIPE = Endpoint("update recipe", "PUT", "/api/saved/{recipe_id}", changes=True)
DELETE_RECIPE = Endpoint("delete recipe", "DELETE", "/api/saved/{recipe_id}", changes=True)
IMPORT_URL = Endpoint("import URL", "POST", "/api/new", CONFIRMED, slow=True, changes=True)
GET_DRAFT = Endpoint("get draft", "GET", "/api/extract/{extraction_id}")
SAVE_DRAFT = Endpoint("save draft", "POST", "/api/extract/{extraction_id}/save", changes=True)
GET_SHOPPING_LIST = Endpoint("get shopping list", "GET", "/api/user/{username}/shopping-list")
ADD_INGREDIENTS = Endpoint(
    "add ingredients", "POST", "/api/user/{username}/shopping-list/ingredients", changes=True
)
UPDATE_PRODUCT_GROUP = Endpoint(
    "update product group",
    "PUT",
    "/api/user/{username}/shopping-list/product-groups/{product_group_id}",
    changes=True,
)
SET_SELECTED = Endpoint("set selection", "PUT", "/api/user/{username}/shopping-list/selected", changes=True)
REMOVE_PRODUCT_GROUPS = Endpoint(
    "remove product groups", "POST", "/api/user/{username}/shopping-list/remove", changes=True
)
CLEAR_SHOPPING_LIST = Endpoint(
    "clear shopping list", "DELETE", "/api/user/{username}/shopping-list", changes=True
)

#: Every operation in the order above, for tests and documentation that walk the whole table.
ENDPOINTS: Final = tuple(value for value in list(globals().values()) if isinstance(value, Endpoint))
