"""The alignment check: is each claim implemented as the paper says? Pass or fail, with reasons
and evidence locations, for a repository being written.

It answers a different question from the benchmark's judge (what score would the official judge
give): a claim passes when the offline judge expects the official judge to give it at least
partial credit (`PASS_EXPECTED`), except a numerical claim (D1) none of whose stated values is
set anywhere in the code: its value has drifted or was never set. Every claim, passing or not,
carries the concrete problems
the checks found (numbers of the claim missing from the code, a stub where the claim's code
should be, the claim restated only in comments or docs, placeholder markers), which is what a
repair step acts on. Checkers are registered by name in `CHECKERS`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from sabench.verifiers.checks import ClaimCheck
from sabench.verifiers.spec import Dimension, PaperSpec

#: Expected official score from which a claim passes. With the D1 value rule, on the 9,027
#: claims of the complete development runs, the check passes 91.9% of the claims the official
#: judge scored >= 0.75 and 9.7% of those it scored 0 (in sample: the offline judge was
#: calibrated on these runs).
PASS_EXPECTED = 0.22


class ClaimResult(BaseModel):
    """The check of one claim."""

    model_config = ConfigDict(frozen=True)

    id: str
    dimension: Dimension
    passed: bool
    expected_score: float
    reasons: list[str] = []
    evidence: list[str] = []


def problems(check: ClaimCheck) -> list[str]:
    """What the checks found wrong with one claim's implementation, in words a repair can use."""
    found = []
    missing = [n for n in check.numbers if n not in check.numbers_in_code]
    if missing:
        found.append(f"values of the claim not set in code: {', '.join(missing)}")
    for mismatch in check.value_mismatches[:2]:
        found.append(f"{mismatch.name} = {mismatch.found} at {mismatch.file}:{mismatch.line} "
                     f"may be the claim's quantity with another value")
    if check.function_stub:
        found.append(f"the best-matching function {check.function} is a stub "
                     f"({check.function_stub})")
    if check.placeholder_near:
        found.append("placeholder markers (TODO, dummy, simplified, ...) near the evidence")
    if check.docs_tests_only:
        found.append("described only in comments, docstrings, docs or tests, not in code")
    if check.term_coverage < 0.3:
        found.append("most of the claim's terms appear nowhere in the code")
    if check.phases and check.phase_order is not None and check.phase_order < 1.0:
        found.append("the phases it names are not called in the stated order")
    return found


def too_little(expected: float, threshold: float) -> str:
    """The reason a claim fails when the code shows too little of it: said first, so that a
    repair reads the hints after it as hints, not as the cause."""
    return (f"too little of the claim is found in the code (expected official score "
            f"{max(0.0, expected):.4f}, below {threshold:g})")


def values_absent(check: ClaimCheck) -> bool:
    """A numerical claim none of whose stated values appears in executable code."""
    return check.dimension == Dimension.D1 and bool(check.numbers) and not check.numbers_in_code


def check_repository(spec: PaperSpec, repo: Path) -> list[ClaimResult]:
    """Every claim of `spec` checked against `repo` with the offline judge's checks."""
    from sabench.verifiers.offline import OfflineJudge

    score, checks = OfflineJudge().assess(spec, repo)
    results = []
    for dimension in score.dimensions.values():
        for verdict in dimension.claims:
            check = checks[verdict.id]
            expected = float(verdict.expected_score or 0.0)
            passed = expected >= PASS_EXPECTED and not values_absent(check)
            reasons = problems(check)
            if expected < PASS_EXPECTED:
                reasons.insert(0, too_little(expected, PASS_EXPECTED))
            results.append(ClaimResult(id=verdict.id, dimension=check.dimension, passed=passed,
                                       expected_score=round(expected, 4), reasons=reasons,
                                       evidence=list(verdict.evidence_refs)))
    return results


Checker = Callable[[PaperSpec, Path], list[ClaimResult]]
#: Checkers by name: a new one is a function and one line here.
CHECKERS: dict[str, Checker] = {"offline": check_repository}
