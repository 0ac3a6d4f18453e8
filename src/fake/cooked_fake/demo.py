"""``make demo``: the real cooked-mcp, driven by an MCP client, against the fake Cooked.

For someone without a Cooked account: it starts the fake with its seed data,
spawns ``cooked-mcp`` over stdio exactly as a desktop client would, walks an
agent's journey through all five tools and prints what the agent saw: every answer whole,
except the middle of a long recipe body, because the hints at the end of an answer (what to
call next) are the part worth seeing. One step goes wrong on purpose, as it would for a real
agent, to show an error it can act on and the call that recovers. The client can ask its person
(MCP elicitation): cooked-mcp asks before each change that loses data, and the person says no
to the first deletion, then yes when the agent is asked to delete once more.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

from . import SEED_LOGIN, SEED_PASSWORD, FakeCooked
from .variants import add_variant_option

#: A recipe body longer than this shows its first lines only; the rest of the answer is whole.
_BODY_LINES_SHOWN = 6
#: Cutting fewer lines than this saves nothing and reads badly ("1 more line"): show them.
_MIN_LINES_CUT = 3
#: Where a recipe body starts in an answer (the fence follows this line).
_BODY_HEADING = "Recipe markdown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cooked-demo", description="Drive cooked-mcp against the fake.")
    add_variant_option(parser)
    variants = parser.parse_args(argv).variant
    return anyio.run(_demo, variants)


async def _demo(variants: list[str]) -> int:
    with FakeCooked(variants=variants) as fake, tempfile.TemporaryDirectory() as home:
        print(f"Fake Cooked serving its seed data at {fake.base_url} (login {SEED_LOGIN}).")
        if fake.variants:
            print(f"It answers in the contract variants: {', '.join(sorted(fake.variants))}.")
        print("Starting cooked-mcp over stdio, as Claude Desktop would, and acting as the agent.\n")
        params = StdioServerParameters(command=_cooked_mcp(), env=_environment(fake.base_url, Path(home)))
        async with Client(params, read_timeout_seconds=60, elicitation_callback=_Person()) as client:
            info = client.server_info
            tools = (await client.list_tools()).tools
            prompts = (await client.list_prompts()).prompts
            print(
                f"Connected to MCP server {info.name if info else '?'}; tools: {', '.join(t.name for t in tools)}; "
                f"prompts: {', '.join(p.name for p in prompts)}\n"
            )
            journey = _Journey(client)
            try:
                await journey.run()
            except _StepFailed as exc:
                print(f"The demo stopped: {exc} failed, and the steps after it need its result.")
        logins = fake.login_count
        print(
            f"Cooked received {len(fake.requests)} requests, {logins} of them login{'s' if logins != 1 else ''}."
        )
        return 1 if journey.failures else 0


class _StepFailed(Exception):
    pass


class _Person:
    """The person behind the client: shown each question cooked-mcp asks, says no to the first
    deletion and yes to everything else."""

    def __init__(self) -> None:
        self.declined = False

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        no = not self.declined and params.message.startswith("Delete the recipe")
        self.declined = self.declined or no
        print(
            f"  ? The client asks the person: {params.message}\n    The person answers: {'no' if no else 'yes'}"
        )
        return types.ElicitResult(action="decline" if no else "accept", content=None if no else {})


class _Journey:
    """The calls an agent would make, each using IDs it found in an earlier answer."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.failures = 0

    async def run(self) -> None:
        recipes = await self.call("read", target="recipes", limit=5)
        await self.call("read", target="recipes", query="soup", limit=3)
        first = recipes["recipes"][0]["id"]
        chili = (await self.call("read", target="recipe", recipe_id=first))["recipe"]
        if chili.get("can_edit") is False:
            await self._edit_someone_elses_recipe(first, chili)
        saved = await self.call(
            "save_recipe",
            source="raw_text",
            title="Weeknight Dal",
            text="1 cup red lentils, 1 onion, 2 cloves garlic, 1 tsp cumin. Simmer lentils 20 min, fry the rest, stir in.",
        )
        await self.call(
            "save_recipe",
            source="existing",
            recipe_id=saved["recipe_id"],
            markdown="## Dal\n- lentils",
            portions=4,
        )
        draft = await self.call("save_recipe", source="url", url="https://example.org/green-shakshuka-draft")
        if draft.get("draft"):
            d = draft["draft"]
            await self.call(
                "save_recipe",
                source="draft",
                draft_id=d["draft_id"],
                markdown=d["markdown"],
                portions=d.get("portions"),
            )
        await self.call(
            "change_shopping_list", action="add", ingredients="4 eggs\n1 can tomatoes", recipe_id=first
        )
        listing = await self.call("read", target="shopping_list")
        groups = [g["id"] for g in listing["product_groups"]]
        await self.call("change_shopping_list", action="add_selection", product_group_ids=groups[:2])
        await self.call("change_shopping_list", action="remove_selection", product_group_ids=groups[:1])
        empty = next(
            (a["id"] for a in listing["aisles"] if a["product_group_count"] == 0), listing["aisles"][0]["id"]
        )
        await self.call(
            "change_shopping_list", action="update_item", product_group_id=groups[-1], aisle_id=empty
        )
        await self.call("change_shopping_list", action="remove", product_group_ids=groups[-1:])
        await self.call("change_shopping_list", action="clear")
        print("# The agent deletes the recipe it saved; the person says no, and nothing is deleted.")
        await self.call("delete_recipe", expect_error=True, recipe_id=saved["recipe_id"])
        print("# The person then asks the agent to delete it after all, and says yes.")
        await self.call("delete_recipe", recipe_id=saved["recipe_id"])

    async def _edit_someone_elses_recipe(self, recipe_id: str, recipe: dict[str, Any]) -> None:
        """The recoverable error: an agent that ignores the read's "cannot change" edits a recipe shared
        with this account, Cooked refuses, and the error says what to do instead, which it then does."""
        markdown = f"{recipe['markdown']}\n- 1 tsp smoked paprika"
        print(
            "# The agent edits a recipe another account owns anyway (the read said it cannot);\n"
            "# Cooked refuses, and the answer says what to do instead."
        )
        await self.call(
            "save_recipe",
            expect_error=True,
            source="existing",
            recipe_id=recipe_id,
            markdown=markdown,
            portions=recipe.get("portions"),
        )
        await self.call(
            "save_recipe",
            source="prepared",
            title=f"{recipe['title']} (my copy)",
            markdown=markdown,
            portions=recipe.get("portions"),
        )

    async def call(self, tool: str, *, expect_error: bool = False, **arguments: Any) -> dict[str, Any]:
        shown = ", ".join(f"{k}={_short(v)}" for k, v in arguments.items())
        print(f"> {tool}({shown})")
        result = await self.client.call_tool(tool, arguments)
        text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
        for line in shorten_recipe_bodies(text.splitlines()):
            print(f"  {line}")
        print()
        if result.is_error != expect_error:
            self.failures += 1
            raise _StepFailed(tool)
        return dict(result.structured_content or {})


def shorten_recipe_bodies(lines: list[str]) -> list[str]:
    """The answer with each long recipe body cut to its first lines; nothing else is ever cut."""
    shown: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        shown.append(line)
        index += 1
        if not line.startswith(_BODY_HEADING) or index >= len(lines) or not lines[index].startswith("```"):
            continue
        shown.append(lines[index])  # the opening fence
        index += 1
        end = next((i for i in range(index, len(lines)) if lines[i].startswith("```")), len(lines))
        body = lines[index:end]
        if len(body) - _BODY_LINES_SHOWN >= _MIN_LINES_CUT:
            left_out = len(body) - _BODY_LINES_SHOWN
            body = [*body[:_BODY_LINES_SHOWN], f"… ({left_out} lines of this recipe left out by the demo)"]
        shown.extend(body)
        index = end
    return shown


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 50 else text[:47] + "…"


def _cooked_mcp() -> str:
    return str(Path(sys.executable).parent / "cooked-mcp")


def _environment(base_url: str, home: Path) -> dict[str, str]:
    """Only what the demo needs: nothing from the user's own configuration."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "COOKED_BASE_URL": base_url,
        "COOKED_LOGIN_USERNAME": SEED_LOGIN,
        "COOKED_LOGIN_PASSWORD": SEED_PASSWORD,
    }


if __name__ == "__main__":
    sys.exit(main())
