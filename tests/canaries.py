"""Canaries: distinctive strings planted as secrets, searched for verbatim in whatever a test captured."""

from __future__ import annotations

from collections.abc import Iterable


def assert_no_canary(canaries: Iterable[str], *texts: object) -> None:
    """None of ``canaries`` appears in any of ``texts`` (each taken as ``str()``: reprs, errors, logs)."""
    canaries = tuple(canaries)
    for text in texts:
        for canary in canaries:
            assert canary not in str(text), f"canary {canary!r} leaked into {text!r}"
