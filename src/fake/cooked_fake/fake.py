"""FakeCooked: ties the store, sessions, faults and recording to a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any

from . import api, control, faults
from . import variants as _variants
from .exchange import Incoming, Reply
from .faults import Fault, JsonBody
from .recording import LOGIN_PATH, RecordedRequest, Recorder
from .server import Server
from .sessions import Sessions
from .state import ImportResult, State

CONTROL_PREFIX = "/_fake/"


# implements: api-client.VERIFICATION.1, authentication.VERIFICATION.1, recipes.VERIFICATION.1, shopping-list.VERIFICATION.1
class FakeCooked:
    """A stateful stand-in for cooked.wiki; every knob is a plain attribute or method so tests stay short."""

    def __init__(
        self,
        delay: float = 0.0,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        variants: Iterable[str] = (),
    ) -> None:
        self.delay = delay  # seconds slept before answering every /api request
        self.reject_sessions = (
            False  # True: every authenticated request answers 401, even after a fresh login
        )
        self.state = State()
        self._initial_delay = delay
        self._initial_variants = self.variants = _variants.checked(variants)
        self._address = (host, port)
        self._sessions = Sessions()
        self._faults = faults.Faults()
        self._recorder = Recorder()
        self._stop = threading.Event()
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> FakeCooked:
        if self._server is None:
            self._stop.clear()
            self._server = Server(self._address, self.handle)
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="fake-cooked",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._stop.set()  # wakes delayed and "slow" answers
        server.shutdown()
        server.drop_connections()
        server.server_close()
        thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeCooked:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeCooked is not running; call start() or use it as a context manager")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{self._address[0]}:{self.port}"

    # --- inspection and control ----------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        return self._recorder.snapshot()

    def api_requests(self, *, renewals: bool = True) -> list[RecordedRequest]:
        """Every request but login, in arrival order: what the tools asked of Cooked.

        ``renewals=False`` also leaves out requests refused with 401 because the session had
        expired (the client logs in and sends them again), for tests that share one session.
        """
        return [r for r in self.requests if r.path != LOGIN_PATH and (renewals or r.status != 401)]

    def api_calls(self, *, renewals: bool = True) -> list[tuple[str, str, Any]]:
        """(method, raw path, JSON body) of each of ``api_requests()``: the shape tests compare."""
        return [(r.method, r.path, r.json) for r in self.api_requests(renewals=renewals)]

    def wait_for_request(self, method: str, path: str, timeout: float = 20) -> RecordedRequest:
        """The first request for ``method path`` (raw path) since the last clear, once it has
        arrived: tests wait on this, not on a sleep, for "the call is running at Cooked"."""
        return self._recorder.wait_for(method, path, timeout)

    def wait_until(self, done: Callable[[list[RecordedRequest]], bool], timeout: float = 20) -> None:
        """Until ``done(requests)`` holds for the requests recorded since the last clear: checked as
        each request arrives and as each answer is chosen (``status`` set), so a test waits on that
        event ("the change was carried out") rather than polling or sleeping."""
        self._recorder.wait_until(done, timeout)

    def clear_requests(self) -> None:
        """Forgets recorded requests; login_count is kept (only reset() zeroes it)."""
        self._recorder.clear()

    @property
    def login_count(self) -> int:
        return self._recorder.login_count

    def expire_sessions(self) -> None:
        self._sessions.expire_all()

    def use_account(
        self, *, login: str, password: str, username: str, session_token: str | None = None
    ) -> None:
        """Accept other credentials, answer another canonical username and, optionally, issue one
        fixed session cookie value: secrecy tests plant canaries there and search every output.

        Kept across reset(), like the username. Seeded recipes stay owned by ``alice``, so with
        another username they are all someone else's (readable, but 403 on change).
        """
        with self.state.lock:
            self.state.login_name, self.state.password, self.state.username = login, password, username
        self._sessions.fixed_token = session_token

    def set_import_result(self, url: str, result: ImportResult) -> None:
        if result not in ("saved", "draft", "fail"):
            raise ValueError(f"result must be 'saved', 'draft' or 'fail', not {result!r}")
        with self.state.lock:
            self.state.import_results[url] = result

    def fail(
        self,
        method: str | None = None,
        path: str | None = None,
        status: int = 500,
        body: bytes | str | JsonBody | None = None,
        headers: Mapping[str, str] | None = None,
        times: int | None = 1,
        *,
        path_regex: str | None = None,
    ) -> Fault:
        """Answer the next ``times`` matching requests with this status (no body: Cooked's error JSON)."""
        return self._faults.add(
            faults.custom(
                method=method,
                path=path,
                path_regex=path_regex,
                status=status,
                body=body,
                headers=headers,
                times=times,
            )
        )

    def fail_with(
        self,
        kind: str,
        method: str | None = None,
        path: str | None = None,
        times: int | None = 1,
        *,
        path_regex: str | None = None,
        seconds: float = 5.0,
    ) -> Fault:
        """A named misbehaviour (see faults.FAULT_KINDS); ``seconds`` is for "slow" (the wait before
        answering), "answer_lost" (the wait before carrying the request out and hanging up without
        an answer) and "trickle" (the wait between the body's bytes)."""
        return self._faults.add(
            faults.named(kind, method=method, path=path, path_regex=path_regex, times=times, seconds=seconds)
        )

    def use_variants(self, *names: str) -> None:
        """Answer in these contract variants (variants.VARIANTS; "observed" for all that Cooked's
        app shows), replacing the current ones; none means the contract's own shapes."""
        self.variants = _variants.checked(names)

    def account_snapshot(self) -> bytes:
        """The account's data, canonical bytes: equal snapshots mean a user could see no difference."""
        return self.state.snapshot()

    def clear_faults(self) -> None:
        self._faults.clear()

    def reset(self) -> None:
        """Seed data, no faults, no sessions, no records; the delay and variants go back to the constructor's."""
        self.state.reset()
        self._faults.clear()
        self._sessions.expire_all()
        self._recorder.clear(logins=True)
        self.reject_sessions = False
        self.delay = self._initial_delay
        self.variants = self._initial_variants

    # --- request handling ----------------------------------------------------------------------------

    def handle(self, incoming: Incoming) -> Reply:
        """Everything but socket I/O; the recorded status is settled before the first byte goes out."""
        if incoming.path.startswith(CONTROL_PREFIX):
            return control.handle(self, incoming)
        key = self._recorder.arrive(incoming)
        if self.delay > 0:
            self._stop.wait(self.delay)
        fault = self._faults.take(incoming)
        if fault is not None and fault.kind in ("slow", "answer_lost"):
            self._stop.wait(fault.seconds)

        def normal() -> Reply:
            return api.dispatch(incoming, self.state, self._sessions, self.reject_sessions, self.variants)

        reply = (
            normal() if fault is None else faults.render(fault, incoming, normal, self.port, stop=self._stop)
        )
        self._recorder.settle(key, reply.status)
        return reply
