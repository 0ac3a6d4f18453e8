"""The out-of-process control surface under /_fake/, for the demo and benchmark running the fake via the CLI.

Never recorded, never delayed, never faulted, and needs no session: it is the test harness, not Cooked.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from .exchange import Incoming, Reply, error_reply, json_reply
from .faults import Fault
from .recording import RecordedRequest
from .state import ImportResult


class Controls(Protocol):
    """What the control surface reaches in the fake (``FakeCooked`` has it all), so the fake can
    route ``/_fake/`` here without the two modules importing each other."""

    delay: float
    reject_sessions: bool
    variants: frozenset[str]

    @property
    def requests(self) -> list[RecordedRequest]: ...
    @property
    def login_count(self) -> int: ...
    def clear_requests(self) -> None: ...
    def reset(self) -> None: ...
    def expire_sessions(self) -> None: ...
    def fail(self, *args: Any, **kwargs: Any) -> Fault: ...
    def fail_with(self, *args: Any, **kwargs: Any) -> Fault: ...
    def clear_faults(self) -> None: ...
    def use_variants(self, *names: str) -> None: ...
    def set_import_result(self, url: str, result: ImportResult) -> None: ...


#: Every control endpoint and what it does; ``GET /_fake/`` answers with this list, so the URL
#: ``cooked-fake`` prints is a starting point rather than a 404.
ENDPOINTS: dict[tuple[str, str], str] = {
    ("GET", ""): "this list",
    ("GET", "requests"): "the requests received so far and the login count",
    ("POST", "clear-requests"): "forget the recorded requests",
    ("POST", "reset"): "back to the seed data, no sessions, no faults",
    ("POST", "expire-sessions"): "end every session (the next call gets 401)",
    ("POST", "reject-sessions"): '{"reject": true|false}: answer 401 to every session',
    ("POST", "delay"): '{"seconds": N}: wait before every answer',
    ("POST", "fail"): '{"kind": ..., "times": N} or {"status": N, ...}: inject a fault',
    ("POST", "clear-faults"): "remove every injected fault",
    ("POST", "import-result"): '{"url": ..., "result": ...}: what importing that URL returns',
    ("POST", "variants"): '{"variants": [...]}: answer in these contract variants ([] for the contract)',
}


class _NoSuchAction(Exception):
    pass


def handle(fake: Controls, incoming: Incoming) -> Reply:
    action = (incoming.method, incoming.path.removeprefix("/_fake/").rstrip("/"))
    try:
        body: Any = json.loads(incoming.body) if incoming.body.strip() else {}
        if not isinstance(body, dict):
            raise ValueError("body must be a JSON object")
        return json_reply(200, _act(fake, action, body))
    except _NoSuchAction:
        return error_reply(
            404,
            "NOT_FOUND",
            f"No control endpoint {incoming.method} {incoming.path}; GET /_fake/ lists them",
        )
    except (ValueError, TypeError, KeyError) as err:
        return error_reply(400, "INVALID_REQUEST", f"{type(err).__name__}: {err}")


def _act(fake: Controls, action: tuple[str, str], body: dict[str, Any]) -> Any:
    match action:
        case ("GET", ""):
            return {
                "endpoints": [
                    {"method": method, "path": f"/_fake/{name}", "does": does}
                    for (method, name), does in ENDPOINTS.items()
                ]
            }
        case ("GET", "requests"):
            return {"requests": [r.to_wire() for r in fake.requests], "login-count": fake.login_count}
        case ("POST", "clear-requests"):
            fake.clear_requests()
        case ("POST", "reset"):
            fake.reset()
        case ("POST", "expire-sessions"):
            fake.expire_sessions()
        case ("POST", "reject-sessions"):
            fake.reject_sessions = bool(body.get("reject", True))
        case ("POST", "delay"):
            fake.delay = float(body["seconds"])
            return {"seconds": fake.delay}
        case ("POST", "fail"):
            args = {k.replace("-", "_"): v for k, v in body.items()}
            fault = fake.fail_with(**args) if "kind" in args else fake.fail(**args)
            return {"kind": fault.kind, "times": fault.times}
        case ("POST", "clear-faults"):
            fake.clear_faults()
        case ("POST", "variants"):
            fake.use_variants(*body.get("variants", []))
            return {"variants": sorted(fake.variants)}
        case ("POST", "import-result"):
            fake.set_import_result(str(body["url"]), body["result"])
        case _:
            raise _NoSuchAction(action)
    return {}
