"""``python -m bench`` (``make bench``): run every measurement, write bench/results.{json,md}, print the table.

Exits 1 when any target is missed or any tool call makes more Cooked requests than the
contract needs, after printing everything. Only 127.0.0.1 is ever contacted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from . import concurrency, latency, memory, overhead, report, requests_count, startup, wire_ab
from .context import Context, Plan
from .fake import remote_fake
from .procs import die_with_parent
from .results import Results

Section = Callable[[Context], Awaitable[None]]

#: A 1-minute load average above this at the start means someone else is using the machine.
BUSY_LOAD = 1.0
#: With ``--priority``, the benchmark and everything it starts (servers, the fake Cooked) run at
#: this nice value when allowed. Off by default: a run beside other work must show the targets
#: hold under that work, not under a scheduler told to favour the benchmark over it.
NICE = -10

#: Set in the copy of the benchmark that runs in a session of its own (``_in_own_session``).
OWN_SESSION = "COOKED_MCP_BENCH_OWN_SESSION"

#: (name, run, the most seconds it may take in a full run): a stuck section is cancelled, not waited for.
SECTIONS: tuple[tuple[str, Section, float], ...] = (
    ("startup", startup.run, 240.0),
    ("overhead", overhead.run, 240.0),
    ("requests", requests_count.run, 240.0),
    ("concurrency", concurrency.run, 240.0),
    ("memory", memory.run, 240.0),
    ("latency", latency.run, 180.0),
    ("http_layer", wire_ab.run, 180.0),
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs (2 s concurrency windows)")
    parser.add_argument(
        "--mode",
        choices=("legacy", "auto"),
        default="legacy",
        help="SDK client connect mode: legacy = initialize handshake (default), auto = server/discover first",
    )
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra environment variable for every server process, to try a change (repeatable)",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=[name for name, _, _ in SECTIONS],
        help="run only this section (repeatable); the report then holds only those",
    )
    parser.add_argument(
        "--priority",
        action="store_true",
        help=f"run at nice {NICE} when allowed (default: the priority it was started with)",
    )
    return parser.parse_args(argv)


async def _run_sections(ctx: Context, only: list[str] | None) -> None:
    for name, run, budget in SECTIONS:
        if only and name not in only:
            continue
        started = time.monotonic()
        try:
            with anyio.fail_after(budget):
                await run(ctx)
        except Exception as exc:
            ctx.results.fail(f"{name}: the section stopped with {type(exc).__name__}: {exc}")
            traceback.print_exc(limit=8)
        print(f"  ({name}: {time.monotonic() - started:.0f} s)\n", flush=True)


def _server_logs(ctx: Context) -> dict[str, int]:
    """Lines each kind of server wrote to stderr: a healthy run writes none."""
    counts: dict[str, int] = {}
    for log in sorted(ctx.logs.glob("*.log")):
        lines = log.read_text(errors="replace").splitlines()
        counts[log.stem] = len(lines)
        if lines:
            print(f"stderr of {log.stem} ({len(lines)} lines), first lines:", flush=True)
            for line in lines[:10]:
                print(f"  | {line}", flush=True)
    return counts


def _raise_priority() -> int:
    """Run at ``NICE`` (inherited by every process started from here); the value in effect."""
    with contextlib.suppress(OSError):  # not allowed (no CAP_SYS_NICE): the normal priority, reported
        os.setpriority(os.PRIO_PROCESS, 0, NICE)
    return os.getpriority(os.PRIO_PROCESS, 0)


def _in_own_session() -> int | None:
    """Run the benchmark again in a session of its own and return its exit status; None when this
    process already is that run (or leads its session), which then measures.

    On Linux with autogroup scheduling (``/proc/sys/kernel/sched_autogroup_enabled``, on by default)
    every session is one scheduling group, and the CPU is shared between groups before it is shared
    within one. The SDK client starts each stdio server in a new session, so the servers it measures
    are groups of their own, while the benchmark process (every client) and the fake Cooked were in
    the session of the shell that started ``make bench``, together with anything started from that
    shell beside it: a CPU-bound process started there took its share from the client and the fake
    Cooked alone. In that arrangement the single-threaded cooked-mcp came out 0.3-1.2 ms behind the
    bare SDK server through the SDK client (add_selection, 2026-11-25), while through the minimal
    client, whose servers shared that session, it came out ahead; with the benchmark in a session
    of its own (the burner one group among the others, like any other program) cooked-mcp was
    ahead through both. Started here, the benchmark's clients and fake Cooked form one group of
    their own; the servers are placed as before (the SDK client's in new sessions, the minimal
    client's in the benchmark's). Ctrl-C here is passed on; a parent stopped otherwise takes the
    run with it (PR_SET_PDEATHSIG).
    """
    if os.environ.get(OWN_SESSION) or os.getsid(0) == os.getpid():
        return None
    child = subprocess.Popen(  # this very command line again
        [sys.executable, *sys.orig_argv[1:]],
        env={**os.environ, OWN_SESSION: "1"},
        start_new_session=True,
        preexec_fn=die_with_parent,  # a parent stopped by a signal takes this run with it
    )
    try:
        status = child.wait()
    except KeyboardInterrupt:
        child.send_signal(signal.SIGINT)
        status = child.wait()
    finally:
        if child.poll() is None:
            child.kill()
    # A run ended by a signal is -signum to Popen; as an exit status that would be 256 - signum
    # (254 for a Ctrl-C): the shell's 128 + signum says what happened.
    return 128 - status if status < 0 else status


def main(argv: list[str] | None = None) -> int:
    if argv is None and (status := _in_own_session()) is not None:
        return status
    args = parse_args(argv)
    nice = _raise_priority() if args.priority else os.getpriority(os.PRIO_PROCESS, 0)
    extra = dict(item.split("=", 1) for item in args.server_env if "=" in item)
    plan = Plan.make(quick=args.quick, mode=args.mode, server_env=extra)
    results = Results()
    started = time.monotonic()
    load_before = os.getloadavg()
    if load_before[0] > BUSY_LOAD:
        print(
            f"warning: load average {load_before[0]:.1f} on {os.cpu_count()} cores: other work is running, "
            "so the numbers will be noisy and slower than this machine can do\n",
            flush=True,
        )
    with tempfile.TemporaryDirectory(prefix="cooked-mcp-bench-") as scratch:
        workdir = Path(scratch)
        with remote_fake(workdir / "fake.log") as fake:
            print(f"fake Cooked at {fake.base_url} (own process); servers get a scratch HOME\n", flush=True)
            ctx = Context(plan, fake, workdir, results)
            anyio.run(_run_sections, ctx, args.only)
        stderr_lines = _server_logs(ctx)
    meta: dict[str, Any] = {
        "machine": report.machine(),
        "quick": plan.quick,
        "client_mode": plan.mode,
        "server_env": dict(plan.server_env),
        "runtime_s": round(time.monotonic() - started, 1),
        "load_average_1min": {"before": round(load_before[0], 2), "after": round(os.getloadavg()[0], 2)},
        "nice": nice,
        "own_session": os.getsid(0) == os.getpid(),
        "server_stderr_lines": stderr_lines,
    }
    json_path = report.write_json(results, meta)
    text = report.markdown(results, meta)
    md_path = report.write_markdown(text)
    print("\n" + text)
    print(f"wrote {json_path} and {md_path}")
    if results.failures:
        print(f"\n{len(results.failures)} failure(s):", file=sys.stderr)
        for failure in results.failures:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
