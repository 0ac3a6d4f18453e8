"""An untitled recipe is named by its first words: empty list items add no empty entry."""

from __future__ import annotations

import pytest
from confirm_support import Person
from mcp import Client
from sessions import client_for

from cooked_fake import UNTITLED_RECIPE_ID, FakeCooked
from cooked_mcp.app import build_server

pytestmark = pytest.mark.anyio


@pytest.mark.req("extensions.CONFIRMATION.3")
async def test_an_empty_list_item_adds_no_empty_entry_to_the_first_words(fake: FakeCooked) -> None:
    fake.state.recipes[UNTITLED_RECIPE_ID].description = "- \n- 2 slices bread\n* \n- 1 tbsp butter\n"
    person = Person("accept")
    cooked = client_for(fake)
    async with cooked, Client(build_server(cooked), elicitation_callback=person) as client:
        await client.call_tool("delete_recipe", {"recipe_id": UNTITLED_RECIPE_ID})
    assert '(it begins "2 slices bread, 1 tbsp butter")' in person.questions[0], person.questions[0]
