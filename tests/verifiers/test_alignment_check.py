"""The alignment check on the demo's two reproductions, and `sabench check`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sabench.benchmark.dataset import load_paper
from sabench.verifiers.alignment import PASS_EXPECTED, check_repository

DEMO = Path(__file__).resolve().parents[2] / "benchmark" / "demo"
PAPER = load_paper(DEMO / "papers" / "smoothlr")


def failing(repo: str) -> set[str]:
    return {r.id for r in check_repository(PAPER, DEMO / "repos" / repo) if not r.passed}


def test_drifted_values_fail_and_the_faithful_values_pass() -> None:
    faithful, drifted = failing("faithful"), failing("drifted")
    # Weight decay 5e-3 for 5e-4 and a step decay without the final learning rate 1e-3.
    assert {"smoothlr-D1-002", "smoothlr-D1-003"} <= drifted
    assert not {"smoothlr-D1-002", "smoothlr-D1-003"} & faithful
    assert len(faithful) < len(drifted)


def test_failing_claims_carry_reasons_and_evidence() -> None:
    results = {r.id: r for r in check_repository(PAPER, DEMO / "repos" / "drifted")}
    decay = results["smoothlr-D1-002"]
    assert any("0.0005" in reason for reason in decay.reasons)
    assert decay.evidence and all(":" in ref for ref in decay.evidence)


def test_sabench_check_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sabench.benchmark.cli", "check", str(DEMO / "repos" / "drifted"),
         "--paper", "smoothlr", "--papers", str(DEMO / "papers"), "--json"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["total"] == len(PAPER.claims) == len(report["claims"])
    assert set(report["claims"][0]) >= {"id", "dimension", "passed", "reasons", "evidence"}
    assert report["passed"] == sum(c["passed"] for c in report["claims"])


def test_a_claim_failing_on_its_expected_score_says_so_first() -> None:
    # what the offline checks note (values not set, stubs, comments) follows as hints
    results = check_repository(PAPER, DEMO / "repos" / "drifted")
    low = [r for r in results if r.expected_score < PASS_EXPECTED]
    assert low
    for r in low:
        assert r.reasons[0] == ("too little of the claim is found in the code (expected "
                                f"official score {r.expected_score:.4f}, below "
                                f"{PASS_EXPECTED:g})"), r.reasons
    assert not any(reason.startswith("too little") for r in results if r not in low
                   for reason in r.reasons)
