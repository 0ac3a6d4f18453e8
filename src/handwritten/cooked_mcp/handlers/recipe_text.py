"""What the agent reads from the recipe tools. Cooked text is shown only fenced, and our sentences hold
at most a one-line bounded copy of a Cooked value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cooked_mcp_generated.models import (
    DeleteRecipeOutput,
    PreviewRecipeTextOutput,
    ReadOutput,
    Recipe,
    RecipeDraft,
    RecipeSummary,
    SaveRecipeOutput,
)
from cooked_mcp_runtime.results import ToolResult

from ..cooked.models import CookedDraft, CookedRecipe, CookedRecipeSummary, Preview
from ..text import one_line
from .confirmation import MAX_NAME_CHARS
from .formatting import fence, portions_phrase, tool_call
from .writes import KEEP_SECONDS

KEEP_MINUTES = f"{KEEP_SECONDS / 60:.0f}"

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
#: Where Cooked's (web-page) text sits in each kind of result: data_from_cooked in the output.
RECIPE_DATA = ["recipe.title", "recipe.markdown", "recipe.owner"]
DRAFT_DATA = ["draft.title", "draft.markdown"]
PREVIEW_DATA = ["title", "markdown"]
LIST_DATA = ["recipes[].title"]
PREVIEW_NOTICE = "Preview only: NOTHING was saved."
DRAFT_NOTICE = "It is NOT saved. Nothing is saved until you save it with save_recipe source=draft."

DELETE_QUESTION = "Delete {name} from Cooked? This cannot be undone."
REPLACE_QUESTION = "Replace the whole text of {name} in Cooked? Its current text and portions are lost."
#: Characters of an untitled recipe's text that name it in a question.
FIRST_WORDS_CHARS = 40
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
IMPORTING = "Cooked is importing the page (this can take up to a minute)"
#: What each source of save_recipe says it did.
_SAVED = {
    "raw_text": "Saved the text as recipe {recipe_id} ({portions}); Cooked formatted it first.",
    "prepared": "Saved recipe {recipe_id} ({portions}).",
    "url": "Cooked imported the page and saved it as recipe {recipe_id}.",
    "draft": "Saved import draft {draft_id} as recipe {recipe_id} ({portions}).",
    "existing": "Updated recipe {recipe_id}: markdown and portions ({portions}) replaced.",
}
IMPORT_FAILED = (
    "Cooked found no recipe on that page; copy the recipe text from the page and save it with "
    "save_recipe source=raw_text (title, text), or check it first with preview_recipe_text"
)


# implements: recipes.READ.6, recipes.READ.6-1, recipes.READ.6-2, recipes.READ.7, recipes.READ.8
def recipe_result(recipe: CookedRecipe, writable: bool) -> ToolResult[ReadOutput]:
    lines = [
        f"Recipe {recipe.id}: {portions_phrase(recipe.portions)}{_ownership(recipe, writable)}.",
        _fenced_recipe(recipe.title, recipe.description),
    ]
    # A recipe this account cannot edit gets no change or delete call: its header line already
    # says so and names the way out (an edited copy), and a suggested call would only get a 403.
    next_step = None
    if writable and recipe.can_edit is not False:
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


# implements: recipes.PREVIEW_TEXT.1, recipes.PREVIEW_TEXT.2, recipes.PREVIEW_TEXT.3, recipes.PREVIEW_TEXT.4
def preview_result(preview: Preview, writable: bool) -> ToolResult[PreviewRecipeTextOutput]:
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
    if writable:
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


def deleted_result(recipe_id: str, name: str | None = None) -> ToolResult[DeleteRecipeOutput]:
    """``name``: the recipe as its confirmation question named it, when one was asked."""
    deleted = f"Deleted {name}" if name else f"Deleted recipe {recipe_id}"
    text = f"{deleted} from Cooked. This cannot be undone."
    return ToolResult(text, DeleteRecipeOutput(recipe_id=recipe_id, deleted=True))


# implements: extensions.CONFIRMATION.3
def question_name(recipe: CookedRecipe) -> str:
    """The recipe as a confirmation question names it, as Cooked has it now: its title and ID, or,
    untitled, its ID and first words."""
    recipe_id = one_line(recipe.id, "?", MAX_NAME_CHARS)
    title = one_line(recipe.title, "", MAX_NAME_CHARS)
    if title:
        return f'the recipe "{title}" ({recipe_id})'
    lines = (_LIST_MARK.sub("", line) for line in recipe.description[:1000].splitlines() if line[:1] != "#")
    begins = one_line(", ".join(line for line in lines if line.strip()), "")
    if len(begins) > FIRST_WORDS_CHARS:
        begins = begins[:FIRST_WORDS_CHARS].rsplit(" ", 1)[0].rstrip(",") + "…"
    return (
        f'the untitled recipe {recipe_id} (it begins "{begins}")'
        if begins
        else f"the untitled recipe {recipe_id}"
    )


def recipe_look(recipe_id: str) -> str:
    """How the agent looks at a change to one recipe whose answer was lost."""
    return (
        f"{tool_call('read', target='recipe', recipe_id=recipe_id)} shows the recipe as it is now "
        "(not found: it is deleted)"
    )


# implements: recipes.READ.3, recipes.PAGINATION.6, api-client.LIMITS.2, api-client.LIMITS.3
@dataclass(frozen=True)
class RecipePage:
    """One page of a list or search: page N with limit L holds results (N-1)*L+1 to N*L, so the
    continuation is always ``page`` N+1 (``next_page``); ``more``: the next page may hold results.
    """

    items: Sequence[CookedRecipeSummary]
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
def saved(
    source: str, recipe_id: str, portions: int | None = None, *, draft_id: str | None = None
) -> ToolResult[SaveRecipeOutput]:
    """Every save names the recipe ID, in text and output, with the natural next call."""
    what = _SAVED[source].format(recipe_id=recipe_id, portions=portions_phrase(portions), draft_id=draft_id)
    next_step = f"Read it with {tool_call('read', target='recipe', recipe_id=recipe_id)}."
    output = SaveRecipeOutput(source=source, saved=True, recipe_id=recipe_id, next_step=next_step)
    return ToolResult(f"{what} {next_step}", output)


# implements: recipes.SAVE.5, recipes.SAVE.12, recipes.SAVE.15
def draft_result(draft: CookedDraft) -> ToolResult[SaveRecipeOutput]:
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


def still_running(age: float | None) -> ToolResult[SaveRecipeOutput]:
    """``age``: how long ago an earlier call started the import (None: this call's). The text says the
    promise holds for writes.KEEP_SECONDS, in this process only.
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


def _ownership(recipe: CookedRecipe, writable: bool) -> str:
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
