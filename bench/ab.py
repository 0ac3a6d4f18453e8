"""``python -m bench.ab --other /path/to/worktree``: this build against another one, call for call.

Both builds' ``cooked-mcp`` (each from its own worktree's .venv) and the bare SDK server are
started over stdio against one fake Cooked and spoken to by the minimal JSON-RPC client
(lean.py); ``read target=recipe`` (or ``--workload``'s call; the bare server: its trivial ``echo`` tool) is timed in
rounds, the three servers in a random order every turn, so every series sees the machine
at the same moments. Prints each round's p50 and the median of the rounds' p50s per server, each server's
CPU time per timed call (from /proc: the figure least moved by other work on the machine),
and the difference between the two builds, which is what a regression hunt needs: measured
apart, minutes later, the machine's speed moved by more than the difference looked for.

``--http`` does the same over Streamable HTTP (each build's server with a bearer token).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from cooked_fake import SEED_LOGIN, SEED_PASSWORD

from .clients import baseline_argv
from .context import new_token
from .fake import remote_fake
from .lean import lean_http, lean_stdio
from .measure import MS, interleaved
from .procs import HOST, cpu_seconds, free_port, server_env, spawn, wait_for_port
from .workloads import WORKLOADS, Workload

Call = Callable[[], Awaitable[object]]
ECHO = ("echo", {"text": "x"})


def _env(home: Path, base_url: str, bin_dir: Path, **extra: str) -> dict[str, str]:
    env = server_env(home, base_url, login=SEED_LOGIN, password=SEED_PASSWORD, **extra)
    env["PATH"] = f"{bin_dir}:/usr/bin:/bin"
    return env


@contextlib.asynccontextmanager
async def _stdio_calls(
    builds: dict[str, Path],
    home: Path,
    base_url: str,
    logs: Path,
    pids: dict[str, int],
    workload: Workload,
    profile: Path | None = None,
) -> AsyncIterator[dict[str, Call]]:
    async with contextlib.AsyncExitStack() as stack:
        calls: dict[str, Call] = {}
        for index, (name, bin_dir) in enumerate(builds.items()):
            errlog = stack.enter_context((logs / f"{name}.log").open("a"))
            env = _env(home, base_url, bin_dir)
            argv = [str(bin_dir / "cooked-mcp")]
            if profile is not None:  # cProfile slows every call alike; its file says where the time goes
                argv = [
                    str(bin_dir / "python"),
                    "-m",
                    "cProfile",
                    "-o",
                    str(profile / f"build{index}.prof"),
                    *argv,
                ]
            client = await stack.enter_async_context(lean_stdio(env, errlog, argv=argv))
            calls[name] = workload.mcp_call(client)
            pids[name] = client.pid
        errlog = stack.enter_context((logs / "bare.log").open("a"))
        env = _env(home, base_url, Path(sys.executable).parent)
        bare = await stack.enter_async_context(lean_stdio(env, errlog, argv=baseline_argv()))
        calls["bare SDK (echo)"] = lambda: bare.call(*ECHO)
        pids["bare SDK (echo)"] = bare.pid
        yield calls


@contextlib.asynccontextmanager
async def _http_calls(
    builds: dict[str, Path],
    home: Path,
    base_url: str,
    logs: Path,
    pids: dict[str, int],
    workload: Workload,
    profile: Path | None = None,
) -> AsyncIterator[dict[str, Call]]:
    async with contextlib.AsyncExitStack() as stack:
        calls: dict[str, Call] = {}
        for index, (name, bin_dir) in enumerate(builds.items()):
            port, token = free_port(), new_token()
            env = _env(home, base_url, bin_dir, COOKED_MCP_HTTP_TOKEN=token)
            argv = [str(bin_dir / "cooked-mcp"), "--transport", "http", "--http-addr", f"{HOST}:{port}"]
            if profile is not None:
                argv = [
                    str(bin_dir / "python"),
                    "-m",
                    "cProfile",
                    "-o",
                    str(profile / f"build{index}.prof"),
                    *argv,
                ]
            child = stack.enter_context(spawn(name, argv, env, logs / f"{name}-http.log"))
            wait_for_port(child, port)
            client = await stack.enter_async_context(lean_http(f"http://{HOST}:{port}/mcp", token))
            calls[name] = workload.mcp_call(client)
            pids[name] = child.pid
        port = free_port()
        env = _env(home, base_url, Path(sys.executable).parent)
        child = stack.enter_context(
            spawn("bare", [*baseline_argv(), "--http", f"{HOST}:{port}"], env, logs / "bare-http.log")
        )
        wait_for_port(child, port)
        bare = await stack.enter_async_context(lean_http(f"http://{HOST}:{port}/mcp", new_token()))
        calls["bare SDK (echo)"] = lambda: bare.call(*ECHO)
        pids["bare SDK (echo)"] = child.pid
        yield calls


async def _run(args: argparse.Namespace, base_url: str, scratch: Path) -> dict[str, Any]:
    builds = {
        "this build": Path(sys.executable).parent,
        f"other ({args.other.name})": args.other / ".venv" / "bin",
    }
    opener = _http_calls if args.http else _stdio_calls
    logs = scratch / "logs"
    logs.mkdir()
    shuffle = random.Random(7)
    pids: dict[str, int] = {}
    workload = next(w for w in WORKLOADS if w.name == args.workload)
    async with opener(builds, scratch / "home", base_url, logs, pids, workload, args.profile) as calls:
        names = list(calls)
        per_round: dict[str, list[float]] = {name: [] for name in names}
        for call in calls.values():  # log-in, first-call set-up and warm caches: untimed
            for _ in range(args.warmup):
                await call()
        cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        for round_ in range(args.rounds):
            series = await interleaved(args.calls, *calls.values(), shuffle=shuffle)
            for name, times in zip(names, series, strict=True):
                per_round[name].append(statistics.median(times) * MS)
            print(
                f"round {round_ + 1:2d}: " + "  ".join(f"{name} {per_round[name][-1]:.3f}" for name in names),
                flush=True,
            )
        timed_calls = args.rounds * args.calls
        cpu = {name: (cpu_seconds(pid) - cpu_before[name]) / timed_calls * MS for name, pid in pids.items()}
    medians = {name: statistics.median(values) for name, values in per_round.items()}
    this, other = names[0], names[1]
    diffs = [a - b for a, b in zip(per_round[this], per_round[other], strict=True)]
    return {
        "transport": "http" if args.http else "stdio",
        "rounds": args.rounds,
        "calls_per_round": args.calls,
        "load_average": os.getloadavg(),
        "median_of_round_p50_ms": {k: round(v, 3) for k, v in medians.items()},
        "server_cpu_ms_per_call": {k: round(v, 3) for k, v in cpu.items()},
        "round_p50_ms": {k: [round(v, 3) for v in values] for k, values in per_round.items()},
        "this_minus_other_ms": {
            "median": round(statistics.median(diffs), 3),
            "min": round(min(diffs), 3),
            "max": round(max(diffs), 3),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ab", description=__doc__.splitlines()[0])
    parser.add_argument("--other", type=Path, required=True, help="worktree of the other build (its .venv)")
    parser.add_argument("--http", action="store_true", help="Streamable HTTP instead of stdio")
    parser.add_argument(
        "--workload", choices=[w.name for w in WORKLOADS], default=WORKLOADS[0].name, help="the call timed"
    )
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=100, help="timed calls per server per round")
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument(
        "--profile",
        type=Path,
        help="run both builds under cProfile, writing DIR/build0.prof (this) and build1.prof",
    )
    args = parser.parse_args(argv)
    if not (args.other / ".venv" / "bin" / "cooked-mcp").exists():
        parser.error(f"{args.other}/.venv/bin/cooked-mcp not found: run make install there")
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    with (
        tempfile.TemporaryDirectory(prefix="cooked-mcp-ab-") as scratch,
        remote_fake(Path(scratch) / "fake.log") as fake,
    ):
        summary = anyio.run(_run, args, fake.base_url, Path(scratch))
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
