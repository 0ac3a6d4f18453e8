"""The gate's rules, on made-up traces."""

from __future__ import annotations

import pytest
from generated_requirements import REQUIREMENTS
from traceability import Trace, check

pytestmark = pytest.mark.tooling

ALL = list(REQUIREMENTS)


def test_everything_cited_passes() -> None:
    assert check(Trace(citations={rid: ["t"] for rid in ALL}), pending=[]) == []


def test_an_uncited_requirement_must_be_pending() -> None:
    trace = Trace(citations={rid: ["t"] for rid in ALL[1:]})
    assert check(trace, pending=[]) == [f"{ALL[0]} has no test and is not pending"]
    assert check(trace, pending=[ALL[0]]) == []


def test_a_pending_requirement_with_a_test_must_leave_the_list() -> None:
    trace = Trace(citations={rid: ["t"] for rid in ALL})
    assert check(trace, pending=[ALL[0]]) == [
        f"{ALL[0]} has a test now: remove it from pending-requirements.txt"
    ]


def test_pending_ids_must_exist() -> None:
    trace = Trace(citations={rid: ["t"] for rid in ALL})
    assert check(trace, pending=["tools.NOPE.1"]) == [
        "tools.NOPE.1 is in pending-requirements.txt but is not a requirement"
    ]
