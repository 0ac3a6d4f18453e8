"""The journeys as prompts, through the real cooked-mcp process over stdio in both protocol eras:
listed, rendered and completed against the fake Cooked; none offered read-only; missing and unknown
arguments refused by name. One real process per mode (read-only or not), shared by the cases: the
writable one in the legacy era, the read-only one in 2026-07-28, so each era and each mode meets
the real process; each mode's other era runs the same cases on the application the process would
build from the same environment, in this process (``IN_MEMORY``)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from confirm_support import ERAS
from mcp import Client
from mcp.shared.exceptions import MCPError
from servers import era_client, server_env

from cooked_fake import FakeCooked
from cooked_mcp_generated.prompts import JOURNEYS

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("era", ERAS)]
SHOP = types.PromptReference(type="ref/prompt", name="shop_for_recipe")
#: The tools each journey must name, in the order it uses them (first mention).
ORDER = {
    "import_recipe": ["save_recipe", "read", "preview_recipe_text"],
    "shop_for_recipe": ["read", "change_shopping_list"],
    "tidy_shopping_list": ["read", "change_shopping_list"],
    "plan_meals": ["read", "change_shopping_list"],
}
#: What each journey's text must tell the agent (its own requirement).
SAYS = {
    "import_recipe": ["DRAFT", "Save it only once I agree", "source=draft"],
    "shop_for_recipe": ["Leave out each ingredient the list already has"],
    "tidy_shopping_list": [
        "same product",
        "Propose each merge",
        "Change nothing before I answer",
        "action=remove",
    ],
    "plan_meals": ["day by day", "read target=recipes", "action=add"],
}
ARGUMENTS = {"import_recipe": {"url": "https://example.com/stew"}, "shop_for_recipe": {"recipe": "Shakshuka"}}


#: The (era, read-only) served in this process: a per-era variant of what the real process shows.
IN_MEMORY = {("2026-07-28", False), ("legacy", True)}


async def process(stack: AsyncExitStack, fake: FakeCooked, home: Path, era: str, read_only: bool) -> Client:
    """A connected client of a real process (or, for ``IN_MEMORY``, of the application the process
    would build from the same environment, in this process)."""
    environment = server_env(home, fake.base_url, **({"COOKED_MCP_READ_ONLY": "1"} if read_only else {}))
    return await era_client(stack, environment, era, in_memory=(era, read_only) in IN_MEMORY)


@pytest.fixture(scope="module")
async def processes(
    running_fake: FakeCooked, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[dict[tuple[str, bool], Client]]:
    """(era, read-only) -> a connected client."""
    home = tmp_path_factory.mktemp("prompts")
    async with AsyncExitStack() as stack:
        served: dict[tuple[str, bool], Client] = {}
        for era in ERAS:
            for read_only in (False, True):
                served[era, read_only] = await process(stack, running_fake, home, era, read_only)
        yield served


def first_mentions(text: str, tools: list[str]) -> list[str]:
    return sorted(tools, key=lambda tool: text.index(tool))


@pytest.mark.req(
    "extensions.PROMPTS.1",
    "extensions.PROMPTS.2",
    "extensions.PROMPTS.3",
    "extensions.PROMPTS.4",
    "extensions.PROMPTS.5",
    "extensions.PROMPTS.6",
    "extensions.PROMPTS.7",
    "tools.SURFACE.7",
)
async def test_every_journey_lists_and_renders_with_its_tools_in_order(
    processes: dict[tuple[str, bool], Client], era: str
) -> None:
    client = processes[era, False]
    if era == "legacy":  # a pinned 2026-07-28 client learns no capabilities without server/discover
        capabilities = client.server_capabilities
        assert capabilities.prompts is not None and capabilities.completions is not None
        assert capabilities.resources is None
    listed = (await client.list_prompts()).prompts
    assert [p.name for p in listed] == [
        "import_recipe",
        "shop_for_recipe",
        "tidy_shopping_list",
        "plan_meals",
    ]
    for prompt in listed:
        assert sum(1 for a in prompt.arguments or [] if a.required) <= 1
        result = await client.get_prompt(prompt.name, ARGUMENTS.get(prompt.name))
        [message] = result.messages
        assert message.role == "user" and isinstance(message.content, types.TextContent)
        text = message.content.text
        assert first_mentions(text, ORDER[prompt.name]) == ORDER[prompt.name], text
        assert "Ask me for anything missing" in text
        assert all(words in text for words in SAYS[prompt.name]), text
        for value in (ARGUMENTS.get(prompt.name) or {}).values():
            assert value in text
    planned = await client.get_prompt("plan_meals", {"days": "5"})
    assert "Days: 5" in planned.messages[0].content.text  # type: ignore[union-attr]
    assert "how many days" not in planned.messages[0].content.text  # type: ignore[union-attr]
    unplanned = await client.get_prompt("plan_meals")
    assert "ask me how many days" in unplanned.messages[0].content.text  # type: ignore[union-attr]


#: Words of the tools' calls that a person never says.
JARGON = re.compile(
    r"\b(?:read|save_recipe|change_shopping_list|preview_recipe_text|target|action|source)\b|="
)


@pytest.mark.req("extensions.PROMPTS.2")
async def test_the_persons_request_is_in_plain_words_and_the_steps_are_the_agents_apart_from_it(
    processes: dict[tuple[str, bool], Client], era: str
) -> None:
    """Before: "read target=recipes" and "action=add" inside the person's "Put the ingredients of one
    of my ..."."""
    client = processes[era, False]
    for journey in JOURNEYS:
        result = await client.get_prompt(journey.name, ARGUMENTS.get(journey.name))
        text = result.messages[0].content.text  # type: ignore[union-attr]
        request, steps = text.split("\n\nHow to do it (for the assistant, with the cooked-mcp tools):\n")
        assert request.startswith("Please ") and not JARGON.search(request), request
        assert steps.startswith("1. ") and JARGON.search(steps), steps


@pytest.mark.req("extensions.COMPLETION.1", "extensions.COMPLETION.2", "extensions.COMPLETION.3")
async def test_the_recipe_argument_completes_from_the_accounts_titles(
    processes: dict[tuple[str, bool], Client], fake: FakeCooked, era: str
) -> None:
    client = processes[era, False]
    fake.clear_requests()
    typed = await client.complete(SHOP, {"name": "recipe", "value": "sha"})
    again = await client.complete(SHOP, {"name": "recipe", "value": "Sha"})
    everything = await client.complete(SHOP, {"name": "recipe", "value": ""})
    other = await client.complete(
        types.PromptReference(type="ref/prompt", name="plan_meals"), {"name": "days", "value": "3"}
    )
    assert typed.completion.values == ["Shakshuka"] == again.completion.values
    assert 0 < len(everything.completion.values) <= 20
    assert other.completion.values == []
    searches = [r for r in fake.api_requests(renewals=False) if r.path == "/api/user/recipes/search"]
    assert len(searches) == 1  # "sha" and "Sha" are one typed value


@pytest.mark.req("extensions.PROMPTS.9")
async def test_a_missing_argument_or_unknown_prompt_is_refused_by_name(
    processes: dict[tuple[str, bool], Client], era: str
) -> None:
    client = processes[era, False]
    with pytest.raises(MCPError, match="needs the argument recipe"):
        await client.get_prompt("shop_for_recipe")
    with pytest.raises(MCPError, match=r"Unknown prompt 'cook'.*import_recipe"):
        await client.get_prompt("cook")
    with pytest.raises(MCPError, match="has no argument colour"):
        await client.get_prompt("tidy_shopping_list", {"colour": "red"})


@pytest.mark.req("extensions.PROMPTS.8")
async def test_read_only_mode_offers_no_prompt_that_would_change_the_account(
    processes: dict[tuple[str, bool], Client], era: str
) -> None:
    assert all(journey.changes_account for journey in JOURNEYS)
    client = processes[era, True]
    assert era != "legacy" or client.server_capabilities.prompts is None
    with anyio.fail_after(10), pytest.raises(MCPError):
        await client.list_prompts()
