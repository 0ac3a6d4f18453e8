"""Section 5: the server's resident memory before and after thousands of tool calls.

The calls go through the minimal client (lean.py): the server does the same work for
either client, and the SDK client's own cost would only make the section slower.
"""

from __future__ import annotations

from typing import Any

from .context import Context
from .lean import LeanStdioClient, lean_stdio
from .procs import rss_kib
from .workloads import READ_RECIPE

SECTION = "memory"
MAX_GROWTH_PERCENT = 5.0


async def _sample(ctx: Context, server: LeanStdioClient) -> tuple[int, int, list[dict[str, int]]]:
    """RSS after start-up, after the warm-up calls, and every ``memory_sample_every`` calls after."""
    plan = ctx.plan
    call = READ_RECIPE.mcp_call(server)
    after_start = rss_kib(server.pid)
    for _ in range(plan.memory_warmup):
        await call()
    baseline = rss_kib(server.pid)
    samples: list[dict[str, int]] = [{"calls": 0, "rss_kib": baseline}]
    for done in range(1, plan.memory_calls + 1):
        await call()
        if done % plan.memory_sample_every == 0 or done == plan.memory_calls:
            samples.append({"calls": done, "rss_kib": rss_kib(server.pid)})
    return after_start, baseline, samples


async def run(ctx: Context) -> None:
    plan = ctx.plan
    print(
        f"memory: VmRSS of cooked-mcp (stdio) after {plan.memory_warmup} warm-up calls, "
        f"then every {plan.memory_sample_every} of {plan.memory_calls} calls",
        flush=True,
    )
    ctx.fake.reset()
    with ctx.errlog("cooked-mcp-stdio") as errlog:
        async with lean_stdio(ctx.env(), errlog) as server:
            after_start, baseline, samples = await _sample(ctx, server)
    final = samples[-1]["rss_kib"]
    growth = (final - baseline) / baseline * 100
    data: dict[str, Any] = {
        "call": READ_RECIPE.name,
        "transport": "stdio",
        "fake_delay_s": 0.0,
        "rss_after_start_kib": after_start,
        "warmup_calls": plan.memory_warmup,
        "rss_after_warmup_kib": baseline,
        "samples": samples,
        "rss_final_kib": final,
        "growth_percent": round(growth, 2),
        "note": (
            f"the baseline is taken after {plan.memory_warmup} warm-up calls, so lazy imports, the "
            "Cooked login and first-call caches are in it; growth is measured from there"
        ),
    }
    ctx.results.sections[SECTION] = data
    print("  " + ", ".join(f"{s['calls']}: {s['rss_kib'] / 1024:.1f} MiB" for s in samples), flush=True)
    ctx.results.check(
        SECTION,
        f"RSS growth over {plan.memory_calls} tool calls (after {plan.memory_warmup} warm-up calls)",
        f"< {MAX_GROWTH_PERCENT:g} %",
        f"{growth:+.2f} % ({baseline / 1024:.1f} → {final / 1024:.1f} MiB)",
        growth < MAX_GROWTH_PERCENT,
    )
