"""Recipe tools: read recipes and one recipe, preview, save from five sources, delete.

Titles, markdown and drafts may come from any web page, so tool text shows
them only fenced (formatting.fence) and our own sentences carry at most a
one-line, bounded copy of a Cooked value. Image and thumbnail URLs never get
this far: the client's models do not carry them.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from functools import partial

from cooked_mcp_generated.models import (
    DeleteRecipeArguments,
    DeleteRecipeOutput,
    PreviewRecipeTextArguments,
    PreviewRecipeTextOutput,
    ReadOutput,
    ReadRecipe,
    ReadRecipes,
    Recipe,
    RecipeDraft,
    RecipeSummary,
    SaveRecipeArguments,
    SaveRecipeDraft,
    SaveRecipeExisting,
    SaveRecipeOutput,
    SaveRecipePrepared,
    SaveRecipeRawText,
    SaveRecipeUrl,
)
from cooked_mcp_runtime.results import ProgressReporter, ToolCall, ToolResult

from ..config import DEFAULT_IMPORT_ANSWER_SECONDS
from ..cooked import models as cooked
from ..cooked.client import CookedClient
from ..text import one_line
from .confirmation import ASK, MAX_NAME_CHARS, Confirmation, Question, named
from .errors import RecipeGone, cooked_errors
from .formatting import fence, portions_phrase, tool_call
from .writes import KEEP_SECONDS, Write, Writes

logger = logging.getLogger("cooked_mcp.handlers")

#: Cooked's search answers pages of this fixed size; only the list endpoint takes a page size.
SEARCH_PAGE_SIZE = 20
KEEP_MINUTES = f"{KEEP_SECONDS / 60:.0f}"
#: How often a running URL import reports progress; clients drop a call that stays silent too long.
PROGRESS_INTERVAL_SECONDS = 3.0

# implements: api-client.ERRORS.5
RECIPE_NOT_FOUND = (
    "no saved recipe has this ID (it may have been deleted); find the right ID with read target=recipes "
    "(add query to search by title)"
)
RECIPE_FORBIDDEN = (
    "this account does not own the recipe, so it cannot change or delete it; to keep an "
    "edited version, save a copy with save_recipe source=prepared"
)
DRAFT_NOT_FOUND = (
    "no import draft has this ID (a draft is gone once saved); import the page again with "
    "save_recipe source=url for a new draft_id, or look for an already saved copy with read target=recipes"
)
#: Where Cooked's (web-page) text sits in each kind of result: data_from_cooked in the output.
RECIPE_DATA = ["recipe.title", "recipe.markdown", "recipe.owner"]
DRAFT_DATA = ["draft.title", "draft.markdown"]
PREVIEW_DATA = ["title", "markdown"]
LIST_DATA = ["recipes[].title"]
PREVIEW_NOTICE = "Preview only: NOTHING was saved."
DRAFT_NOTICE = "It is NOT saved. Nothing is saved until you save it with save_recipe source=draft."

DELETE_QUESTION = "Delete the recipe {name} from Cooked? This cannot be undone."
REPLACE_QUESTION = (
    "Replace the whole text of the recipe {name} in Cooked? Its current text and portions are lost."
)
IMPORT_FAILED = (
    "Cooked found no recipe on that page; copy the recipe text from the page and save it with "
    "save_recipe source=raw_text (title, text), or check it first with preview_recipe_text"
)


class RecipeTools:
    def __init__(
        self,
        client: CookedClient,
        *,
        writes: Writes,
        writable: bool = True,
        import_answer_seconds: float = DEFAULT_IMPORT_ANSWER_SECONDS,
        confirmation: Confirmation = ASK,
    ) -> None:
        self._client = client
        self._confirmation = confirmation
        self._writes = writes
        self._writable = writable
        self._import_answer_seconds = import_answer_seconds

    # --- read ----------------------------------------------------------------------------------

    # implements: recipes.READ.1, recipes.READ.2, recipes.READ.5
    async def read(self, args: ReadRecipes | ReadRecipe, call: ToolCall) -> ToolResult[ReadOutput]:
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
        return _RecipePage(items, page, limit, query=None, more=len(items) == limit).result()

    # implements: recipes.PAGINATION.1, recipes.PAGINATION.3
    async def _search(self, query: str, page: int, limit: int) -> ToolResult[ReadOutput]:
        """Tool page N is results (N-1)*L+1 to N*L, as for the list, cut from Cooked's 20-result pages.

        Counting pages in steps of ``limit`` (not Cooked's fixed 20) is what lets an agent that
        follows ``next_page`` with the same ``limit`` see every result exactly once. A window
        inside one Cooked page costs one request (always so for a limit dividing 20, such as
        the default 10); one crossing a Cooked page boundary needs the next Cooked page too.
        A short Cooked page ends the results, so no page after it is asked for.
        """
        start = (page - 1) * limit
        first = start // SEARCH_PAGE_SIZE + 1
        last = (start + limit - 1) // SEARCH_PAGE_SIZE + 1
        fetched: list[cooked.RecipeSummary] = []
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
        return _RecipePage(shown, page, limit, query=query, more=beyond or ends_full).result()

    # implements: recipes.READ.6, recipes.READ.6-1, recipes.READ.6-2, recipes.READ.7, recipes.READ.8
    async def _read_recipe(self, recipe_id: str) -> ToolResult[ReadOutput]:
        with cooked_errors(not_found=RECIPE_NOT_FOUND, gone=RecipeGone):
            recipe = await self._client.get_recipe(recipe_id)
        lines = [
            f"Recipe {recipe.id}: {portions_phrase(recipe.portions)}{_ownership(recipe, self._writable)}.",
            _fenced_recipe(recipe.title, recipe.description),
        ]
        # A recipe this account cannot edit gets no change or delete call: its header line already
        # says so and names the way out (an edited copy), and a suggested call would only get a 403.
        next_step = None
        if self._writable and recipe.can_edit is not False:
            next_step = (
                f"To change it: {_update_call(recipe.id)} (send the whole new markdown). "
                f"To delete it: {tool_call('delete_recipe', recipe_id=recipe.id)}."
            )
            lines.append(next_step)
        text = "\n".join(lines)
        output = Recipe(
            id=recipe.id,
            title=recipe.title,
            owner=recipe.owner,
            can_edit=recipe.can_edit,
            markdown=recipe.description,
            portions=recipe.portions,
        )
        return ToolResult(
            text,
            ReadOutput(target="recipe", recipe=output, next_step=next_step, data_from_cooked=RECIPE_DATA),
        )

    # --- preview -------------------------------------------------------------------------------

    # implements: recipes.PREVIEW_TEXT.1, recipes.PREVIEW_TEXT.2, recipes.PREVIEW_TEXT.3, recipes.PREVIEW_TEXT.4
    async def preview(self, args: PreviewRecipeTextArguments) -> ToolResult[PreviewRecipeTextOutput]:
        with cooked_errors():
            preview = await self._client.preview_recipe(args.title, args.text)
        save = tool_call(
            "save_recipe",
            source="prepared",
            title="<title>",
            markdown="<markdown>",
            portions=preview.portions,
        )
        portions = portions_phrase(preview.portions)
        lines = [
            f"{PREVIEW_NOTICE} Cooked made this of the text ({portions}):",
            _fenced_recipe(preview.title, preview.description),
        ]
        next_step = None
        if self._writable:
            next_step = (
                f"To keep it: {save} with the title and markdown above (edit them first if needed), "
                "or save_recipe source=raw_text with the original title and text."
            )
            lines.append(next_step)
        text = "\n".join(lines)
        output = PreviewRecipeTextOutput(
            title=preview.title,
            markdown=preview.description,
            portions=preview.portions,
            saved=False,
            notice=PREVIEW_NOTICE,
            next_step=next_step,
            data_from_cooked=PREVIEW_DATA,
        )
        return ToolResult(text, output)

    # --- save ----------------------------------------------------------------------------------

    # implements: recipes.SAVE.10
    async def save(self, args: SaveRecipeArguments, call: ToolCall) -> ToolResult[SaveRecipeOutput]:
        """Every save is a change made once (writes.py): an identical call gets its kept outcome."""
        write = Write.of(call, args, area="recipes", look=NEWEST_RECIPES)
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
                    self._recipe_question,
                    args.recipe_id,
                    REPLACE_QUESTION,
                    "the recipe {name} was NOT changed",
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
        """Cooked saves raw text in two steps; the agent sees one, saving exactly what the preview made.

        Cooked's title wins so the saved recipe matches a preview_recipe_text of the same text;
        the agent's title stands in only if Cooked's preview has none.
        """
        with cooked_errors():
            preview = await self._client.preview_recipe(title, text)
            recipe_id = await self._client.save_recipe(
                preview.title if preview.title is not None else title, preview.description, preview.portions
            )
        portions = portions_phrase(preview.portions)
        what = f"Saved the text as recipe {recipe_id} ({portions}); Cooked formatted it first."
        return _saved("raw_text", recipe_id, what)

    # implements: recipes.SAVE.2
    async def _save_prepared(
        self, title: str, markdown: str, portions: int | None
    ) -> ToolResult[SaveRecipeOutput]:
        with cooked_errors():
            recipe_id = await self._client.save_recipe(title, markdown, portions)
        return _saved("prepared", recipe_id, f"Saved recipe {recipe_id} ({portions_phrase(portions)}).")

    # implements: recipes.SAVE.3
    async def _import_url(self, write: Write, call: ToolCall, url: str) -> ToolResult[SaveRecipeOutput]:
        """Progress ticks while this call waits, at most the answer deadline; the import itself
        may outlive the call (writes.py), and then "still running" is the answer."""
        async with _ticking(
            call.report_progress, "Cooked is importing the page (this can take up to a minute)"
        ):
            return await self._writes.run(
                write,
                call,
                lambda: self._import_now(url),
                answer_seconds=self._import_answer_seconds,
                still_running=_still_running,
            )

    # implements: recipes.SAVE.4, recipes.SAVE.6, recipes.SAVE.14, recipes.SAVE.16
    async def _import_now(self, url: str) -> ToolResult[SaveRecipeOutput]:
        """Never saves a draft: a draft is saved only by an explicit source=draft call."""
        with cooked_errors(unprocessable=IMPORT_FAILED):
            imported = await self._client.import_url(url)
            if imported.recipe_id is not None:
                what = f"Cooked imported the page and saved it as recipe {imported.recipe_id}."
                return _saved("url", imported.recipe_id, what)
            assert imported.extraction_id is not None  # ImportResult holds exactly one of the two
            draft = await self._client.get_draft(imported.extraction_id)
        return _draft_result(draft)

    # implements: recipes.SAVE.7, recipes.SAFETY.1
    async def _save_draft(
        self, draft_id: str, markdown: str, portions: int | None
    ) -> ToolResult[SaveRecipeOutput]:
        with cooked_errors(not_found=DRAFT_NOT_FOUND):
            recipe_id = await self._client.save_draft(draft_id, markdown, portions)
        what = f"Saved import draft {draft_id} as recipe {recipe_id} ({portions_phrase(portions)})."
        return _saved("draft", recipe_id, what)

    # implements: recipes.SAVE.8, recipes.SAFETY.2
    async def _update(
        self, recipe_id: str, markdown: str, portions: int | None
    ) -> ToolResult[SaveRecipeOutput]:
        with cooked_errors(not_found=RECIPE_NOT_FOUND, forbidden=RECIPE_FORBIDDEN):
            updated = await self._client.update_recipe(recipe_id, markdown, portions)
        what = f"Updated recipe {updated}: markdown and portions ({portions_phrase(portions)}) replaced."
        return _saved("existing", updated, what)

    # --- delete --------------------------------------------------------------------------------

    # implements: recipes.DELETE.1, recipes.DELETE.2, recipes.SAFETY.3
    async def delete(self, args: DeleteRecipeArguments, call: ToolCall) -> ToolResult[DeleteRecipeOutput]:
        """Made once (writes.py); when it succeeds, every kept outcome naming the recipe is forgotten."""
        write = _about_recipe(Write.of(call, args, area="recipes", look=""), args.recipe_id)
        delete_it = partial(
            self._recipe_question, args.recipe_id, DELETE_QUESTION, "the recipe {name} was NOT deleted"
        )
        confirm = self._confirmation.before(call, delete_it)
        return await self._writes.run(
            replace(write, deletes=args.recipe_id),
            call,
            lambda: self._delete(args.recipe_id),
            confirm=confirm,
        )

    # --- what the person is asked (confirmation.py) ----------------------------------------------

    # implements: extensions.CONFIRMATION.2, extensions.CONFIRMATION.3, extensions.CONFIRMATION.12
    async def _recipe_question(self, recipe_id: str, ask: str, unchanged: str) -> Question | None:
        """``ask`` and ``unchanged`` with ``{name}``: the recipe's title and ID as Cooked has them now.
        None when this account cannot change the recipe (Cooked refuses: nothing is lost)."""
        with cooked_errors(not_found=RECIPE_NOT_FOUND):
            recipe = await self._client.get_recipe(recipe_id)
        if recipe.can_edit is False:
            return None
        name = f"{named(recipe.title, '(untitled)')} ({one_line(recipe.id, '?', MAX_NAME_CHARS)})"
        return Question(ask.format(name=name), unchanged.format(name=name))

    async def _delete(self, recipe_id: str) -> ToolResult[DeleteRecipeOutput]:
        with cooked_errors(not_found=RECIPE_NOT_FOUND, forbidden=RECIPE_FORBIDDEN):
            deleted = await self._client.delete_recipe(recipe_id)
        text = f"Deleted recipe {deleted} from Cooked. This cannot be undone."
        return ToolResult(text, DeleteRecipeOutput(recipe_id=deleted, deleted=True))


# implements: recipes.READ.3, recipes.PAGINATION.6, api-client.LIMITS.2, api-client.LIMITS.3
@dataclass(frozen=True)
class _RecipePage:
    """One page of a list or search, and the one call that continues it.

    Page N with limit L holds results (N-1)*L+1 to N*L for a list and a search alike, so
    the continuation is always the same call with ``page`` N+1: ``next_page`` in the output
    and the same call spelled out in the text. ``more`` says the next page may hold results.
    """

    items: Sequence[cooked.RecipeSummary]
    page: int
    limit: int
    query: str | None
    more: bool

    def result(self) -> ToolResult[ReadOutput]:
        output = ReadOutput(
            target="recipes",
            recipes=[RecipeSummary(id=item.id, title=item.title) for item in self.items],
            query=self.query,
            page=self.page,
            limit=self.limit,
            more_available=self.more,
            next_page=self.page + 1 if self.more else None,
            next_step="\n".join(self._next_steps()) or None,
            data_from_cooked=LIST_DATA if self.items else None,
        )
        return ToolResult("\n".join(self._lines()), output)

    def _lines(self) -> list[str]:
        if not self.items:
            return [self._nothing()]
        listing = "\n".join(f"{item.id}  {one_line(item.title, '(untitled)')}" for item in self.items)
        lines = [
            f"{self._what()}, page {self.page}: {len(self.items)} shown (recipe ID, then title).",
            fence(listing, "Recipe titles"),
        ]
        if not self.more:
            lines.append("There are no further pages.")
        return lines + self._next_steps()

    def _next_steps(self) -> list[str]:
        if not self.items:
            return []
        steps = [f"Open one with {tool_call('read', target='recipe', recipe_id='<recipe ID>')}."]
        if self.more:
            steps.insert(
                0,
                f"More may exist on the next page: {tool_call('read', **self._arguments(self.page + 1))} "
                f"(keep limit={self.limit}: pages count in steps of limit).",
            )
        return steps

    def _what(self) -> str:
        return (
            "Saved recipes, newest first"
            if self.query is None
            else f"Saved recipes matching {self._quoted()}"
        )

    def _nothing(self) -> str:
        """Said plainly, so an agent does not retry a search or page that cannot hold anything."""
        if self.query is None and self.page == 1:
            return "There are no saved recipes in this Cooked account."
        if self.query is None:
            return (
                f"Page {self.page} (limit={self.limit}) is empty: the saved recipes end before it. "
                "Use a lower page."
            )
        if self.page == 1:
            return (
                f"Nothing matched: no saved recipe matches {self._quoted()}. "
                "Try other words or list all with read target=recipes."
            )
        return f"Nothing more matched {self._quoted()}: page {self.page} is empty; earlier pages hold all."

    def _quoted(self) -> str:
        return json.dumps(self.query, ensure_ascii=False)

    def _arguments(self, page: int) -> dict[str, str | int | None]:
        arguments: dict[str, str | int | None] = {"target": "recipes"}
        if self.query is not None:
            arguments["query"] = self.query
        return {**arguments, "page": page, "limit": self.limit}


# implements: recipes.SAVE.9, tools.RESPONSES.2
def _saved(source: str, recipe_id: str, what: str) -> ToolResult[SaveRecipeOutput]:
    """Every save names the recipe ID, in text and output, with the natural next call."""
    next_step = f"Read it with {tool_call('read', target='recipe', recipe_id=recipe_id)}."
    output = SaveRecipeOutput(source=source, saved=True, recipe_id=recipe_id, next_step=next_step)
    return ToolResult(f"{what} {next_step}", output)


# implements: recipes.SAVE.5, recipes.SAVE.12, recipes.SAVE.15
def _draft_result(draft: cooked.Draft) -> ToolResult[SaveRecipeOutput]:
    save = tool_call(
        "save_recipe",
        source="draft",
        draft_id=draft.id,
        markdown="<reviewed markdown>",
        portions=draft.portions if draft.portions is not None else "<portions or null>",
    )
    next_step = f"Review it (fix the markdown and portions if needed), then save it with {save}."
    text = "\n".join(
        [
            f"Cooked made an import DRAFT {draft.id} from the page ({portions_phrase(draft.portions)}). "
            + DRAFT_NOTICE,
            _fenced_recipe(draft.title, draft.description),
            next_step,
        ]
    )
    output = RecipeDraft(
        draft_id=draft.id, title=draft.title, markdown=draft.description, portions=draft.portions
    )
    return ToolResult(
        text,
        SaveRecipeOutput(
            source="url",
            saved=False,
            draft=output,
            notice=DRAFT_NOTICE,
            next_step=next_step,
            data_from_cooked=DRAFT_DATA,
        ),
    )


#: Where a recipe saved by a change whose answer was lost shows up.
NEWEST_RECIPES = f"{tool_call('read', target='recipes')} lists the newest recipes first"


def _about_recipe(write: Write, recipe_id: str) -> Write:
    """A change to one recipe: looked at by reading it, forgotten when it is deleted."""
    look = (
        f"{tool_call('read', target='recipe', recipe_id=recipe_id)} shows the recipe as it is now "
        "(not found: it is deleted)"
    )
    return replace(write, look=look, recipe_ids=frozenset({recipe_id}))


def _still_running(age: float | None) -> ToolResult[SaveRecipeOutput]:
    """``age`` is how long ago an earlier call started the import; None for this call's own.

    The promise made here (no second import) holds for as long as it says: writes.KEEP_SECONDS, in
    this process. A stop waits for the import within its grace (transports.protocol_guard), and what is
    kept is in memory only, so the text says both.
    """
    started = (
        "Cooked is importing the page"
        if age is None
        else f"An earlier save_recipe call started importing this page {age:.0f} s ago"
    )
    notice = (
        f"{started} and has not finished yet; the import goes on in the background while this server "
        "process runs and may still save the recipe. Do NOT retry it or import the page again."
    )
    next_step = (
        f"In a minute, look for the recipe with {tool_call('read', target='recipes')} (newest first). "
        f"Until {KEEP_MINUTES} minutes after the import ends, calling save_recipe with this same URL starts "
        "no second import while this server process runs: it reports this import's outcome (the saved "
        "recipe, the draft to review, or its error; or, if Cooked's answer to it is lost, how to check "
        "whether it saved and import again on purpose). If the server is stopped or restarted meanwhile, "
        "it forgets the import: look with read target=recipes before importing the page again."
    )
    output = SaveRecipeOutput(
        source="url", saved=False, import_running=True, notice=notice, next_step=next_step
    )
    return ToolResult(f"{notice} {next_step}", output)


def _fenced_recipe(title: str | None, markdown: str) -> str:
    return "\n".join([fence(title or "(no title)", "Title"), fence(markdown, "Recipe markdown")])


def _ownership(recipe: cooked.Recipe, writable: bool) -> str:
    owner = f"; owner {one_line(recipe.owner, '?')}" if recipe.owner is not None else ""
    if recipe.can_edit is None or not writable:
        return owner
    if recipe.can_edit:
        return f"{owner}; this account can change or delete it"
    return f"{owner}; this account can NOT change or delete it (save an edited copy with source=prepared)"


def _update_call(recipe_id: str) -> str:
    return tool_call(
        "save_recipe",
        source="existing",
        recipe_id=recipe_id,
        markdown="<markdown>",
        portions="<portions or null>",
    )


@asynccontextmanager
async def _ticking(report: ProgressReporter, message: str) -> AsyncIterator[None]:
    """Report progress every few seconds while the body runs, so a waiting client sees life.

    A plain task, not a task group: a task group would wrap the body's ToolError in an
    ExceptionGroup. Cancelling the ticker in ``finally`` never awaits it, so a cancellation
    of the tool call itself (notifications/cancelled) passes straight through.
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
