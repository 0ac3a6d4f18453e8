"""The fake's contract-variant switch, as tests, ``make demo`` and ``cooked-fake`` use it."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, FakeCooked, demo

pytestmark = pytest.mark.tooling


def search(fake: FakeCooked) -> object:
    with httpx.Client(base_url=fake.base_url) as http:
        http.post("/api/public/login", json={"username": SEED_LOGIN, "password": SEED_PASSWORD})
        return http.get("/api/user/recipes/search", params={"query": "soup"}).json()


def test_the_control_url_switches_variants_and_reset_restores_the_constructors(fake: FakeCooked) -> None:
    assert isinstance(search(fake), dict)
    answer = httpx.post(f"{fake.base_url}/_fake/variants", json={"variants": ["bare-lists"]})
    assert answer.json() == {"variants": ["bare-lists"]}
    assert isinstance(search(fake), list)
    refused = httpx.post(f"{fake.base_url}/_fake/variants", json={"variants": ["nope"]})
    assert refused.status_code == 400 and "unknown variant 'nope'" in refused.text
    fake.reset()
    assert isinstance(search(fake), dict)


def test_observed_means_every_variant_but_drifted() -> None:
    fake = FakeCooked(variants=["observed"])
    assert fake.variants == {"bare-lists", "question-flags", "extract-id", "login-403"}


def test_cooked_fake_takes_variant_flags() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cooked_fake", "--variant", "nope"], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2 and "invalid choice: 'nope'" in done.stderr
    help_text = subprocess.run(
        [sys.executable, "-m", "cooked_fake", "--help"], capture_output=True, text=True, timeout=30
    ).stdout
    help_text = "".join(help_text.split())  # argparse wraps, even at hyphens
    for name in ("bare-lists", "question-flags", "extract-id", "login-403", "drifted", "observed"):
        assert name in help_text


def test_the_demo_runs_its_whole_journey_against_every_observed_variant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The demo's code in this process (as tests/fake/test_demo.py), driving the real cooked-mcp."""
    code = demo.main(["--variant", "observed"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "bare-lists, extract-id, login-403, question-flags" in out
    assert "The demo stopped" not in out
