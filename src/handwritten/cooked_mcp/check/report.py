"""Per-endpoint verdicts, printed and written as a file for a bug report: never a value from an
answer, a credential, the username, a custom base URL or any recipe text.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from cooked_mcp import __version__, docs_url
from cooked_mcp.config import default
from cooked_mcp.cooked import endpoints
from cooked_mcp.cooked.endpoints import ENDPOINTS, Endpoint
from cooked_mcp.redaction import redact

from .steps import Mismatch, Outcome

Status = Literal["ok", "mismatch", "skipped", "not checked"]

#: The endpoints no mode of ``--check`` calls, and why (docs/check.md says the same).
NEVER_CHECKED: dict[Endpoint, str] = {
    endpoints.IMPORT_URL: "a URL import makes Cooked fetch a web page",
    endpoints.GET_DRAFT: "drafts come only from a URL import",
    endpoints.SAVE_DRAFT: "drafts come only from a URL import",
    endpoints.CLEAR_SHOPPING_LIST: "it would empty your whole shopping list",
}
#: Why the endpoints only ``--write`` calls were not checked without it.
_WRITE_ONLY = "only --check --write calls it"


@dataclass(frozen=True)
class Verdict:
    endpoint: Endpoint
    status: Status
    step: str = ""
    mismatch: Mismatch | None = None


def verdicts(outcomes: list[Outcome]) -> list[Verdict]:
    """One per row of the endpoint table: its first mismatch, else OK, else why it was not checked."""
    result: list[Verdict] = []
    for endpoint in ENDPOINTS:
        mine = [o for o in outcomes if o.endpoint == endpoint]
        bad = next((o for o in mine if o.mismatch is not None), None)
        if bad is not None:
            result.append(Verdict(endpoint, "mismatch", bad.step, bad.mismatch))
        elif any(o.ok and not o.skipped for o in mine):
            result.append(Verdict(endpoint, "ok"))
        else:
            result.append(Verdict(endpoint, "skipped" if mine else "not checked"))
    return result


def print_endpoints(rows: list[Verdict], out: TextIO) -> None:
    print("Endpoints, whether a public source confirms them, and what this run found:", file=out)
    width = max(len(row.endpoint.path_template) for row in rows)
    for row in rows:
        e = row.endpoint
        kind = "confirmed" if e.provenance.confirmed else "reconstructed"
        print(f"  {e.method:<6} {e.path_template:<{width}}  {kind:<13}  {_verdict(row)}", file=out)
    for provenance in dict.fromkeys(row.endpoint.provenance for row in rows):
        print(f"  {provenance.label}", file=out)
    print(f"The contract these rows follow: {docs_url('cooked-api.md')}", file=out)


def _verdict(row: Verdict) -> str:
    verdict = row.status.upper()
    if row.mismatch is not None:
        answered = " ".join(str(p) for p in (row.mismatch.status, row.mismatch.code) if p is not None)
        shown = f" [{answered}]" if answered and answered not in row.mismatch.problem else ""
        return f"{verdict} in '{row.step}': {row.mismatch.problem}{shown}"
    if row.status == "not checked":
        return f"{verdict} ({NEVER_CHECKED.get(row.endpoint, _WRITE_ONLY)})"
    return verdict


def write_report(
    path: Path,
    *,
    mode: str,
    base_url: str,
    outcomes: list[Outcome],
    undo: dict[str, Any] | None,
    secrets: Iterable[str],
) -> None:
    """``secrets`` (the client's: login name, password, username, cookies, token) are kept out of
    every string of the file, keys included, in every spelling ``cooked_mcp.redaction`` knows: what
    it holds from Cooked (a code, a key of the answer's shape) passed filters that know no secret."""
    rows = verdicts(outcomes)
    report: dict[str, Any] = {
        "report": "cooked-mcp --check",
        "cooked-mcp-version": __version__,
        "python": platform.python_version(),
        "mode": mode,
        "cooked": "cooked.wiki (default)"
        if base_url.rstrip("/") == default("base_url")
        else "a custom base URL",
        "passed": all(o.ok for o in outcomes),
        "steps": [
            {"step": o.step, "endpoint": o.endpoint.name, "ok": o.ok, **_mismatch(o.mismatch)}
            for o in outcomes
        ],
        "endpoints": [
            {
                "name": row.endpoint.name,
                "method": row.endpoint.method,
                "path": row.endpoint.path_template,
                "confirmed": row.endpoint.provenance.confirmed,
                "source": row.endpoint.provenance.source,
                "verdict": row.status,
                **({"step": row.step, **_mismatch(row.mismatch)} if row.mismatch else {}),
            }
            for row in rows
        ],
    }
    if undo is not None:
        report["undo"] = undo
    path.write_text(json.dumps(_scrubbed(report, frozenset(secrets)), indent=2) + "\n", encoding="utf-8")


def _scrubbed(value: Any, secrets: frozenset[str]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {redact(key, secrets): _scrubbed(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrubbed(item, secrets) for item in value]
    return value


def _mismatch(mismatch: Mismatch | None) -> dict[str, Any]:
    if mismatch is None:
        return {}
    fields = {"problem": mismatch.problem, "status": mismatch.status, "code": mismatch.code}
    return {key: value for key, value in fields.items() if value is not None} | (
        {"answer-shape": mismatch.shape} if mismatch.shape is not None else {}
    )
