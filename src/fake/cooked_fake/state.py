"""The fake account's data and the rules that change it; callers hold ``lock`` for every read-modify-write."""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Any, Literal

from . import seed
from .exchange import ApiError
from .models import Aisle, Draft, ProductGroup, Recipe
from .text import DEFAULT_AISLE, aisle_for, parse_ingredient, title_from_url

ImportResult = Literal["saved", "draft", "fail"]


def not_found(what: str, ident: str) -> ApiError:
    return ApiError(404, "NOT_FOUND", f"No {what} with id {ident!r}")


class State:
    """One user's account; reset() refills this same object so references held by tests stay live."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.username = seed.SEED_USERNAME
        # The credentials login accepts (besides the username itself); tests may swap in canary values.
        self.login_name = seed.SEED_LOGIN
        self.password = seed.SEED_PASSWORD
        self.recipes: dict[str, Recipe] = {}
        self.drafts: dict[str, Draft] = {}
        self.aisles: list[Aisle] = []
        self.recipe_ids: list[str] = []
        self.import_results: dict[str, ImportResult] = {}
        self.saved_count = 0
        #: Every id a record has had since the last reset (the seed's included).
        self._used_ids: set[str] = set()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.recipes = seed.recipes()
            self.drafts = seed.drafts()
            self.aisles = seed.aisles()
            self.recipe_ids = seed.list_recipe_ids()
            self.import_results = {}
            self.saved_count = 0  # recipes saved through the API since the last reset
            self._used_ids = {*self.recipes, *self.drafts, *self.groups}

    def snapshot(self) -> bytes:
        """Every record of the account in every field and order, as canonical JSON bytes.

        The fake's own bookkeeping (``saved_count``, scripted import results) is left out: it is
        not part of what a user of the account could see.
        """
        with self.lock:
            account = {
                "username": self.username,
                "recipes": [dataclasses.asdict(r) for r in self.recipes.values()],
                "drafts": [dataclasses.asdict(d) for d in self.drafts.values()],
                "aisles": [dataclasses.asdict(a) for a in self.aisles],
                "recipe-ids": self.recipe_ids,
            }
            return json.dumps(account, sort_keys=True, ensure_ascii=False).encode()

    # --- lookups -------------------------------------------------------------------------------------

    @property
    def groups(self) -> dict[str, ProductGroup]:
        return {g.id: g for a in self.aisles for g in a.groups}

    @property
    def selected(self) -> set[str]:
        return {g.id for a in self.aisles for g in a.groups if g.selected}

    def aisle(self, aisle_id: str) -> Aisle | None:
        return next((a for a in self.aisles if a.id == aisle_id), None)

    def aisle_of(self, group_id: str) -> Aisle | None:
        return next((a for a in self.aisles if any(g.id == group_id for g in a.groups)), None)

    def _fresh_id(self, prefix: str, width: int, taken: set[str] | dict[str, Any]) -> str:
        """An id no record has had since the last reset: the id of a deleted recipe, a saved draft
        or a removed group keeps answering 404 after later saves rather than naming something
        new, which would hide a stale id in what is tested."""
        n = len(taken) + 1
        while (fresh := f"{prefix}{n:0{width}d}") in taken or fresh in self._used_ids:
            n += 1
        self._used_ids.add(fresh)
        return fresh

    # --- recipes -------------------------------------------------------------------------------------

    def recipe(self, recipe_id: str) -> Recipe:
        if recipe_id not in self.recipes:
            raise not_found("recipe", recipe_id)
        return self.recipes[recipe_id]

    def editable(self, recipe_id: str) -> Recipe:
        recipe = self.recipe(recipe_id)
        if recipe.owner != self.username:
            raise ApiError(403, "FORBIDDEN", f"Recipe {recipe_id!r} belongs to someone else")
        return recipe

    def newest_first(self) -> list[Recipe]:
        return list(reversed(self.recipes.values()))

    def add_recipe(
        self,
        title: str | None,
        description: str,
        portions: int | None,
        source_url: str | None = None,
        thumbnail_url: str | None = None,
    ) -> Recipe:
        """Imported recipes (with a source page) get pictures; hand-typed ones do not."""
        rid = self._fresh_id("r-", 4, self.recipes)
        pictures = (
            (thumbnail_url or f"{seed.CDN}/t/{rid}.jpg", f"{seed.CDN}/i/{rid}.jpg")
            if source_url
            else (None, None)
        )
        recipe = Recipe(rid, title, description, portions, self.username, source_url, *pictures)
        self.recipes[rid] = recipe
        self.saved_count += 1
        return recipe

    def import_url(self, url: str) -> dict[str, str]:
        lowered = url.lower()
        default: ImportResult = (
            "fail"
            if "fail" in lowered or "norecipe" in lowered
            else "draft"
            if "draft" in lowered
            else "saved"
        )
        result = self.import_results.get(url, default)
        if result == "fail":
            raise ApiError(422, "EXTRACTION_FAILED", f"Could not find a recipe at {url}")
        title = title_from_url(url)
        text = seed.markdown(["2 cups something tasty", "1 pinch salt"], [f"Make the {title.lower()}"])
        if result == "draft":
            xid = self._fresh_id("x-", 4, self.drafts)
            self.drafts[xid] = Draft(xid, title, text, 4, url, f"{seed.CDN}/t/{xid}.jpg")
            return {"extraction-id": xid}
        return {"recipe-id": self.add_recipe(title, text, 4, url).id}

    def draft(self, draft_id: str) -> Draft:
        if draft_id not in self.drafts:
            raise not_found("extraction draft", draft_id)
        return self.drafts[draft_id]

    def save_draft(self, draft_id: str, description: str, portions: int | None) -> Recipe:
        """Saving consumes the draft: afterwards GET /api/extract/{id} answers 404."""
        draft = self.draft(draft_id)
        del self.drafts[draft_id]
        return self.add_recipe(draft.title, description, portions, draft.source_url, draft.thumbnail_url)

    # --- shopping list -------------------------------------------------------------------------------

    def shopping_list(self) -> dict[str, Any]:
        return {"aisles": [a.wire() for a in self.aisles], "recipe-ids": list(self.recipe_ids)}

    def add_ingredients(self, text: str, recipe_id: str | None) -> int:
        if recipe_id is not None:
            if recipe_id not in self.recipes and recipe_id not in self.drafts:
                raise not_found("recipe or extraction draft", recipe_id)
            if recipe_id not in self.recipe_ids:
                self.recipe_ids.append(recipe_id)
        added = 0
        for line in text.splitlines():
            parsed = parse_ingredient(line)
            if parsed is None:
                continue
            added += 1
            quantity, name = parsed
            existing = next((g for g in self.groups.values() if g.name.casefold() == name.casefold()), None)
            if existing is None:
                gid = self._fresh_id("pg-", 2, self.groups)
                aisle = self.aisle(aisle_for(name)) or self.aisle(DEFAULT_AISLE)
                if aisle is None:
                    aisle = Aisle(DEFAULT_AISLE, "Other")
                    self.aisles.append(aisle)
                aisle.groups.append(ProductGroup(gid, name, quantity))
            elif quantity is not None:
                existing.quantity = (
                    quantity if existing.quantity is None else f"{existing.quantity} + {quantity}"
                )
        return added

    def replace_group(
        self, group_id: str, name: str, quantity: str | None, aisle_id: str, selected: bool
    ) -> None:
        current = self.aisle_of(group_id)
        if current is None:
            raise not_found("product group", group_id)
        target = self.aisle(aisle_id)
        if target is None:
            raise ApiError(400, "INVALID_REQUEST", f"Unknown aisle {aisle_id!r}")
        group = next(g for g in current.groups if g.id == group_id)
        group.name, group.quantity, group.selected = name, quantity, selected
        if target is not current:
            current.groups.remove(group)
            target.groups.append(group)

    def set_selected(self, ids: list[str]) -> list[str]:
        groups = self.groups
        unknown = [i for i in ids if i not in groups]
        if unknown:
            raise ApiError(400, "INVALID_REQUEST", f"Unknown product group ids: {', '.join(unknown)}")
        wanted = list(dict.fromkeys(ids))
        for gid, group in groups.items():
            group.selected = gid in wanted
        return wanted

    def remove_groups(self, ids: list[str]) -> list[str]:
        removed = [i for i in dict.fromkeys(ids) if i in self.groups]
        for aisle in self.aisles:
            aisle.groups = [g for g in aisle.groups if g.id not in removed]
        return removed

    def clear_list(self) -> None:
        """Aisles stay (an agent may still file groups into them); groups and the recipe links go."""
        for aisle in self.aisles:
            aisle.groups = []
        self.recipe_ids = []
