"""Section 3: Cooked requests per tool call, against the least the Cooked contract allows.

Steady state: one long-lived server, already logged in. First call: a freshly started
server's first tool call, which must add exactly one login. Every call above the minimum
is a failure; so is a call that fails (it would make fewer requests for the wrong reason).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from .clients import McpClient, connect_stdio, result_text, stdio_params
from .context import Context
from .fake import RemoteFake
from .servers import cooked_stdio

SECTION = "requests_per_call"
LOGIN = ("POST", "/api/public/login")
SAVED_URL = "https://example.org/recipes/bench-saved-at-once"
DRAFT_URL = "https://example.org/recipes/bench-draft"
MARKDOWN = "## Ingredients\n- 2 eggs\n\n## Steps\n1. Scramble the eggs"
WARM_UP = ("read", {"target": "recipe", "recipe_id": "r-0001"})
#: Fresh servers starting at once for the first-call counts (start-up is CPU-bound; 2 cores).
CONCURRENT_STARTS = 4


@dataclass(frozen=True)
class Scenario:
    name: str
    tool: str
    arguments: Mapping[str, Any]
    minimum: int  # Cooked requests in the steady state; the first call adds one login
    setup: Callable[[RemoteFake], None] = field(default=lambda fake: None)


def _shop(action: str, **arguments: Any) -> dict[str, Any]:
    return {"action": action, **arguments}


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("read recipes (list)", "read", {"target": "recipes"}, 1),
    Scenario("read recipes (search)", "read", {"target": "recipes", "query": "soup"}, 1),
    Scenario("read recipe", "read", {"target": "recipe", "recipe_id": "r-0001"}, 1),
    Scenario("read shopping_list", "read", {"target": "shopping_list"}, 1),
    Scenario(
        "preview_recipe_text", "preview_recipe_text", {"title": "Eggs", "text": "2 eggs\nScramble them."}, 1
    ),
    Scenario(
        "save_recipe raw_text",
        "save_recipe",
        {"source": "raw_text", "title": "Eggs", "text": "2 eggs\nScramble them."},
        2,
    ),
    Scenario(
        "save_recipe prepared",
        "save_recipe",
        {"source": "prepared", "title": "Eggs", "markdown": MARKDOWN, "portions": 1},
        1,
    ),
    Scenario(
        "save_recipe url → saved",
        "save_recipe",
        {"source": "url", "url": SAVED_URL},
        1,
        lambda fake: fake.set_import_result(SAVED_URL, "saved"),
    ),
    Scenario(
        "save_recipe url → draft",
        "save_recipe",
        {"source": "url", "url": DRAFT_URL},
        2,
        lambda fake: fake.set_import_result(DRAFT_URL, "draft"),
    ),
    Scenario(
        "save_recipe draft",
        "save_recipe",
        {"source": "draft", "draft_id": "x-0001", "markdown": MARKDOWN, "portions": 2},
        1,
    ),
    Scenario(
        "save_recipe existing",
        "save_recipe",
        {"source": "existing", "recipe_id": "r-0001", "markdown": MARKDOWN, "portions": 2},
        1,
    ),
    Scenario("delete_recipe", "delete_recipe", {"recipe_id": "r-0005"}, 1),
    Scenario(
        "change_shopping_list add", "change_shopping_list", _shop("add", ingredients="4 eggs\n1 lemon"), 1
    ),
    Scenario(
        "change_shopping_list update_item (all fields)",
        "change_shopping_list",
        _shop(
            "update_item",
            product_group_id="pg-01",
            name="Tomatoes",
            quantity="2 cans",
            aisle_id="pantry",
            selected=True,
        ),
        1,
    ),
    Scenario(
        "change_shopping_list update_item (selected omitted)",
        "change_shopping_list",
        _shop("update_item", product_group_id="pg-01", name="Tomatoes", quantity="2 cans", aisle_id="pantry"),
        2,
    ),
    Scenario(
        "change_shopping_list replace_selection",
        "change_shopping_list",
        _shop("replace_selection", product_group_ids=["pg-01", "pg-03"]),
        1,
    ),
    Scenario(
        "change_shopping_list add_selection",
        "change_shopping_list",
        _shop("add_selection", product_group_ids=["pg-01"]),
        2,
    ),
    Scenario(
        "change_shopping_list remove_selection",
        "change_shopping_list",
        _shop("remove_selection", product_group_ids=["pg-02"]),
        2,
    ),
    Scenario(
        "change_shopping_list remove", "change_shopping_list", _shop("remove", product_group_ids=["pg-03"]), 1
    ),
    Scenario("change_shopping_list clear", "change_shopping_list", _shop("clear"), 1),
)


@dataclass(frozen=True)
class Count:
    requests: list[str]  # "METHOD /path -> status", in arrival order
    logins: int
    error: str | None  # the tool error text, when the call failed

    @property
    def total(self) -> int:
        return len(self.requests)


async def _count(client: McpClient, fake: RemoteFake, scenario: Scenario) -> Count:
    fake.clear_requests()
    result = await client.client.call_tool(scenario.tool, dict(scenario.arguments))
    seen = fake.requests
    logins = sum(1 for r in seen if (r.method, r.path) == LOGIN)
    error = result_text(result)[:300] if result.is_error else None
    return Count([str(r) for r in seen], logins, error)


async def _steady(ctx: Context) -> dict[str, Count]:
    counts: dict[str, Count] = {}
    async with cooked_stdio(ctx) as server:
        for scenario in SCENARIOS:
            ctx.fake.reset()  # seed data back; this also ends the server's Cooked session...
            scenario.setup(ctx.fake)
            await server.client.call(*WARM_UP)  # ...so log in again before counting
            counts[scenario.name] = await _count(server.client, ctx.fake, scenario)
    return counts


@contextlib.asynccontextmanager
async def _fresh_servers(ctx: Context, count: int) -> AsyncIterator[list[McpClient]]:
    """``count`` started servers that have not called Cooked yet (initialize and tools/list do not).

    Starting them one after another was most of this section's time; they start a few at
    a time instead, and stay up until the caller is done with all of them.
    """
    clients: list[McpClient] = []
    started = anyio.Event()
    finished = anyio.Event()
    limiter = anyio.CapacityLimiter(CONCURRENT_STARTS)

    async def hold(errlog: Any) -> None:
        async with contextlib.AsyncExitStack() as stack:
            async with limiter:
                params = stdio_params(ctx.env())
                clients.append(await stack.enter_async_context(connect_stdio(params, errlog, ctx.plan.mode)))
            if len(clients) == count:
                started.set()
            await finished.wait()

    with ctx.errlog("cooked-mcp-stdio") as errlog:
        async with anyio.create_task_group() as tasks:
            for _ in range(count):
                tasks.start_soon(hold, errlog)
            await started.wait()
            try:
                yield clients
            finally:
                finished.set()


async def _first(ctx: Context) -> dict[str, Count]:
    """Each scenario on a server of its own, run one at a time so the fake's log is its alone."""
    counts: dict[str, Count] = {}
    async with _fresh_servers(ctx, len(SCENARIOS)) as clients:
        for scenario, client in zip(SCENARIOS, clients, strict=True):
            ctx.fake.reset()
            scenario.setup(ctx.fake)
            counts[scenario.name] = await _count(client, ctx.fake, scenario)
    return counts


def _judge(ctx: Context, scenario: Scenario, phase: str, count: Count, minimum: int, logins: int) -> bool:
    label = f"{scenario.name} ({phase})"
    if count.error is not None:
        ctx.results.fail(f"{SECTION}: {label} failed: {count.error}")
        return False
    if count.total > minimum:
        ctx.results.fail(
            f"{SECTION}: {label} made {count.total} Cooked requests, the minimum is {minimum}: "
            + "; ".join(count.requests)
        )
        return False
    if count.logins != logins:
        ctx.results.fail(f"{SECTION}: {label} logged in {count.logins} times, expected {logins}")
        return False
    return True


async def run(ctx: Context) -> None:
    print(f"Cooked requests per call: {len(SCENARIOS)} calls, steady state and first call", flush=True)
    steady = await _steady(ctx)
    first = await _first(ctx)
    rows: list[dict[str, Any]] = []
    above = 0
    for scenario in SCENARIOS:
        s, f = steady[scenario.name], first[scenario.name]
        ok_steady = _judge(ctx, scenario, "steady", s, scenario.minimum, 0)
        ok_first = _judge(ctx, scenario, "first call", f, scenario.minimum + 1, 1)
        above += (s.total > scenario.minimum) + (f.total > scenario.minimum + 1)
        rows.append(
            {
                "call": scenario.name,
                "minimum_steady": scenario.minimum,
                "steady": s.total,
                "steady_requests": s.requests,
                "steady_error": s.error,
                "minimum_first": scenario.minimum + 1,
                "first": f.total,
                "first_requests": f.requests,
                "first_error": f.error,
                "ok": ok_steady and ok_first,
            }
        )
        print(
            f"  {scenario.name:52} steady {s.total}/{scenario.minimum}  first {f.total}/{scenario.minimum + 1}"
            f"  {'ok' if ok_steady and ok_first else 'FAIL'}",
            flush=True,
        )
    ctx.results.sections[SECTION] = {"calls": rows}
    broken = sum(1 for row in rows if not row["ok"])
    ctx.results.check(
        SECTION,
        "tool calls above the contract's minimum of Cooked requests",
        "0",
        f"{above} of {2 * len(rows)} (calls failing or off in logins: {broken})",
        above == 0 and broken == 0,
    )
