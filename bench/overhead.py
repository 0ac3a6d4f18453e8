"""Section 2: what a tool call adds to the Cooked requests it makes, over stdio and over HTTP.

Each MCP call is timed back to back with the same Cooked requests made directly with
httpx from the benchmark process (A,B,A,B...), so both series see the same machine.
The bare SDK server's trivial tool, called the same way over the same transport, shows
how much of the difference is the MCP SDK itself (client and server) rather than cooked-mcp.

Every measurement is taken twice: through the SDK client, as the targets were set, and
through a minimal JSON-RPC client (lean.py), which shows the server's share alone.
"""

from __future__ import annotations

from typing import Any

from .clients import BASELINE_SERVER, DirectCooked
from .context import Context
from .lean import lean_http, lean_stdio
from .measure import Stats, interleaved, ms, timed
from .procs import PYTHON
from .servers import baseline_http, baseline_stdio, cooked_http, cooked_stdio
from .workloads import WORKLOADS, ToolCaller, Workload

SECTION = "overhead"
#: Added milliseconds at p50 a tool call may cost, per transport.
LIMITS_MS = {"stdio": 2.0, "http": 4.0}
#: The clients every call is measured through, as the report names them.
SDK, LEAN = "SDK", "minimal"


async def _measure(
    ctx: Context, transport: str, client_kind: str, client: ToolCaller, cooked: DirectCooked
) -> list[dict[str, Any]]:
    plan = ctx.plan
    rows: list[dict[str, Any]] = []
    for workload in WORKLOADS:
        subject, floor = workload.mcp_call(client), workload.direct_call(cooked)
        for _ in range(plan.overhead_warmup):
            await subject()
            await floor()
        mcp_times, direct_times = await interleaved(subject, floor, plan.overhead_calls)
        rows.append(_row(transport, client_kind, workload, Stats.of(mcp_times), Stats.of(direct_times)))
    return rows


def _row(transport: str, client_kind: str, workload: Workload, mcp: Stats, direct: Stats) -> dict[str, Any]:
    row = {
        "transport": transport,
        "client": client_kind,
        "call": workload.name,
        "direct": workload.direct_name,
        "mcp": mcp.as_dict(),
        "direct_httpx": direct.as_dict(),
        "added_p50_ms": ms(mcp.p50 - direct.p50),
        "added_p99_ms": ms(mcp.p99 - direct.p99),
    }
    print(
        f"  {transport:5} {client_kind:7} {workload.name:42} p50 {mcp.p50:6.2f} ms vs {direct.p50:6.2f} ms direct "
        f"(+{mcp.p50 - direct.p50:.2f}), p99 {mcp.p99:6.2f} vs {direct.p99:6.2f} (+{mcp.p99 - direct.p99:.2f})",
        flush=True,
    )
    return row


async def _floor(ctx: Context, transport: str, client_kind: str, client: ToolCaller) -> dict[str, Any]:
    plan = ctx.plan

    async def echo() -> object:
        return await client.call("echo", {"text": "hi"})

    for _ in range(plan.overhead_warmup):
        await echo()
    stats = Stats.of([await timed(echo) for _ in range(plan.overhead_calls)])
    print(
        f"  {transport:5} {client_kind:7} {'bare SDK server, trivial tool':42} p50 {stats.p50:6.2f} ms, "
        f"p99 {stats.p99:6.2f} ms",
        flush=True,
    )
    return {
        "transport": transport,
        "client": client_kind,
        "call": "bare SDK server, trivial tool",
        **stats.as_dict(),
    }


async def _sdk_floors(ctx: Context) -> list[dict[str, Any]]:
    """The bare SDK server's trivial tool, no Cooked and no cooked-mcp: the SDK's own cost per call."""
    floors = []
    async with baseline_stdio(ctx) as client:
        floors.append(await _floor(ctx, "stdio", SDK, client))
    with ctx.errlog("baseline-stdio") as errlog:
        async with lean_stdio(ctx.env(), errlog, argv=(PYTHON, BASELINE_SERVER)) as lean:
            floors.append(await _floor(ctx, "stdio", LEAN, lean))
    with baseline_http(ctx) as http:
        async with http.client(ctx.plan.mode) as client:
            floors.append(await _floor(ctx, "http", SDK, client))
        async with lean_http(http.url, http.token) as lean:
            floors.append(await _floor(ctx, "http", LEAN, lean))
    return floors


async def run(ctx: Context) -> None:
    plan = ctx.plan
    print(
        f"tool-call overhead: {plan.overhead_calls} calls each after {plan.overhead_warmup} warm-up, "
        "vs direct httpx",
        flush=True,
    )
    ctx.fake.reset()
    rows: list[dict[str, Any]] = []
    async with DirectCooked(ctx.fake.base_url) as cooked:
        async with cooked_stdio(ctx) as server:
            rows += await _measure(ctx, "stdio", SDK, server.client, cooked)
        with ctx.errlog("cooked-mcp-stdio") as errlog:
            async with lean_stdio(ctx.env(), errlog) as lean:
                rows += await _measure(ctx, "stdio", LEAN, lean, cooked)
        with cooked_http(ctx) as http:
            async with http.client(plan.mode) as client:
                rows += await _measure(ctx, "http", SDK, client, cooked)
            async with lean_http(http.url, http.token) as lean:
                rows += await _measure(ctx, "http", LEAN, lean, cooked)
    floors = await _sdk_floors(ctx)
    for (
        row
    ) in rows:  # what is left once the SDK's own per-call cost (same transport, same client) is taken off
        floor = next(f for f in floors if (f["transport"], f["client"]) == (row["transport"], row["client"]))
        row["added_p50_beyond_sdk_floor_ms"] = ms(row["added_p50_ms"] - floor["p50_ms"])
    ctx.results.sections[SECTION] = {"client_mode": plan.mode, "calls": rows, "sdk_floor": floors}
    for row in rows:
        limit = LIMITS_MS[row["transport"]]
        ctx.results.check(
            SECTION,
            f"added p50, {row['call']} over {row['transport']}, {row['client']} client",
            f"< {limit:g} ms",
            f"{row['added_p50_ms']:.2f} ms (p99 +{row['added_p99_ms']:.2f} ms; "
            f"{row['added_p50_beyond_sdk_floor_ms']:+.2f} ms beyond the bare SDK server's p50)",
            row["added_p50_ms"] < limit,
        )
