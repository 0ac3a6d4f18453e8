"""bench/results.json for machines, bench/results.md (also printed) for people."""

from __future__ import annotations

import datetime
import json
import os
import platform
from pathlib import Path
from typing import Any

from .results import Results

HERE = Path(__file__).parent
JSON_PATH = HERE / "results.json"
MD_PATH = HERE / "results.md"


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "machine": platform.machine(),  # what `uname -m` prints
        "system": f"{platform.system()} {platform.release()}",
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def write_json(results: Results, meta: dict[str, Any]) -> Path:
    document = {
        **meta,
        "targets": [check.as_dict() for check in results.checks],
        "failures": results.failures,
        "ok": results.ok,
        **results.sections,
    }
    JSON_PATH.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return JSON_PATH


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return [*lines, ""]


def _f(value: Any, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def markdown(results: Results, meta: dict[str, Any]) -> str:
    m = meta["machine"]
    s = results.sections
    out = [
        "# cooked-mcp benchmark",
        "",
        f"{m['date']} · {m['machine']} · {m['cpu']} · {m['cores']} cores · Python {m['python']} · "
        f"{'quick' if meta['quick'] else 'full'} run · SDK client mode `{meta['client_mode']}` · "
        f"{meta['runtime_s']:.0f} s · load average {meta['load_average_1min']['before']:.1f} before, "
        f"{meta['load_average_1min']['after']:.1f} after · nice {meta.get('nice', 0)}"
        f"{' · own session' if meta.get('own_session') else ''}",
        "",
        *([f"Extra server environment: `{meta['server_env']}`", ""] if meta.get("server_env") else []),
        "## Targets",
        "",
    ]
    out += _table(
        ["section", "target", "limit", "measured", "result"],
        [[c.section, c.name, c.limit, c.measured, c.verdict] for c in results.checks],
    )
    if "startup" in s:
        st = s["startup"]
        out += ["## Start-up (spawn → initialize → tools/list, medians)", ""]
        out += _table(
            ["server", "to initialize (ms)", "to tools/list (ms)", "stdin closed → exit (ms)", "runs"],
            [
                [
                    name,
                    _f(st[key]["median_initialize_ms"], 0),
                    _f(st[key]["median_tools_list_ms"], 0),
                    _f(st[key]["median_shutdown_ms"], 0),
                    str(st[key]["runs"]),
                ]
                for name, key in (("cooked-mcp", "cooked_mcp"), ("bare SDK server", "bare_sdk_server"))
            ]
            + [
                [
                    "ratio (median of paired runs)",
                    _f(st["ratio_initialize"]),
                    _f(st["ratio_tools_list"]),
                    "",
                    "",
                ]
            ],
        )
        it = st["import_time"]
        out += [
            f"Import time (`{it['command']}`): {it['total_ms']:.0f} ms for {it['modules']} modules; "
            f"`{it['baseline_command']}` alone: {it['baseline_total_ms']:.0f} ms. Ten most expensive "
            "(cumulative):",
            "",
        ]
        out += _table(
            ["module", "cumulative (ms)", "self (ms)"],
            [
                [f"`{row['module']}`", _f(row["cumulative_us"] / 1000, 1), _f(row["self_us"] / 1000, 1)]
                for row in it["top_cumulative"]
            ],
        )
        out += [
            "Ten largest self times: "
            + ", ".join(f"`{row['module']}` {row['self_us'] / 1000:.1f} ms" for row in it["top_self"])
            + ".",
            "",
        ]
    if "overhead" in s:
        ov = s["overhead"]
        out += [
            "## Tool-call overhead (ms; MCP call vs the same Cooked requests made directly with httpx)",
            "",
        ]
        rows = [
            [
                row["transport"],
                row["client"],
                row["call"],
                _f(row["mcp"]["p50_ms"]),
                _f(row["direct_httpx"]["p50_ms"]),
                _f(row["added_p50_ms"]),
                _f(row["sdk_floor"]["p50_ms"]),
                _f(row["added_p50_beyond_sdk_floor_ms"]),
                _f(row["mcp"]["p99_ms"]),
                _f(row["direct_httpx"]["p99_ms"]),
                _f(row["added_p99_ms"]),
                str(row["mcp"]["n"]),
            ]
            for row in ov["calls"]
        ]
        out += _table(
            [
                "transport",
                "client",
                "call",
                "p50",
                "direct p50",
                "added p50",
                "bare SDK server p50",
                "p50 − bare, paired by turn",
                "p99",
                "direct p99",
                "added p99",
                "calls",
            ],
            rows,
        )
        out += [
            '"bare SDK server p50" is the MCP SDK\'s own cost per call for the same answer and the same Cooked '
            "requests: a bare server whose tool makes the direct column's requests with plain httpx, declares "
            "the output schema cooked-mcp declares and replays the result cooked-mcp gave for that call, through "
            "the same kind of client over the same transport, timed in turn with the other two columns; "
            "\"p50 − bare\" is the p50 of cooked-mcp's call minus the bare server's, turn by turn: "
            "cooked-mcp's added p50 beyond the bare server's. The SDK client validates every structured result with jsonschema (a cost that grows "
            "with the result: about 0.3 ms for the shopping list's) and parses it into pydantic models in the "
            "benchmark process; the minimal client only writes the request and reads the answer, so its rows "
            "are the server's share alone. Over HTTP both servers answer every call with an event stream (the "
            "SDK's own framing).",
            "",
            f"Each row's {ov['calls'][0]['rounds'] if ov['calls'] else 0} rounds are spread over the whole section "
            "(each round visits every row), because the machine's speed moves within minutes and every absolute "
            "figure with it; every row is judged against the bare SDK server timed at the same moments, turn by "
            "turn (bench/results.json has every round's figures).",
            "",
        ]
        out += [
            'The benchmark ran in a session of its own ("own session" above), so work started beside it '
            "from the same shell was one more scheduling group, not a share of the benchmark's "
            "(bench/README.md, *A session of its own*, says why that matters)."
            if meta.get("own_session")
            else "This run was not in a session of its own (started through `bench.__main__.main(argv)`, or "
            "with COOKED_MCP_BENCH_OWN_SESSION set): work started beside it from the same shell shared its "
            "scheduling group (bench/README.md, *A session of its own*).",
            "",
        ]
    if "requests_per_call" in s:
        out += ["## Cooked requests per tool call (measured / contract minimum)", ""]
        out += _table(
            ["call", "steady", "first call (with login)", "result"],
            [
                [
                    row["call"],
                    f"{row['steady']} / {row['minimum_steady']}",
                    f"{row['first']} / {row['minimum_first']}",
                    "PASS" if row["ok"] else "FAIL",
                ]
                for row in s["requests_per_call"]["calls"]
            ],
        )
    if "concurrency" in s:
        cc = s["concurrency"]
        out += [f"## Concurrency over HTTP (`{cc['call']}`, fake delay 0)", ""]
        out += _table(
            [
                "clients",
                "calls/s",
                "p50 (ms)",
                "p99 (ms)",
                "errors",
                "server CPU ms/call",
                "direct httpx calls/s",
                "direct p99 (ms)",
            ],
            [
                [
                    str(row["clients"]),
                    _f(row["calls_per_second"], 0),
                    _f(row["latency"]["p50_ms"] if row["latency"] else None),
                    _f(row["latency"]["p99_ms"] if row["latency"] else None),
                    str(row["errors"]),
                    _f(row["server_cpu_ms_per_call"]),
                    _f(row["direct_httpx"]["calls_per_second"], 0),
                    _f(row["direct_httpx"]["latency"]["p99_ms"]),
                ]
                for row in cc["levels"]
            ],
        )
        out += [
            "With 8 and 32 clients the two cores are shared by the load generator (one Python process "
            "running every SDK client), the server and the fake Cooked, so calls/s and p99 there show the "
            "machine's limit as much as the server's; the direct httpx baseline saturates too. Server CPU "
            "per call is the server's own share.",
            "",
            "Session expiry under concurrent calls: "
            + "; ".join(
                f"{b['calls']} calls → {b['logins']} login(s), {b['cooked_requests']} Cooked requests, "
                f"{len(b['errors'])} errors"
                for b in cc["expiry_bursts"]
            ),
            "",
        ]
    if "memory" in s:
        mem = s["memory"]
        out += ["## Memory (VmRSS of the stdio server)", ""]
        out += _table(
            ["after calls", "RSS (MiB)"],
            [["start-up", _f(mem["rss_after_start_kib"] / 1024, 1)]]
            + [[str(x["calls"] + mem["warmup_calls"]), _f(x["rss_kib"] / 1024, 1)] for x in mem["samples"]],
        )
        out += [f"Growth {mem['growth_percent']:+.2f} %: {mem['note']}.", ""]
    if "cooked_latency" in s:
        cl = s["cooked_latency"]
        out += [f"## Overhead vs Cooked latency (`{cl['call']}` over stdio, p50 ms)", ""]
        out += _table(
            ["Cooked delay (ms)", "calls", "MCP p50", "direct p50", "added p50"],
            [
                [
                    _f(row["fake_delay_s"] * 1000, 0),
                    str(row["calls"]),
                    _f(row["mcp_p50_ms"]),
                    _f(row["direct_p50_ms"]),
                    _f(row["added_p50_ms"]),
                ]
                for row in cl["rows"]
            ],
        )
    if results.failures:
        out += ["## Failures", ""] + [f"- {failure}" for failure in results.failures] + [""]
    return "\n".join(out)


def write_markdown(text: str) -> Path:
    MD_PATH.write_text(text + "\n")
    return MD_PATH
