"""The alignment-first scaffold's check step: is each claim implemented as the paper says?

Checkers are registered by name in `CHECKERS`; each takes the paper (with the claims to check:
the scaffold's own ledger, or the gold claims in the oracle ablation), a repository folder and
the ids of the claims to check (a batch: the graph sends one batch per dimension), and returns a
`ClaimResult` per claim: pass or fail, reasons a repair can act on, evidence locations.

- `alignment` (the scaffold's default): the offline judge's expected official score against a
  threshold, and the deterministic rules of `alignment_values` (values set as stated),
  `alignment_variants` (a value per model size, in that size's own section),
  `alignment_sizes` (a size written as one number repeated, `512×512`, held in every entry),
  `alignment_rules` (no stub, not docs only, named protocol objects present, steps in order)
  `alignment_formulas` (signs, scale factors, steps that read what a later step computes)
  `alignment_structure` (code one operator away from the paper's formula, in the claim's
  code or, where no code computes the formula as written, anywhere; or from the formula its
  own comment writes), `alignment_idioms` (arithmetic every paper means the same
  by, written the other way round: `pred + target`, `/ (n - eps)`) and `alignment_twins` (a
  copy of an expression that the repository's other copies outvote by one operator) and
  `alignment_wording` (what the claim's words fix: a divisor one apart from the claim's,
  weight decay the claim keeps out of the gradient added to it): a claim
  passes when its expected score reaches the threshold and no rule finds a problem.
- `offline`: the verifiers' alignment check (`sabench.verifiers.alignment`): the expected score
  against the same threshold, plus the rule that a numerical claim none of whose values is in
  the code fails.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path

import numpy as np

from sabench.scaffolds import alignment_arguments as arguments
from sabench.scaffolds import alignment_formulas as formulas
from sabench.scaffolds import alignment_idioms as idioms
from sabench.scaffolds import alignment_rules as rules
from sabench.scaffolds import alignment_sizes as sizes
from sabench.scaffolds import alignment_structure as structure
from sabench.scaffolds import alignment_twins as twins
from sabench.scaffolds import alignment_values as values
from sabench.scaffolds import alignment_variants as variants
from sabench.scaffolds import alignment_wording as wording
from sabench.verifiers.alignment import CHECKERS as VERIFIER_CHECKERS
from sabench.verifiers.alignment import ClaimResult, problems, too_little
from sabench.verifiers.checks import ClaimCheck, check_claim
from sabench.verifiers.index import RepoIndex, cycle_collection_paused
from sabench.verifiers.judge import Judge, check_repository
from sabench.verifiers.offline import Calibration, OfflineJudge, claim_features
from sabench.verifiers.shown import PaperTerms
from sabench.verifiers.spec import Claim, Dimension, PaperSpec

LEVELS = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
#: Expected official score from which a claim can pass, per dimension. Chosen on the 168
#: complete development runs (expected scores leave-papers-out) as the thresholds that pass the
#: most claims the official judge scored >= 0.75 while passing at most 9% of those it scored 0;
#: `tests/perf/bench_alignment_check.py bands` also measures them chosen without the held-out
#: papers.
THRESHOLDS: dict[str, float] = {"D1": 0.21, "D2": 0.21, "D3": 0.24, "D4": 0.25}
RULES = ("values", "stub", "docs_only", "entities", "operations", "order")

#: A checker: (paper, repository, ids of the claims to check or None for all) -> results.
Checker = Callable[[PaperSpec, Path, Collection[str] | None], list[ClaimResult]]


def verifier_checker(name: str) -> Checker:
    """A checker of `sabench.verifiers.alignment`, restricted to a batch of claims."""

    def check(spec: PaperSpec, repo: Path, ids: Collection[str] | None) -> list[ClaimResult]:
        results = VERIFIER_CHECKERS[name](spec, repo)
        return results if ids is None else [r for r in results if r.id in set(ids)]

    return check


class AlignmentResult(ClaimResult):
    """The check of one claim, with the rules that failed it and where to repair."""

    findings: list[str] = []
    fix_in: list[str] = []
    values_bound: bool = False


def check_alignment(spec: PaperSpec, repo: Path, ids: Collection[str] | None = None, *,
                    calibration: Calibration | None = None,
                    thresholds: Mapping[str, float] | None = None,
                    rules_on: Collection[str] = RULES) -> list[AlignmentResult]:
    """Check claims of `spec` (those in `ids`, default all) against the repository.

    Args:
        spec: the paper and its claims (all of them: term rarity is the paper's).
        repo: the repository folder.
        ids: the claims to check.
        calibration: the offline judge's calibration (default: the committed one).
        thresholds: expected official score from which a claim can pass, per dimension
            (default `THRESHOLDS`).
        rules_on: the deterministic rules applied (`RULES`).
    """
    root = check_repository(repo)
    wanted = [c for c in spec.claims if ids is None or c.id in set(ids)]
    judge = OfflineJudge(calibration=calibration)
    with cycle_collection_paused():
        index = RepoIndex.build(root)
        paper = PaperTerms.of([claim.text for claim in spec.claims])
        checks = {c.id: check_claim(index, c, judge.k, paper) for c in wanted}
        rows = [claim_features(checks[c.id], len(spec.claims)) for c in wanted]
        expected = (judge.probabilities([c.dimension for c in wanted], rows) @ LEVELS
                    if wanted else [])
        cut = {**THRESHOLDS, **(thresholds or {})}
        stated = values.paper_values((c.text for c in spec.claims), spec.markdown)
        waived = idioms.waived([c.text for c in spec.claims])
        results = [verdict(index, c, checks[c.id], float(e), cut[c.dimension.value], rules_on,
                           stated, waived) for c, e in zip(wanted, expected, strict=True)]
        index.release()
    return results


def verdict(index: RepoIndex, claim: Claim, check: ClaimCheck, expected: float,
            threshold: float, rules_on: Collection[str],
            paper: values.PaperValues | None = None,
            waived: frozenset[str] = frozenset()) -> AlignmentResult:
    """The claim's result; `paper` holds the values all the paper's claims state (a value
    the paper states for another setting of a quantity is not a drift of this one),
    `waived` the idioms the paper departs from (`alignment_idioms`)."""
    found, values_bound = rule_findings(index, claim, check, rules_on, paper, waived)
    failing = [f for f in found if f.fails]
    # A numerical claim whose every stated value is bound to a name of its quantity is
    # implemented, whatever the judge would score the windows it would be shown.
    bound_d1 = values_bound and claim.dimension == Dimension.D1 and "values" in rules_on
    scored = expected >= threshold or bound_d1
    passed = scored and not failing
    reasons = [f.reason for f in found] + [p for p in problems(check) if passed or not found]
    if not scored:
        reasons.insert(0, too_little(expected, threshold))
    return AlignmentResult(
        id=claim.id, dimension=claim.dimension, passed=passed,
        expected_score=round(min(1.0, max(0.0, expected)), 4), reasons=list(dict.fromkeys(
            reasons)), evidence=[e.ref for e in check.evidence],
        findings=sorted({f.rule for f in failing}), fix_in=[f.where for f in failing if f.where],
        values_bound=bound_d1)


def rule_findings(index: RepoIndex, claim: Claim, check: ClaimCheck,
                  rules_on: Collection[str], paper: values.PaperValues | None = None,
                  waived: frozenset[str] = frozenset()) -> tuple[list[rules.Finding], bool]:
    """The rules' findings, and whether every value the claim states is bound."""
    found: list[rules.Finding] = []
    bound = False
    if "values" in rules_on:
        found, bound = values.value_findings(index, claim, check, paper)
        seen = {f.where for f in found}
        found += [f for f in [*arguments.argument_findings(index, claim, check),
                              *variants.variant_findings(index, claim),
                              *sizes.size_findings(index, claim)]
                  if f.where not in seen]
    if "stub" in rules_on:
        found += rules.stub_findings(index, claim, check)
        found += rules.stub_call_findings(index, claim, check)
        seen = {f.where for f in found}
        found += [f for f in rules.concrete_stub_findings(index, claim, check)
                  if f.where not in seen]
    if "docs_only" in rules_on:
        found += rules.docs_findings(index, claim)
    if "entities" in rules_on:
        found += rules.entity_findings(check)
    if "operations" in rules_on:
        found += rules.operation_findings(index, claim)
        found += [rules.Finding("operations", reason, where)
                  for reason, where in [*formulas.operator_findings(index, claim, check),
                                         *formulas.factor_findings(index, claim, check),
                                         *structure.structure_findings(index, claim, check),
                                         *structure.comment_findings(index, claim, check),
                                         *structure.senseless_findings(index, claim, check),
                                         *idioms.idiom_findings(index, claim, check, waived),
                                         *twins.twin_findings(index, claim, check),
                                         *wording.wording_findings(index, claim, check)]]
    if "order" in rules_on:
        found += rules.order_findings(index, claim)
        found += [rules.Finding("order", reason, where)
                  for reason, where in formulas.order_findings(index, claim, check)]
    return found, bound


#: Checkers by name: a new one is a function and one line here. `judge` (the run's own judge
#: inside the loop, an ablation) is built per run by `judge_checker`.
CHECKERS: dict[str, Checker] = {"alignment": check_alignment,
                                "offline": verifier_checker("offline")}
JUDGE_CHECKER = "judge"


class UnknownChecker(ValueError):
    """A checker name that is not registered (one line)."""


def get_checker(name: str, judge: Judge | None = None, threshold: float = 0.5) -> Checker:
    """The checker registered as `name`; `judge` makes one of the run's judge (`judge`)."""
    if name == JUDGE_CHECKER:
        if judge is None:
            raise UnknownChecker("checker 'judge' needs the run's judge (--judge), and this run "
                                 "has none")
        return judge_checker(judge, threshold)
    if name not in CHECKERS:
        known = ", ".join([*CHECKERS, JUDGE_CHECKER])
        raise UnknownChecker(f"unknown checker {name!r} (known: {known})")
    return CHECKERS[name]


def judge_checker(judge: Judge, threshold: float) -> Checker:
    """The judge as the check step: a claim passes when the judge scores it at least
    `threshold`; the judge's reasoning is the reason, its evidence the evidence. A judgement
    that failed fails the claim with the judge's error as the reason (never a silent pass)."""

    def check(spec: PaperSpec, repo: Path, ids: Collection[str] | None) -> list[ClaimResult]:
        wanted = None if ids is None else set(ids)
        batch = spec if wanted is None else spec.model_copy(
            update={"claims": tuple(c for c in spec.claims if c.id in wanted)})
        results = []
        for dimension, verdict in judge.score(batch, repo).verdicts():
            failed = verdict.score is None
            reasons = [f"the judge failed: {verdict.error}"] if failed else (
                [] if verdict.score >= threshold else
                [f"the judge scores it {verdict.score:g} (< {threshold:g}): "
                 f"{verdict.judge_reasoning}".strip()])
            results.append(ClaimResult(
                id=verdict.id, dimension=dimension,
                passed=not failed and verdict.score >= threshold,
                expected_score=verdict.expected_score if verdict.expected_score is not None
                else verdict.score or 0.0, reasons=reasons,
                evidence=list(verdict.evidence_refs)))
        return results

    return check


_SKIP = {".git", "__pycache__", ".venv", "node_modules"}
_TEXT = {".py", ".yaml", ".yml", ".json", ".toml", ".cfg", ".ini", ".sh"}


def claim_locations(repo: Path, ids: Iterable[str], max_bytes: int = 1_000_000
                    ) -> dict[str, str]:
    """Where the code tags each claim (`# <claim id>` on the line that realises it), as
    `file:line` of the first tagged line that is not only a comment."""
    wanted = sorted(set(ids), key=len, reverse=True)
    if not wanted or not repo.is_dir():
        return {}
    pattern = re.compile("|".join(re.escape(i) + r"(?![\w-])" for i in wanted))
    found: dict[str, str] = {}
    for path in sorted(repo.rglob("*")):
        if not path.is_file() or path.suffix not in _TEXT or _SKIP & set(path.parts) or \
                path.is_symlink() or path.stat().st_size > max_bytes:
            continue
        rel = path.relative_to(repo).as_posix()
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for number, line in enumerate(lines, 1):
            if line.lstrip().startswith("#"):
                continue
            for match in pattern.finditer(line):
                found.setdefault(match.group(0), f"{rel}:{number}")
    return found
