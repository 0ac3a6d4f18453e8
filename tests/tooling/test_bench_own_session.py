"""``python -m bench`` runs again in a session of its own (bench/__main__.py ``_in_own_session``):
that run really is a session leader, and its exit status, a Ctrl-C's included, is the one
``make bench`` reports."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from bench import __main__ as bench_main

pytestmark = pytest.mark.tooling


def own_session_of(monkeypatch: pytest.MonkeyPatch, code: str) -> int | None:
    """``_in_own_session`` with ``python -c CODE`` as the command line it starts again."""
    monkeypatch.delenv(bench_main.OWN_SESSION, raising=False)
    monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-c", code])
    return bench_main._in_own_session()


def test_the_run_leads_a_session_of_its_own_and_its_exit_status_is_passed_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code = (
        "import os, sys\n"
        f"assert os.environ[{bench_main.OWN_SESSION!r}] == '1'\n"
        "sys.exit(7 if os.getsid(0) == os.getpid() else 3)\n"
    )
    assert own_session_of(monkeypatch, code) == 7


def test_a_run_ended_by_a_signal_exits_with_the_shells_status_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C passed on ends the run by SIGINT (an uncaught KeyboardInterrupt): 130, not the
    254 that ``SystemExit(-2)`` gave. The child puts Python's own Ctrl-C handler back first: started
    in the background by a non-interactive shell (as CI may), it inherits SIGINT ignored."""
    code = (
        "import os, signal, time; signal.signal(signal.SIGINT, signal.default_int_handler); "
        f"os.kill(os.getpid(), {int(signal.SIGINT)}); time.sleep(30)"
    )
    assert own_session_of(monkeypatch, code) == 130


def test_the_run_in_its_own_session_measures_instead_of_starting_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(bench_main.OWN_SESSION, "1")
    assert bench_main._in_own_session() is None
    monkeypatch.delenv(bench_main.OWN_SESSION)
    if os.getsid(0) == os.getpid():
        assert bench_main._in_own_session() is None
