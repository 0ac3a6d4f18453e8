"""Recipe tools: what each call asks of Cooked and in which order; the wording is in recipe_text."""

from __future__ import annotations

import asyncio
import logging
import re
import string
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import partial
from urllib.parse import urlsplit, urlunsplit

from cooked_mcp_generated.models import (
    DeleteRecipeArguments,
    DeleteRecipeOutput,
    PreviewRecipeTextArguments,
    PreviewRecipeTextOutput,
    ReadOutput,
    ReadRecipe,
    ReadRecipes,
    SaveRecipeArguments,
    SaveRecipeDraft,
    SaveRecipeExisting,
    SaveRecipeOutput,
    SaveRecipePrepared,
    SaveRecipeRawText,
    SaveRecipeUrl,
)
from cooked_mcp_runtime.results import ProgressReporter, ToolCall, ToolResult

from ..cooked.client import CookedClient
from ..cooked.models import CookedRecipeSummary
from .confirmation import Confirmation, Question
from .recipe_text import (
    DELETE_QUESTION,
    DRAFT_NOT_FOUND,
    IMPORT_FAILED,
    IMPORTING,
    NEWEST_RECIPES,
    RECIPE_DELETE_FORBIDDEN,
    RECIPE_FORBIDDEN,
    RECIPE_NOT_FOUND,
    REPLACE_QUESTION,
    RecipePage,
    deleted_result,
    draft_result,
    preview_result,
    question_name,
    recipe_look,
    recipe_result,
    saved,
    still_running,
)
from .tool_errors import RecipeGone, cooked_errors
from .writes import Write, Writes

#: Cooked's search answers pages of this fixed size; only the list endpoint takes a page size.
SEARCH_PAGE_SIZE = 20
_DEFAULT_PORTS = {"http": "80", "https": "443"}
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")


class RecipeTools:
    """The recipe tools; ``CookedTools`` gives them the client, the kept outcomes and the settings."""

    _client: CookedClient
    _confirmation: Confirmation
    _writes: Writes
    _writable: bool
    _import_answer_seconds: float

    # --- read ----------------------------------------------------------------------------------

    # implements: recipes.READ.1, recipes.READ.2, recipes.READ.5
    async def read_recipes(self, args: ReadRecipes | ReadRecipe, call: ToolCall) -> ToolResult[ReadOutput]:
        """A read the agent receives is its look at recipe changes whose outcome is unknown (writes);
        so is a recipe read that finds the recipe gone, which is what a deletion looks like."""
        looked = partial(self._writes.looked, "recipes")
        if isinstance(args, ReadRecipe):
            try:
                result = await self._read_recipe(args.recipe_id)
            except RecipeGone:
                call.when_answered(looked)
                raise
        elif args.query is None:
            result = await self._list(args.page, args.limit)
        else:
            result = await self._search(args.query, args.page, args.limit)
        call.when_answered(looked)
        return result

    # implements: recipes.PAGINATION.1, recipes.PAGINATION.2
    async def _list(self, page: int, limit: int) -> ToolResult[ReadOutput]:
        """Tool page N with limit L is Cooked's page N with ``page-count`` L, so pages never overlap."""
        with cooked_errors():
            items = await self._client.list_recipes(page, limit)
        # Cooked never says whether more exist; a full page is the only sign that they may.
        return RecipePage(items, page, limit, query=None, more=len(items) == limit).result()

    # implements: recipes.PAGINATION.1, recipes.PAGINATION.3
    async def _search(self, query: str, page: int, limit: int) -> ToolResult[ReadOutput]:
        """Tool page N is results (N-1)*L+1 to N*L cut from Cooked's 20-result pages, so following
        ``next_page`` with one ``limit`` sees each result once; a short Cooked page ends the results.
        """
        start = (page - 1) * limit
        first = start // SEARCH_PAGE_SIZE + 1
        last = (start + limit - 1) // SEARCH_PAGE_SIZE + 1
        fetched: list[CookedRecipeSummary] = []
        with cooked_errors():
            for cooked_page in range(first, last + 1):
                items = await self._client.search_recipes(query, cooked_page)
                fetched.extend(items)
                if len(items) < SEARCH_PAGE_SIZE:
                    break
        skip = start - (first - 1) * SEARCH_PAGE_SIZE
        shown = fetched[skip : skip + limit]
        # More exist for sure when the last Cooked page read goes on past the window; they may
        # exist when the window ends exactly where a full Cooked page does.
        beyond = len(fetched) > skip + limit
        ends_full = len(fetched) == (last - first + 1) * SEARCH_PAGE_SIZE
        return RecipePage(shown, page, limit, query=query, more=beyond or ends_full).result()

    async def _read_recipe(self, recipe_id: str) -> ToolResult[ReadOutput]:
        with cooked_errors(not_found=RECIPE_NOT_FOUND, gone=RecipeGone):
            recipe = await self._client.get_recipe(recipe_id)
        return recipe_result(recipe, self._writable)

    # --- preview -------------------------------------------------------------------------------

    async def preview_recipe_text(
        self, args: PreviewRecipeTextArguments, call: ToolCall
    ) -> ToolResult[PreviewRecipeTextOutput]:
        with cooked_errors():
            preview = await self._client.preview_recipe(args.title, args.text)
        return preview_result(preview, self._writable)

    # --- save ----------------------------------------------------------------------------------

    # implements: recipes.SAVE.10
    async def save_recipe(self, args: SaveRecipeArguments, call: ToolCall) -> ToolResult[SaveRecipeOutput]:
        """Every save is a change made once (writes.py): an identical call gets its kept outcome,
        and for a URL import an identical call is one naming the same page (``same_page``)."""
        keyed = (
            args.model_copy(update={"url": same_page(args.url)}) if isinstance(args, SaveRecipeUrl) else args
        )
        write = Write.of(call, keyed, area="recipes", look=NEWEST_RECIPES)
        match args:
            case SaveRecipeRawText():
                return await self._writes.run(write, call, lambda: self._save_raw_text(args.title, args.text))
            case SaveRecipePrepared():
                return await self._writes.run(
                    write, call, lambda: self._save_prepared(args.title, args.markdown, args.portions)
                )
            case SaveRecipeUrl():
                return await self._import_url(replace(write, reported_again=True), call, args.url)
            case SaveRecipeDraft():
                return await self._writes.run(
                    replace(write, saves_draft=args.draft_id),
                    call,
                    lambda: self._save_draft(args.draft_id, args.markdown, args.portions),
                )
            case SaveRecipeExisting():
                write = _about_recipe(write, args.recipe_id)
                replace_it = partial(
                    self._recipe_question, args.recipe_id, REPLACE_QUESTION, "{name} was not changed"
                )
                confirm = self._confirmation.before(call, replace_it)
                return await self._writes.run(
                    write,
                    call,
                    lambda: self._update(args.recipe_id, args.markdown, args.portions),
                    confirm=confirm,
                )

    # implements: recipes.SAVE.1, recipes.SAVE.11
    async def _save_raw_text(self, title: str, text: str) -> ToolResult[SaveRecipeOutput]:
        """Preview then save exactly what the preview made; Cooked's title wins (as in preview_recipe_text),
        the agent's only when Cooked has none.
        """
        with cooked_errors():
            preview = await self._client.preview_recipe(title, text)
            recipe_id = await self._client.save_recipe(
                preview.title if preview.title is not None else title, preview.description, preview.portions
            )
        return saved("raw_text", recipe_id, preview.portions)

    # implements: recipes.SAVE.2
    async def _save_prepared(
        self, title: str, markdown: str, portions: int | None
    ) -> ToolResult[SaveRecipeOutput]:
        with cooked_errors():
            recipe_id = await self._client.save_recipe(title, markdown, portions)
        return saved("prepared", recipe_id, portions)

    # implements: recipes.SAVE.3
    async def _import_url(self, write: Write, call: ToolCall, url: str) -> ToolResult[SaveRecipeOutput]:
        """Progress ticks while this call waits, at most the answer deadline; the import itself
        may outlive the call (writes.py), and then "still running" is the answer."""
        async with ticking(call.report_progress, IMPORTING):
            return await self._writes.run(
                write,
                call,
                lambda: self._import_now(url),
                answer_seconds=self._import_answer_seconds,
                still_running=still_running,
            )

    # implements: recipes.SAVE.4, recipes.SAVE.6, recipes.SAVE.14, recipes.SAVE.16
    async def _import_now(self, url: str) -> ToolResult[SaveRecipeOutput]:
        """Never saves a draft: a draft is saved only by an explicit source=draft call."""
        with cooked_errors(unprocessable=IMPORT_FAILED):
            imported = await self._client.import_url(url)
            if imported.recipe_id is not None:
                return saved("url", imported.recipe_id)
            assert imported.extraction_id is not None  # ImportResult holds exactly one of the two
            draft = await self._client.get_draft(imported.extraction_id)
        return draft_result(draft)

    # implements: recipes.SAVE.7, recipes.SAFETY.1
    async def _save_draft(
        self, draft_id: str, markdown: str, portions: int | None
    ) -> ToolResult[SaveRecipeOutput]:
        with cooked_errors(not_found=DRAFT_NOT_FOUND):
            recipe_id = await self._client.save_draft(draft_id, markdown, portions)
        return saved("draft", recipe_id, portions, draft_id=draft_id)

    # implements: recipes.SAVE.8, recipes.SAFETY.2
    async def _update(
        self, recipe_id: str, markdown: str, portions: int | None
    ) -> ToolResult[SaveRecipeOutput]:
        with cooked_errors(not_found=RECIPE_NOT_FOUND, forbidden=RECIPE_FORBIDDEN):
            updated = await self._client.update_recipe(recipe_id, markdown, portions)
        return saved("existing", updated, portions)

    # --- delete --------------------------------------------------------------------------------

    # implements: recipes.DELETE.1, recipes.DELETE.2, recipes.SAFETY.3
    async def delete_recipe(
        self, args: DeleteRecipeArguments, call: ToolCall
    ) -> ToolResult[DeleteRecipeOutput]:
        """Made once (writes.py); when it succeeds, every kept outcome naming the recipe is forgotten."""
        write = _about_recipe(Write.of(call, args, area="recipes", look=""), args.recipe_id)
        named: list[str] = []  # the recipe as its question named it, for the answer
        delete_it = partial(
            self._recipe_question, args.recipe_id, DELETE_QUESTION, "{name} was not deleted", named
        )
        confirm = self._confirmation.before(call, delete_it)
        return await self._writes.run(
            replace(write, deletes=args.recipe_id),
            call,
            lambda: self._delete(args.recipe_id, named),
            confirm=confirm,
        )

    # --- what the person is asked (confirmation.py) ----------------------------------------------

    # implements: extensions.CONFIRMATION.2, extensions.CONFIRMATION.3, extensions.CONFIRMATION.12
    async def _recipe_question(
        self, recipe_id: str, ask: str, unchanged: str, named: list[str] | None = None
    ) -> Question | None:
        """``ask`` and ``unchanged`` with ``{name}``: the recipe as Cooked has it now (recipe_text.
        question_name), also added to ``named``. None when this account cannot change the recipe
        (Cooked refuses: nothing is lost)."""
        with cooked_errors(not_found=RECIPE_NOT_FOUND):
            recipe = await self._client.get_recipe(recipe_id)
        if recipe.can_edit is False:
            return None
        name = question_name(recipe)
        if named is not None:
            named.append(name)
        return Question(ask.format(name=name), unchanged.format(name=name))

    async def _delete(self, recipe_id: str, named: list[str]) -> ToolResult[DeleteRecipeOutput]:
        with cooked_errors(not_found=RECIPE_NOT_FOUND, forbidden=RECIPE_DELETE_FORBIDDEN):
            deleted = await self._client.delete_recipe(recipe_id)
        return deleted_result(deleted, named[-1] if named else None)


def _about_recipe(write: Write, recipe_id: str) -> Write:
    """A change to one recipe: looked at by reading it, forgotten when it is deleted."""
    return replace(write, look=recipe_look(recipe_id), recipe_ids=frozenset({recipe_id}))


def same_page(url: str) -> str:
    """``url`` as every spelling of the same page is (RFC 3986 equivalences: case, default port,
    fragment, unreserved escapes, empty path and query); any other difference is another page.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    userinfo, at, host = parts.netloc.rpartition("@")
    port = ""
    if not host.endswith("]") and ":" in host:  # not an IPv6 address without a port
        host, _, port = host.rpartition(":")
    if port.lstrip("0") == _DEFAULT_PORTS.get(scheme):
        port = ""
    netloc = f"{userinfo}{at}{host.lower()}{':' if port else ''}{port}"
    return urlunsplit((scheme, netloc, _unescaped(parts.path) or "/", _unescaped(parts.query), ""))


def _unescaped(text: str) -> str:
    def one(escape: re.Match[str]) -> str:
        char = chr(int(escape[1], 16))
        return char if char in _UNRESERVED else f"%{escape[1].upper()}"

    return _ESCAPE.sub(one, text)


logger = logging.getLogger("cooked_mcp.handlers")

#: How often a running URL import reports progress; clients drop a call that stays silent too long.
PROGRESS_INTERVAL_SECONDS = 3.0


@asynccontextmanager
async def ticking(report: ProgressReporter, message: str) -> AsyncIterator[None]:
    """Report progress every few seconds while the body runs. A plain task, not a task group (which would
    wrap the body's ToolError), cancelled without awaiting so the call's own cancellation passes.
    """
    ticker = asyncio.create_task(_tick(report, message))
    try:
        yield
    finally:
        ticker.cancel()


async def _tick(report: ProgressReporter, message: str) -> None:
    elapsed = 0.0
    while True:
        try:
            await report(elapsed, None, f"{message}; {elapsed:.0f} s so far")
        except Exception:
            # Progress is a courtesy: a client that cannot take it must not fail the import.
            logger.debug("progress report failed; no more progress for this call", exc_info=True)
            return
        await asyncio.sleep(PROGRESS_INTERVAL_SECONDS)
        elapsed += PROGRESS_INTERVAL_SECONDS
