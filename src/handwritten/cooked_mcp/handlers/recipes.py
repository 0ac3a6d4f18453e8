"""Recipe tools: what each call asks of Cooked, in which order, and what the agent reads back.
Cooked text is shown only fenced; our sentences hold at most a one-line bounded copy of it."""

from __future__ import annotations

import asyncio
import json
import re
import string
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from dataclasses import replace
from functools import partial
from urllib.parse import urlsplit, urlunsplit

from cooked_mcp_generated import models as tool
from cooked_mcp_runtime.results import ProgressReporter, ToolCall, ToolResult

from ..cooked.client import CookedClient
from ..cooked.endpoints import SEARCH_PAGE_SIZE
from ..cooked.models import CookedDraft, CookedRecipe, CookedRecipeSummary, Preview
from ..exceptions import CookedForbidden, CookedNotFound, CookedUnprocessable
from ..text import one_line
from .confirmation import MAX_NAME_CHARS, Question
from .formatting import Hints, cooked_errors, fence, lines, portions_phrase, tool_call
from .writes import KEEP_SECONDS, Write, Writes

#: How often a running URL import reports progress; clients drop a call that stays silent too long.
PROGRESS_INTERVAL_SECONDS = 3.0
_DEFAULT_PORTS = {"http": "80", "https": "443"}
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})?")  # a bare % is a literal one, sent as %25
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")

# implements: api-client.ERRORS.5
RECIPE_NOT_FOUND = (
    "no saved recipe has this ID (it may have been deleted); find the right ID with read target=recipes "
    "(add query to search by title)"
)
RECIPE_FORBIDDEN = (
    "this account does not own the recipe, so it cannot change it; to keep an "
    "edited version, save a copy with save_recipe source=prepared"
)
RECIPE_DELETE_FORBIDDEN = (
    "this account does not own the recipe, so it cannot delete it (only its owner can) and "
    "nothing was deleted; tell the person so, and do not retry"
)
DRAFT_NOT_FOUND = (
    "no import draft has this ID (a draft is gone once saved); import the page again with "
    "save_recipe source=url for a new draft_id, or look for an already saved copy with read target=recipes"
)
IMPORT_FAILED = (
    "Cooked found no recipe on that page; copy the recipe text from the page and save it with "
    "save_recipe source=raw_text (title, text), or check it first with preview_recipe_text"
)
PREVIEW_NOTICE = "Preview only: NOTHING was saved."
DRAFT_NOTICE = "It is NOT saved. Nothing is saved until you save it with save_recipe source=draft."
IMPORTING = "Cooked is importing the page (this can take up to a minute)"
DELETE_QUESTION = "Delete {name} from Cooked? This cannot be undone."
REPLACE_QUESTION = "Replace the whole text of {name} in Cooked? Its current text and portions are lost."
#: Characters of an untitled recipe's text that name it in a question.
FIRST_WORDS_CHARS = 40
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
#: What each source of save_recipe says it did.
_SAVED = {
    "raw_text": "Saved the text as recipe {recipe_id} ({portions}); Cooked formatted it first.",
    "prepared": "Saved recipe {recipe_id} ({portions}).",
    "url": "Cooked imported the page and saved it as recipe {recipe_id}.",
    "draft": "Saved import draft {draft_id} as recipe {recipe_id} ({portions}).",
    "existing": "Updated recipe {recipe_id}: markdown and portions ({portions}) replaced.",
}
#: Where a recipe saved by a change whose answer was lost shows up.
NEWEST_RECIPES = f"{tool_call('read', target='recipes')} lists the newest recipes first"


class RecipeTools:
    """The recipe tools; ``CookedTools`` gives them the client, the kept outcomes and the settings."""

    _client: CookedClient
    _writes: Writes
    _writable: bool
    _import_answer_seconds: float

    # implements: recipes.READ.1, recipes.READ.2, recipes.READ.5
    async def read_recipes(
        self, args: tool.ReadRecipes | tool.ReadRecipe, call: ToolCall
    ) -> ToolResult[tool.ReadOutput]:
        """A read the agent receives is its look at recipe changes whose outcome is unknown (writes);
        so is a recipe read that finds the recipe gone, which is what a deletion looks like."""
        looked = partial(self._writes.looked, "recipes")
        if isinstance(args, tool.ReadRecipe):
            with cooked_errors({CookedNotFound: RECIPE_NOT_FOUND}):
                try:
                    recipe = await self._client.get_recipe(args.recipe_id)
                except CookedNotFound:
                    call.when_answered(looked)
                    raise
            result = recipe_result(recipe, self._writable)
        elif args.query is None:
            # implements: recipes.PAGINATION.1, recipes.PAGINATION.2
            # Tool page N is Cooked's page N with ``page-count`` L; a full page is the only sign of more.
            with cooked_errors():
                items = await self._client.list_recipes(args.page, args.limit)
            result = recipe_page(items, args.page, args.limit, None, more=len(items) == args.limit)
        else:
            # implements: recipes.PAGINATION.1, recipes.PAGINATION.3
            # Tool page N is results (N-1)*L+1 to N*L cut from Cooked's 20-result pages, so following
            # ``next_page`` with one ``limit`` sees each result once; a short Cooked page ends the results.
            page, limit = args.page, args.limit
            before, skip = divmod((page - 1) * limit, SEARCH_PAGE_SIZE)  # Cooked pages before the window
            fetched: list[CookedRecipeSummary] = []
            ended = False
            with cooked_errors():
                while not ended and len(fetched) < skip + limit:
                    cooked_page = before + 1 + len(fetched) // SEARCH_PAGE_SIZE
                    items = await self._client.search_recipes(args.query, cooked_page)
                    fetched.extend(items)
                    ended = len(items) < SEARCH_PAGE_SIZE
            # More exist for sure when the Cooked pages read go on past the window; they may when
            # the window ends exactly where a full Cooked page does.
            more = len(fetched) > skip + limit or not ended
            result = recipe_page(fetched[skip : skip + limit], page, limit, args.query, more)
        call.when_answered(looked)
        return result

    # implements: recipes.PREVIEW_TEXT.1, recipes.PREVIEW_TEXT.2, recipes.PREVIEW_TEXT.3, recipes.PREVIEW_TEXT.4
    async def preview_recipe_text(
        self, args: tool.PreviewRecipeTextArguments, call: ToolCall
    ) -> ToolResult[tool.PreviewRecipeTextOutput]:
        with cooked_errors():
            preview = await self._client.preview_recipe(args.title, args.text)
        fields = {"title": "<title>", "markdown": "<markdown>", "portions": preview.portions}
        next_step = (
            f"To keep it: {tool_call('save_recipe', source='prepared', **fields)} with the title and markdown "
            "above (edit them first if needed), or save_recipe source=raw_text with the original title and text."
            if self._writable
            else None
        )
        output = tool.PreviewRecipeTextOutput(
            markdown=preview.description,
            **preview.model_dump(exclude={"description"}),
            saved=False,
            notice=PREVIEW_NOTICE,
            next_step=next_step,
            data_from_cooked=["title", "markdown"],
        )
        head = f"{PREVIEW_NOTICE} Cooked made this of the text ({portions_phrase(preview.portions)}):"
        return ToolResult(lines(head, _fenced(preview), next_step), output)

    # implements: recipes.SAVE.10
    async def save_recipe(
        self, args: tool.SaveRecipeArguments, call: ToolCall
    ) -> ToolResult[tool.SaveRecipeOutput]:
        """Every save is a change made once (writes.py): an identical call gets its kept outcome,
        and for a URL import an identical call is one naming the same page (``same_page``)."""
        keyed = args
        if isinstance(args, tool.SaveRecipeUrl):
            keyed = args.model_copy(update={"url": same_page(args.url)})
        write = Write.of(call, keyed, area="recipes", look=NEWEST_RECIPES)
        client, question = self._client, None
        change: Callable[[], Awaitable[ToolResult[tool.SaveRecipeOutput]]]
        hints: Hints
        match args:
            # implements: recipes.SAVE.1, recipes.SAVE.11
            case tool.SaveRecipeRawText():
                change = partial(self._save_raw_text, args.title, args.text)
            # implements: recipes.SAVE.2
            case tool.SaveRecipePrepared():
                save = partial(client.save_recipe, args.title, args.markdown, args.portions)
                change = partial(_saved, "prepared", save, args.portions)
            # implements: recipes.SAVE.3
            case tool.SaveRecipeUrl():
                # Ticks while this call waits (the import may outlive it: writes.py). A plain task, not a
                # task group (which would wrap a ToolError), cancelled unawaited so ours passes through.
                ticker = asyncio.create_task(_tick(call.report_progress))
                try:
                    return await self._writes.run(
                        replace(write, reported_again=True),
                        call,
                        partial(self._import_now, args.url),
                        answer_seconds=self._import_answer_seconds,
                        still_running=still_running,
                    )
                finally:
                    ticker.cancel()
            # implements: recipes.SAVE.7, recipes.SAFETY.1
            case tool.SaveRecipeDraft():
                write = replace(write, saves_draft=args.draft_id)
                save = partial(client.save_draft, args.draft_id, args.markdown, args.portions)
                hints = {CookedNotFound: DRAFT_NOT_FOUND}
                change = partial(_saved, "draft", save, args.portions, args.draft_id, hints=hints)
            # implements: recipes.SAVE.8, recipes.SAFETY.2
            case tool.SaveRecipeExisting():
                write = _about_recipe(write, args.recipe_id)
                question = partial(
                    self._recipe_question, args.recipe_id, REPLACE_QUESTION, "{name} was not changed"
                )
                update = partial(client.update_recipe, args.recipe_id, args.markdown, args.portions)
                hints = {CookedNotFound: RECIPE_NOT_FOUND, CookedForbidden: RECIPE_FORBIDDEN}
                change = partial(_saved, "existing", update, args.portions, hints=hints)
        return await self._writes.run(write, call, change, question=question)

    async def _save_raw_text(self, title: str, text: str) -> ToolResult[tool.SaveRecipeOutput]:
        """Preview then save exactly what the preview made; Cooked's title wins (as in
        preview_recipe_text), the agent's only when Cooked has none."""
        with cooked_errors():
            preview = await self._client.preview_recipe(title, text)
            recipe_id = await self._client.save_recipe(
                preview.title if preview.title is not None else title, preview.description, preview.portions
            )
        return saved("raw_text", recipe_id, preview.portions)

    # implements: recipes.SAVE.4, recipes.SAVE.6, recipes.SAVE.14, recipes.SAVE.16
    async def _import_now(self, url: str) -> ToolResult[tool.SaveRecipeOutput]:
        """Never saves a draft: a draft is saved only by an explicit source=draft call."""
        with cooked_errors({CookedUnprocessable: IMPORT_FAILED}):
            imported = await self._client.import_url(url)
            if imported.recipe_id is not None:
                return saved("url", imported.recipe_id)
            assert imported.extraction_id is not None  # ImportResult holds exactly one of the two
            draft = await self._client.get_draft(imported.extraction_id)
        return draft_result(draft)

    # implements: recipes.DELETE.1, recipes.DELETE.2, recipes.SAFETY.3
    async def delete_recipe(
        self, args: tool.DeleteRecipeArguments, call: ToolCall
    ) -> ToolResult[tool.DeleteRecipeOutput]:
        """Made once (writes.py); when it succeeds, every kept outcome naming the recipe is forgotten."""
        write = _about_recipe(Write.of(call, args, area="recipes", look=""), args.recipe_id)
        named: list[str] = []  # the recipe as its question named it, for the answer
        question = partial(
            self._recipe_question, args.recipe_id, DELETE_QUESTION, "{name} was not deleted", named
        )

        async def delete() -> ToolResult[tool.DeleteRecipeOutput]:
            with cooked_errors({CookedNotFound: RECIPE_NOT_FOUND, CookedForbidden: RECIPE_DELETE_FORBIDDEN}):
                deleted = await self._client.delete_recipe(args.recipe_id)
            text = (
                f"Deleted {named[-1] if named else f'recipe {deleted}'} from Cooked. This cannot be undone."
            )
            return ToolResult(text, tool.DeleteRecipeOutput(recipe_id=deleted, deleted=True))

        return await self._writes.run(replace(write, deletes=args.recipe_id), call, delete, question=question)

    # implements: extensions.CONFIRMATION.2, extensions.CONFIRMATION.3, extensions.CONFIRMATION.12
    async def _recipe_question(
        self, recipe_id: str, ask: str, unchanged: str, named: list[str] | None = None
    ) -> Question | None:
        """``ask`` and ``unchanged`` with ``{name}``: the recipe as Cooked has it now (its title and ID,
        or, untitled, its ID and first words), also added to ``named``. None when this account
        cannot change the recipe (Cooked refuses: nothing is lost)."""
        with cooked_errors({CookedNotFound: RECIPE_NOT_FOUND}):
            recipe = await self._client.get_recipe(recipe_id)
        if recipe.can_edit is False:
            return None
        shown_id = one_line(recipe.id, "?", MAX_NAME_CHARS)
        title = one_line(recipe.title, "", MAX_NAME_CHARS)
        name = f'the recipe "{title}" ({shown_id})' if title else f"the untitled recipe {shown_id}"
        texts = (text for text in recipe.description[:1000].splitlines() if text[:1] != "#")
        items = (_LIST_MARK.sub("", text) for text in texts)
        begins = one_line(", ".join(item for item in items if item.strip()), "")
        if len(begins) > FIRST_WORDS_CHARS:
            begins = begins[:FIRST_WORDS_CHARS].rsplit(" ", 1)[0].rstrip(",") + "…"
        if begins and not title:
            name += f' (it begins "{begins}")'
        if named is not None:
            named.append(name)
        return Question(ask.format(name=name), unchanged.format(name=name))


async def _saved(
    source: str,
    request: Callable[[], Awaitable[str]],
    portions: int | None,
    draft_id: str | None = None,
    hints: Hints | None = None,
) -> ToolResult[tool.SaveRecipeOutput]:
    """One save request, its errors with this source's next steps, and its answer."""
    with cooked_errors(hints):
        recipe_id = await request()
    return saved(source, recipe_id, portions, draft_id=draft_id)


# implements: recipes.READ.6, recipes.READ.6-1, recipes.READ.6-2, recipes.READ.7, recipes.READ.8
def recipe_result(recipe: CookedRecipe, writable: bool) -> ToolResult[tool.ReadOutput]:
    owner = f"; owner {one_line(recipe.owner, '?')}" if recipe.owner is not None else ""
    if recipe.can_edit is not None and writable:
        owner += "; this account can " + (
            "change or delete it"
            if recipe.can_edit
            else "NOT change or delete it (save an edited copy with source=prepared)"
        )
    # A recipe this account cannot edit gets no change or delete call: its header line already
    # says so and names the way out (an edited copy), and a suggested call would only get a 403.
    next_step = None
    if writable and recipe.can_edit is not False:
        arguments = {"recipe_id": recipe.id, "markdown": "<markdown>", "portions": "<portions or null>"}
        next_step = (
            f"To change it: {tool_call('save_recipe', source='existing', **arguments)} (send the whole new markdown). "
            f"To delete it: {tool_call('delete_recipe', recipe_id=recipe.id)}."
        )
    output = tool.Recipe(markdown=recipe.description, **recipe.model_dump(exclude={"description"}))
    data = ["recipe.title", "recipe.markdown", "recipe.owner"]
    read = tool.ReadOutput(target="recipe", recipe=output, next_step=next_step, data_from_cooked=data)
    head = f"Recipe {recipe.id}: {portions_phrase(recipe.portions)}{owner}."
    return ToolResult(lines(head, _fenced(recipe), next_step), read)


# implements: recipes.READ.3, recipes.PAGINATION.6, api-client.LIMITS.2, api-client.LIMITS.3
def recipe_page(
    items: Sequence[CookedRecipeSummary], page: int, limit: int, query: str | None, more: bool
) -> ToolResult[tool.ReadOutput]:
    """Page N with limit L holds results (N-1)*L+1 to N*L, so the continuation is always page N+1;
    ``more``: it may hold results. Nothing found is said plainly, so an agent does not retry."""
    quoted = json.dumps(query, ensure_ascii=False)
    searched = {} if query is None else {"query": query}
    next_step = None
    if items:
        next_step = lines(
            f"More may exist on the next page: "
            f"{tool_call('read', target='recipes', **searched, page=page + 1, limit=limit)} "
            f"(keep limit={limit}: pages count in steps of limit)."
            if more
            else None,
            f"Open one with {tool_call('read', target='recipe', recipe_id='<recipe ID>')}.",
        )
        what = "Saved recipes, newest first" if query is None else f"Saved recipes matching {quoted}"
        listing = "\n".join(f"{item.id}  {one_line(item.title, '(untitled)')}" for item in items)
        text = lines(
            f"{what}, page {page}: {len(items)} shown (recipe ID, then title).",
            fence(listing, "Recipe titles"),
            None if more else "There are no further pages.",
            next_step,
        )
    elif query is None and page == 1:
        text = "There are no saved recipes in this Cooked account."
    elif query is None:
        text = f"Page {page} (limit={limit}) is empty: the saved recipes end before it. Use a lower page."
    elif page == 1:
        text = f"Nothing matched: no saved recipe matches {quoted}. Try other words or list all with read target=recipes."
    else:
        text = f"Nothing more matched {quoted}: page {page} is empty; earlier pages hold all."
    output = tool.ReadOutput(
        target="recipes",
        recipes=[tool.RecipeSummary(id=item.id, title=item.title) for item in items],
        query=query,
        page=page,
        limit=limit,
        more_available=more,
        next_page=page + 1 if more else None,
        next_step=next_step,
        data_from_cooked=["recipes[].title"] if items else None,
    )
    return ToolResult(text, output)


# implements: recipes.SAVE.9, tools.RESPONSES.2
def saved(
    source: str, recipe_id: str, portions: int | None = None, *, draft_id: str | None = None
) -> ToolResult[tool.SaveRecipeOutput]:
    """Every save names the recipe ID, in text and output, with the natural next call."""
    what = _SAVED[source].format(recipe_id=recipe_id, portions=portions_phrase(portions), draft_id=draft_id)
    next_step = f"Read it with {tool_call('read', target='recipe', recipe_id=recipe_id)}."
    output = tool.SaveRecipeOutput(source=source, saved=True, recipe_id=recipe_id, next_step=next_step)
    return ToolResult(f"{what} {next_step}", output)


# implements: recipes.SAVE.5, recipes.SAVE.12, recipes.SAVE.15
def draft_result(draft: CookedDraft) -> ToolResult[tool.SaveRecipeOutput]:
    portions = draft.portions if draft.portions is not None else "<portions or null>"
    save = tool_call(
        "save_recipe", source="draft", draft_id=draft.id, markdown="<reviewed markdown>", portions=portions
    )
    next_step = f"Review it (fix the markdown and portions if needed), then save it with {save}."
    head = f"Cooked made an import DRAFT {draft.id} from the page ({portions_phrase(draft.portions)}). "
    output = tool.SaveRecipeOutput(
        source="url",
        saved=False,
        draft=tool.RecipeDraft(
            draft_id=draft.id, title=draft.title, markdown=draft.description, portions=draft.portions
        ),
        notice=DRAFT_NOTICE,
        next_step=next_step,
        data_from_cooked=["draft.title", "draft.markdown"],
    )
    return ToolResult(lines(head + DRAFT_NOTICE, _fenced(draft), next_step), output)


def still_running(age: float | None) -> ToolResult[tool.SaveRecipeOutput]:
    """``age``: how long ago an earlier call started the import (None: this call's). The text says
    the promise holds for writes.KEEP_SECONDS, in this process only."""
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
        f"Until {KEEP_SECONDS / 60:.0f} minutes after the import ends, calling save_recipe with this same URL starts "
        "no second import while this server process runs: it reports this import's outcome (the saved "
        "recipe, the draft to review, or its error; or, if Cooked's answer to it is lost, how to check "
        "whether it saved and import again on purpose). If the server is stopped or restarted meanwhile, "
        "it forgets the import: look with read target=recipes before importing the page again."
    )
    output = tool.SaveRecipeOutput(
        source="url", saved=False, import_running=True, notice=notice, next_step=next_step
    )
    return ToolResult(f"{notice} {next_step}", output)


def _fenced(recipe: CookedRecipe | CookedDraft | Preview) -> str:
    return lines(fence(recipe.title or "(no title)", "Title"), fence(recipe.description, "Recipe markdown"))


def _about_recipe(write: Write, recipe_id: str) -> Write:
    """A change to one recipe: looked at by reading it, forgotten when it is deleted."""
    look = (
        f"{tool_call('read', target='recipe', recipe_id=recipe_id)} shows the recipe as it is now "
        "(not found: it is deleted)"
    )
    return replace(write, look=look, recipe_ids=frozenset({recipe_id}))


def same_page(url: str) -> str:
    """``url`` as every spelling of the same page is (RFC 3986 equivalences: case, default port,
    fragment, unreserved escapes, empty path and query); any other difference is another page."""
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
        if escape[1] is None:  # so that no decoded character can make a new escape with it
            return "%25"
        char = chr(int(escape[1], 16))
        return char if char in _UNRESERVED else f"%{escape[1].upper()}"

    return _ESCAPE.sub(one, text)


async def _tick(report: ProgressReporter) -> None:
    """Report progress every few seconds until cancelled. Progress is a courtesy: a client that
    cannot take it ends the ticks, never the import."""
    elapsed = 0.0
    with suppress(Exception):
        while True:
            await report(elapsed, None, f"{IMPORTING}; {elapsed:.0f} s so far")
            await asyncio.sleep(PROGRESS_INTERVAL_SECONDS)
            elapsed += PROGRESS_INTERVAL_SECONDS
