"""Section 6: the added milliseconds stay the same however slow Cooked answers.

The fake delays every answer by 0, 20 and 100 ms; each time ``read target=recipe`` over
stdio is timed against the same GET made directly, interleaved. Fewer calls are made when
Cooked is slow, so each delay costs about the same wall time.
"""

from __future__ import annotations

from typing import Any

from .clients import DirectCooked
from .context import Context
from .measure import Stats, interleaved, ms
from .servers import cooked_stdio
from .workloads import READ_RECIPE

SECTION = "cooked_latency"
MIN_CALLS = 20
MAX_CALLS = 300
#: The added p50 may vary by this much between delays and still count as flat.
FLAT_WITHIN_MS = 1.0


def _calls(budget_seconds: float, delay: float) -> int:
    per_pair = 2 * delay + 0.004  # one MCP call and one direct call, plus a few ms of overhead
    return max(MIN_CALLS, min(MAX_CALLS, int(budget_seconds / per_pair)))


async def run(ctx: Context) -> None:
    plan = ctx.plan
    print(
        f"overhead vs Cooked latency: fake delay {', '.join(f'{d:g}' for d in plan.sweep_delays)} s",
        flush=True,
    )
    ctx.fake.reset()
    rows: list[dict[str, Any]] = []
    try:
        async with DirectCooked(ctx.fake.base_url) as cooked, cooked_stdio(ctx) as server:
            subject, floor = READ_RECIPE.mcp_call(server.client), READ_RECIPE.direct_call(cooked)
            for delay in plan.sweep_delays:
                ctx.fake.delay = delay
                for _ in range(5):
                    await subject()
                    await floor()
                count = _calls(plan.sweep_budget_seconds, delay)
                mcp_times, direct_times = await interleaved(count, subject, floor)
                mcp, direct = Stats.of(mcp_times), Stats.of(direct_times)
                rows.append(
                    {
                        "fake_delay_s": delay,
                        "calls": count,
                        "mcp_p50_ms": ms(mcp.p50),
                        "direct_p50_ms": ms(direct.p50),
                        "added_p50_ms": ms(mcp.p50 - direct.p50),
                    }
                )
                print(
                    f"  delay {delay * 1000:5.0f} ms: {count:3} calls, p50 {mcp.p50:7.2f} ms vs {direct.p50:7.2f} ms "
                    f"direct, added {mcp.p50 - direct.p50:+.2f} ms",
                    flush=True,
                )
    finally:
        ctx.fake.delay = 0.0
    added = [row["added_p50_ms"] for row in rows]
    spread = max(added) - min(added)
    ctx.results.sections[SECTION] = {
        "call": READ_RECIPE.name,
        "transport": "stdio",
        "rows": rows,
        "added_p50_spread_ms": ms(spread),
    }
    ctx.results.check(
        SECTION,
        "added p50 independent of Cooked latency (spread over delays)",
        f"info (flat if ≤ {FLAT_WITHIN_MS:g} ms)",
        f"{spread:.2f} ms ({', '.join(f'{a:+.2f}' for a in added)} ms)",
        None,
    )
