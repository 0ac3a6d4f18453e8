"""Section 4: many HTTP clients at once, and one login per session expiry under a burst.

Each client is its own MCP session (its own SDK client and HTTP connection). During each
window every client calls ``read target=recipe`` back to back until the window closes.
The server's CPU time per call comes from /proc, so it can be told apart from the load
generator's (which shares the machine's two cores).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from .clients import DirectCooked, McpClient
from .context import Context
from .measure import MS, Stats, ms
from .procs import cpu_seconds
from .servers import HttpServer, cooked_http
from .workloads import READ_RECIPE

SECTION = "concurrency"
WARM_UP_SECONDS = 0.5


async def _window(
    calls: list[Callable[[], Awaitable[object]]], seconds: float
) -> tuple[list[float], int, float]:
    """Every caller loops until the deadline: (latencies, errors, elapsed seconds)."""
    latencies: list[float] = []
    errors = 0
    start = time.perf_counter()
    deadline = start + seconds

    async def loop(call: Callable[[], Awaitable[object]]) -> None:
        nonlocal errors
        while time.perf_counter() < deadline:
            begun = time.perf_counter()
            try:
                await call()
            except Exception:
                errors += 1
                continue
            latencies.append(time.perf_counter() - begun)

    with anyio.fail_after(seconds + 60):
        async with anyio.create_task_group() as tg:
            for call in calls:
                tg.start_soon(loop, call)
    return latencies, errors, time.perf_counter() - start


async def _level(
    ctx: Context, http: HttpServer, clients: list[McpClient], cooked: DirectCooked
) -> dict[str, Any]:
    plan = ctx.plan
    level = len(clients)
    mcp_calls = [READ_RECIPE.mcp_call(c) for c in clients]
    direct_calls = [READ_RECIPE.direct_call(cooked)] * level
    # A short concurrent warm-up first, so the HTTP connection pools (cooked-mcp's to Cooked, the
    # benchmark's to both) have grown to this level before timing: the fake Cooked accepts with a
    # listen backlog of 5, and a burst of new connections beyond it stalls for a SYN retransmit (1 s).
    await _window(mcp_calls, WARM_UP_SECONDS)
    await _window(direct_calls, WARM_UP_SECONDS)
    server_cpu, own_cpu = cpu_seconds(http.pid), time.process_time()
    latencies, errors, elapsed = await _window(mcp_calls, plan.concurrency_seconds)
    server_cpu, own_cpu = cpu_seconds(http.pid) - server_cpu, time.process_time() - own_cpu
    stats = Stats.of(latencies) if latencies else None
    direct_latencies, direct_errors, direct_elapsed = await _window(
        direct_calls, plan.baseline_concurrency_seconds
    )
    direct = Stats.of(direct_latencies)
    row: dict[str, Any] = {
        "clients": level,
        "seconds": round(elapsed, 2),
        "calls": len(latencies),
        "errors": errors,
        "calls_per_second": round(len(latencies) / elapsed, 1),
        "latency": stats.as_dict() if stats else None,
        "server_cpu_ms_per_call": ms(server_cpu * MS / max(1, len(latencies))),
        "load_generator_cpu_ms_per_call": ms(own_cpu * MS / max(1, len(latencies))),
        "direct_httpx": {
            "calls_per_second": round(len(direct_latencies) / direct_elapsed, 1),
            "errors": direct_errors,
            "latency": direct.as_dict(),
        },
    }
    print(
        f"  {level:2} clients: {row['calls_per_second']:7.1f} calls/s, p50 {stats.p50 if stats else 0:6.2f} ms, "
        f"p99 {stats.p99 if stats else 0:6.2f} ms, {errors} errors, server CPU "
        f"{row['server_cpu_ms_per_call']:.2f} ms/call (direct httpx: {row['direct_httpx']['calls_per_second']:.0f}"
        f" calls/s, p99 {direct.p99:.2f} ms)",
        flush=True,
    )
    if errors:
        ctx.results.fail(f"{SECTION}: {errors} failed calls with {level} concurrent clients")
    return row


async def _burst(clients: list[McpClient]) -> list[str]:
    """One call per client, all released at the same moment; the errors, if any."""
    gate = anyio.Event()
    errors: list[str] = []

    async def one(client: McpClient) -> None:
        await gate.wait()
        try:
            await READ_RECIPE.mcp_call(client)()
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}"[:200])

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for client in clients:
                tg.start_soon(one, client)
            await anyio.sleep(0.05)  # every task waiting at the gate
            gate.set()
    return errors


async def _expiry_bursts(ctx: Context, clients: list[McpClient]) -> list[dict[str, Any]]:
    """Expire every Cooked session, then fire one call per client at once: one login must go out."""
    bursts: list[dict[str, Any]] = []
    for _ in range(ctx.plan.expiry_bursts):
        ctx.fake.expire_sessions()
        ctx.fake.clear_requests()
        before = ctx.fake.login_count
        errors = await _burst(clients)
        logins = ctx.fake.login_count - before
        requests = len(ctx.fake.requests)
        bursts.append(
            {"calls": len(clients), "logins": logins, "cooked_requests": requests, "errors": errors}
        )
        print(
            f"  expiry burst: {len(clients)} calls, {logins} login(s), {requests} Cooked requests, "
            f"{len(errors)} errors",
            flush=True,
        )
        if errors:
            ctx.results.fail(f"{SECTION}: expiry burst: {len(errors)} calls failed, e.g. {errors[0]}")
    return bursts


async def run(ctx: Context) -> None:
    plan = ctx.plan
    print(
        f"concurrency over HTTP: {', '.join(map(str, plan.concurrency_levels))} clients, "
        f"{plan.concurrency_seconds:g} s each (fake delay 0)",
        flush=True,
    )
    ctx.fake.reset()
    rows: list[dict[str, Any]] = []
    bursts: list[dict[str, Any]] = []
    with cooked_http(ctx) as http:
        async with DirectCooked(ctx.fake.base_url) as cooked, contextlib.AsyncExitStack() as stack:
            clients: list[McpClient] = []
            for level in sorted({*plan.concurrency_levels, plan.expiry_clients}):
                while len(clients) < level:
                    clients.append(await stack.enter_async_context(http.client(plan.mode)))
                if level in plan.concurrency_levels:
                    rows.append(await _level(ctx, http, clients[:level], cooked))
            bursts = await _expiry_bursts(ctx, clients[: plan.expiry_clients])
    ctx.results.sections[SECTION] = {
        "transport": "http",
        "call": READ_RECIPE.name,
        "fake_delay_s": 0.0,
        "cpu_count": os.cpu_count(),
        "levels": rows,
        "expiry_bursts": bursts,
    }
    for row in rows:
        p99 = row["latency"]["p99_ms"] if row["latency"] else float("nan")
        ctx.results.check(
            SECTION,
            f"{row['clients']} concurrent HTTP clients",
            "info",
            f"{row['calls_per_second']:.0f} calls/s, p99 {p99:.1f} ms",
            None,
        )
    logins = [b["logins"] for b in bursts]
    ctx.results.check(
        SECTION,
        f"logins per session-expiry burst of {plan.expiry_clients} concurrent calls",
        "exactly 1",
        ", ".join(map(str, logins)),
        bool(logins) and all(n == 1 for n in logins) and not any(b["errors"] for b in bursts),
    )
