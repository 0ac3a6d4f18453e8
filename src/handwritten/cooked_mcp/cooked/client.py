"""``CookedClient``: Cooked's API as typed async methods, for one fixed account (no method takes a
username). Every call logs in lazily; a lost session is renewed and the request sent once more, never more.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import SecretStr

from cooked_mcp.cooked import endpoints, models
from cooked_mcp.cooked.decoding import M, decode, error_from_response
from cooked_mcp.cooked.endpoints import USERNAME_PARAM, Endpoint, Key, Query
from cooked_mcp.cooked.sender import Answer, Sender, Timeouts
from cooked_mcp.cooked.session import Session
from cooked_mcp.exceptions import CookedAuthError

if TYPE_CHECKING:
    from cooked_mcp.config import Settings


class CookedClient:
    """The process's one connection to one Cooked account; use ``async with`` or ``aclose()``."""

    def __init__(
        self,
        base_url: str,
        username: str,
        password: SecretStr,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 30.0,
        import_read_timeout: float = 90.0,
        credentials_from: str | None = None,
        base_url_from: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        secrets: Iterable[str] = (),
    ) -> None:
        """``credentials_from``/``base_url_from`` name the settings for hints; ``clock`` times the login
        back-off; ``secrets`` (the bearer token) are scrubbed from Cooked's text too.
        """
        timeouts = Timeouts(connect=connect_timeout, read=read_timeout, slow_read=import_read_timeout)
        self._sender = Sender(base_url, transport=transport, timeouts=timeouts, base_url_from=base_url_from)
        self._session = Session(
            self._sender, username, password, credentials_from=credentials_from, clock=clock, secrets=secrets
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> CookedClient:
        """The client for the configured account: the one place that maps settings onto the client."""
        return cls(
            settings.base_url,
            settings.username,
            settings.password,
            credentials_from=settings.describe_credentials(),
            base_url_from=settings.describe_origin("base_url"),
            secrets=settings.secret_values(),
        )

    async def __aenter__(self) -> CookedClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._sender.aclose()

    async def ensure_session(self) -> None:
        """Log in now unless a session exists (lets a startup check surface bad credentials early)."""
        await self._session.current()

    def answer_deadline(self, endpoint: Endpoint) -> float:
        """Seconds a request to ``endpoint`` may take in all before it is given up."""
        return self._sender.timeouts.deadline(endpoint)

    def secret_values(self) -> list[str]:
        """The values no log line or error may show (``Session.secret_values``)."""
        return self._session.secret_values()

    # implements: recipes.PAGINATION.2
    async def list_recipes(self, page: int, page_count: int) -> list[models.CookedRecipeSummary]:
        """Newest first; a full page means more may exist (Cooked does not say)."""
        params = {Query.PAGE: page, Query.PAGE_COUNT: page_count}
        return (await self._call(endpoints.LIST_RECIPES, models.RecipeList, params=params)).items

    async def search_recipes(self, query: str, page: int) -> list[models.CookedRecipeSummary]:
        params: dict[str, str | int] = {Query.QUERY: query, Query.PAGE: page}
        return (await self._call(endpoints.SEARCH_RECIPES, models.RecipeList, params=params)).items

    async def get_recipe(self, recipe_id: str) -> models.CookedRecipe:
        return await self._call(endpoints.GET_RECIPE, models.CookedRecipe, path={"recipe_id": recipe_id})

    async def preview_recipe(self, title: str, text: str) -> models.Preview:
        body = {Key.TITLE: title, Key.TEXT: text}
        return await self._call(endpoints.PREVIEW_RECIPE, models.Preview, body=body)

    # implements: recipes.SAVE.13
    async def save_recipe(self, title: str | None, description: str, portions: int | None) -> str:
        body = {Key.TITLE: title, Key.DESCRIPTION: description, Key.PORTIONS: portions}
        return (await self._call(endpoints.SAVE_RECIPE, models.SavedRef, body=body)).recipe_id

    async def update_recipe(self, recipe_id: str, description: str, portions: int | None) -> str:
        body = {Key.DESCRIPTION: description, Key.PORTIONS: portions}
        path = {"recipe_id": recipe_id}
        return (await self._call(endpoints.UPDATE_RECIPE, models.SavedRef, path=path, body=body)).recipe_id

    async def delete_recipe(self, recipe_id: str) -> str:
        path = {"recipe_id": recipe_id}
        return (await self._call(endpoints.DELETE_RECIPE, models.SavedRef, path=path)).recipe_id

    async def import_url(self, url: str) -> models.ImportResult:
        """May take up to a minute; a saved recipe or an unsaved draft comes back."""
        return await self._call(endpoints.IMPORT_URL, models.ImportResult, body={Key.URL: url})

    async def get_draft(self, extraction_id: str) -> models.CookedDraft:
        path = {"extraction_id": extraction_id}
        return await self._call(endpoints.GET_DRAFT, models.CookedDraft, path=path)

    async def save_draft(self, extraction_id: str, description: str, portions: int | None) -> str:
        body = {Key.DESCRIPTION: description, Key.PORTIONS: portions}
        path = {"extraction_id": extraction_id}
        return (await self._call(endpoints.SAVE_DRAFT, models.SavedRef, path=path, body=body)).recipe_id

    async def get_shopping_list(self) -> models.ShoppingList:
        return await self._call(endpoints.GET_SHOPPING_LIST, models.ShoppingList)

    async def add_ingredients(self, text: str, recipe_id: str | None = None) -> int:
        """Returns how many ingredients Cooked added; lines it could not parse are not counted."""
        body = {Key.TEXT: text}
        if recipe_id is not None:
            body[Key.RECIPE_ID] = recipe_id
        return (await self._call(endpoints.ADD_INGREDIENTS, models.AddResult, body=body)).added

    async def update_product_group(
        self, group_id: str, *, name: str, quantity: str | None, aisle_id: str, selected: bool
    ) -> str:
        """Cooked replaces the whole group, so all four fields are always sent."""
        body = {Key.NAME: name, Key.QUANTITY: quantity, Key.AISLE_ID: aisle_id, Key.SELECTED: selected}
        path = {"product_group_id": group_id}
        return (await self._call(endpoints.UPDATE_PRODUCT_GROUP, models.GroupRef, path=path, body=body)).id

    async def set_selected(self, ids: Sequence[str]) -> list[str]:
        """Sets the complete selected set: every group not listed becomes unselected."""
        body = {Key.PRODUCT_GROUP_IDS: list(ids)}
        return (await self._call(endpoints.SET_SELECTED, models.SelectedSet, body=body)).product_group_ids

    async def remove_product_groups(self, ids: Sequence[str]) -> list[str]:
        """Returns only the IDs that existed."""
        body = {Key.PRODUCT_GROUP_IDS: list(ids)}
        return (await self._call(endpoints.REMOVE_PRODUCT_GROUPS, models.Removed, body=body)).removed

    async def clear_shopping_list(self) -> None:
        await self._call(endpoints.CLEAR_SHOPPING_LIST, models.Empty)

    # implements: authentication.SESSION.4, authentication.SESSION.5, authentication.SESSION.6, api-client.REQUESTS.5, authentication.LOGIN.6
    async def _call(
        self,
        endpoint: Endpoint,
        model: type[M],
        *,
        path: Mapping[str, str] | None = None,
        params: Mapping[str, str | int] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> M:
        """The one request path: the session's username fills a user-scoped path, a lost session is
        renewed once, and an answer that is no success becomes the error that says so."""

        async def send(username: str) -> Answer:
            values = {**(path or {}), **({USERNAME_PARAM: username} if endpoint.user_scoped else {})}
            return await self._sender.send(endpoint, endpoint.path(**values), params=params, body=body)

        generation, username = await self._session.current()
        reply = await send(username)
        if reply.session_lost:
            reply = await send((await self._session.renew(generation))[1])
        if reply.ok:
            return decode(model, reply, endpoint, self.secret_values)
        error = error_from_response(reply, endpoint, self.secret_values())
        if reply.status != 401:
            raise error
        raise CookedAuthError(  # after one re-login and one retry: no more
            f"Cooked rejected the {endpoint.name} request even right after a fresh login",
            status=401,
            code=error.code,
            cooked_message=error.cooked_message,
            next_step="Cooked accepted the login but rejected the session it issued; retry later, and if it "
            f"keeps happening check that {self._sender.base_url_setting} points straight at Cooked (a proxy "
            "may drop the session cookie)",
        )
