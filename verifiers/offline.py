"""The offline judge: deterministic, free, no network; calibrated to the official LLM judges.

For each claim the checks (`checks.check_claim`) give a handful of features (`claim_features`),
most of them about what the official judge itself looks at: its deterministic evidence search
and gates (`official_search`) and the two windows its LLM is shown (`shown`). A small
ordinal-logistic model turns them into a probability for each of the five score levels: a latent
score `eta = w·x + b[dimension]` and, per emulated judge, four increasing cut points,
`P(score <= level k) = sigmoid(cut_k - eta)`; per dimension, a shift of the three upper cuts
(protocol and ordering claims reach 0.25 as value claims do, but seldom 0.5). Its parameters (a
few dozen) are fitted by `sabench calibrate` on the development runs and committed in
`calibration.json` with the date and the data they came from.

Verdicts must be one of the five levels. Within each dimension of a repository the levels are
apportioned so that the dimension score equals the model's expected score (largest-remainder
rounding of the expected values): claims with the highest expected score are rounded up. This
keeps repository and configuration means unbiased, which plain per-claim rounding is not.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from sabench.verifiers.checks import ClaimCheck, check_claim
from sabench.verifiers.index import RepoIndex, cycle_collection_paused
from sabench.verifiers.judge import check_repository
from sabench.verifiers.shown import PaperTerms
from sabench.verifiers.spec import Claim, Dimension, PaperSpec
from sabench.verifiers.types import SCORE_LEVELS, ClaimVerdict, PaperScore

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
_LEVELS = np.array(SCORE_LEVELS)
# Which cut points a dimension's shift moves: all but the lowest (0 | 0.25), so a dimension can
# be as easy to get 0.25 in and still much harder to get 0.5 or more in.
UPPER_CUTS = np.array([0.0, 1.0, 1.0, 1.0])


class CalibrationError(ValueError):
    """A calibration file that cannot be used (names the file and the entry)."""


class Calibration(BaseModel):
    """Fitted parameters of the offline judge's ordinal model, with their provenance."""

    model_config = ConfigDict(frozen=True)

    fitted_at: str
    data: str
    features: list[str]
    weights: dict[str, float]
    dimension_offsets: dict[Dimension, float]
    cutpoints: dict[str, list[float]] = Field(description="per judge model, 4 increasing cuts")
    dimension_cut_shifts: dict[Dimension, float] = Field(
        default={}, description="per dimension, added to the three upper cuts (D1: 0)")
    default_judge: str
    cross_validation: dict[str, float] = {}
    papers: list[str] = Field(default=[], description="ids of the papers it was fitted on")

    @property
    def n_parameters(self) -> int:
        shifts = sum(1 for v in self.dimension_cut_shifts.values() if v != 0.0)
        return (len(self.weights) + len(self.dimension_offsets) + shifts
                + 4 * len(self.cutpoints))

    def cuts(self, judge: str | None, dimension: Dimension | None = None) -> np.ndarray:
        """The cut points of the emulated judge (the default judge when unknown or None),
        with the dimension's shift of the upper cuts when a dimension is given."""
        cuts = np.array(self.cutpoints.get(judge or self.default_judge,
                                           self.cutpoints[self.default_judge]))
        if dimension is not None:
            cuts = cuts + self.dimension_cut_shifts.get(dimension, 0.0) * UPPER_CUTS
        return cuts

    @classmethod
    def load(cls, path: Path = CALIBRATION_FILE) -> Calibration:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            calibration = cls.model_validate(data)
        except (OSError, ValueError) as exc:
            raise CalibrationError(f"{path}: unusable calibration: {exc}") from exc
        missing = [f for f in calibration.features if f not in calibration.weights]
        if missing or calibration.default_judge not in calibration.cutpoints:
            raise CalibrationError(f"{path}: weights missing for {missing} or no cut points "
                                   f"for default judge {calibration.default_judge!r}")
        return calibration

    def dump(self, path: Path = CALIBRATION_FILE) -> None:
        path.write_text(self.model_dump_json(indent=1) + "\n", encoding="utf-8")


@lru_cache(maxsize=4)
def default_calibration(path: Path = CALIBRATION_FILE) -> Calibration:
    return Calibration.load(path)


# --------------------------------------------------------------------- features
FEATURES: tuple[str, ...] = (
    "official_gate", "shown_terms_len", "shown_terms_sq", "shown_repo_rare",
    "shown_paper_rare", "shown_numbers_d1", "shown_bound", "shown_bigrams", "shown_title",
    "shown_symbols", "shown_stub", "shown_same_file", "shown_density", "shown_operations",
    "shown_assigned_d12", "kept_coverage", "repo_terms", "term_coverage_sq", "placeholder",
    "no_numbers", "phases_found", "paper_claims",
)


def claim_features(check: ClaimCheck, n_claims: int = 50) -> dict[str, float]:
    """The judge's inputs for one claim, each in [0, 1].

    Most describe what the official judge looks at (`official_search`, `shown`): a gate gives
    0 without the LLM; otherwise the LLM sees the claim and two 8-line windows, so how those
    windows carry the claim is what it credits. Feature set chosen by leave-papers-out
    cross-validation on the development runs.

    Args:
        check: the claim's check outcomes.
        n_claims: how many claims the paper has (papers with more claims score lower).
    """
    shown = check.shown
    return {
        "official_gate": float(check.official_gate is not None),
        # Long claims covered as well as short ones are the more convincing.
        "shown_terms_len": shown.terms * min(1.0, math.log1p(check.claim_chars) / 7.5),
        "shown_terms_sq": shown.terms ** 2,
        "shown_repo_rare": shown.repo_rare_terms,
        "shown_paper_rare": shown.paper_rare_terms,
        # Values decide numerical claims only.
        "shown_numbers_d1": shown.numbers if check.dimension == Dimension.D1 else 0.0,
        "shown_bound": shown.bound_numbers,
        "shown_bigrams": shown.bigrams,
        "shown_title": shown.title_terms,
        "shown_symbols": shown.symbols,
        "shown_stub": min(1.0, shown.stub_markers / 2.0),
        "shown_same_file": float(shown.same_file),
        "shown_density": shown.density,
        # The named operations (exp, softmax, norm, ...) called in the windows' code.
        "shown_operations": shown.operations,
        # A defined name (`lr = 3e-4`, `Loss: ...`) assigned in the windows: values, formulas.
        "shown_assigned_d12": (shown.assigned_name
                               if check.dimension in (Dimension.D1, Dimension.D2) else 0.0),
        "kept_coverage": check.kept_coverage,
        "repo_terms": check.repo_terms,
        "term_coverage_sq": check.term_coverage ** 2,
        "placeholder": float(check.placeholder_near),
        "no_numbers": float(not check.numbers),
        "phases_found": len(check.phases_found) / check.phases if check.phases else 0.0,
        "paper_claims": math.log(max(1, n_claims)) / 5.0,
    }


def level_probabilities(x: np.ndarray, dims: np.ndarray, cuts: np.ndarray, weights: np.ndarray,
                        offsets: np.ndarray) -> np.ndarray:
    """P(level) for each row: rows of `x` (features), `dims` (0–3), `cuts` (n × 4)."""
    eta = x @ weights + offsets[dims]
    below = 1.0 / (1.0 + np.exp(-(cuts - eta[:, None])))
    below = np.concatenate([np.zeros((len(eta), 1)), below, np.ones((len(eta), 1))], axis=1)
    return np.clip(np.diff(below, axis=1), 0.0, 1.0)


def apportion(expected: np.ndarray) -> np.ndarray:
    """Five-level scores whose mean equals the mean of `expected` (largest remainder).

    Each value is floored to a level; the remaining quarter-steps go to the claims with the
    largest remainders (ties to the earlier claim), so ranking within the group is kept.
    """
    quarters = np.clip(expected, 0.0, 1.0) * 4.0
    base = np.floor(quarters)
    remainder = quarters - base
    extra = int(round(float(remainder.sum())))
    order = np.argsort(-remainder, kind="stable")
    base[order[:extra]] += 1
    return np.minimum(base, 4.0) / 4.0


# --------------------------------------------------------------------- the judge
class OfflineJudge:
    """Deterministic judge on the repository index and per-claim checks ($0, no network).

    Args:
        emulate: judge model whose scoring to reproduce (`gpt-5.5`, `deepseek-v4-pro`);
            defaults to the calibration's default, the stricter judge.
        calibration: fitted parameters; defaults to the committed `calibration.json`.
        k: evidence windows kept per claim.
    """

    def __init__(self, emulate: str | None = None, calibration: Calibration | None = None,
                 k: int = 8) -> None:
        self.calibration = calibration or default_calibration()
        if emulate is not None and emulate not in self.calibration.cutpoints:
            raise CalibrationError(f"cannot emulate judge {emulate!r}: calibrated for "
                                   f"{sorted(self.calibration.cutpoints)}")
        self.emulate = emulate or self.calibration.default_judge
        self.k = k

    @property
    def name(self) -> str:
        return f"offline:{self.emulate}"

    def score(self, spec: PaperSpec, repo: Path) -> PaperScore:
        """Judge every claim of `spec` against the repository at `repo`."""
        score, _ = self.assess(spec, repo)
        return score

    def assess(self, spec: PaperSpec, repo: Path) -> tuple[PaperScore, dict[str, ClaimCheck]]:
        """The paper score and the per-claim checks behind it (for taxonomy and repair)."""
        root = check_repository(repo)
        with cycle_collection_paused():
            index = RepoIndex.build(root)
            paper = PaperTerms.of([claim.text for claim in spec.claims])
            checks = {claim.id: check_claim(index, claim, self.k, paper) for claim in spec.claims}
            verdicts = self.verdicts(spec.claims, checks)
            index.release()
        notes = _index_notes(index)
        score = PaperScore.of(spec.paper_id, verdicts, repo_path=str(repo), model=self.name,
                              scored_at=_now(), **notes)
        return score, checks

    def verdicts(self, claims: tuple[Claim, ...] | list[Claim],
                 checks: dict[str, ClaimCheck]) -> dict[Dimension, list[ClaimVerdict]]:
        """Five-level verdicts for the claims from their checks."""
        out: dict[Dimension, list[ClaimVerdict]] = {}
        for dim in Dimension:
            group = [c for c in claims if c.dimension == dim]
            if group:
                out[dim] = self._dimension(group, checks, len(claims))
        return out

    def probabilities(self, dims: list[Dimension], rows: list[dict[str, float]]) -> np.ndarray:
        cal = self.calibration
        x = np.array([[row[f] for f in cal.features] for row in rows], dtype=float)
        weights = np.array([cal.weights[f] for f in cal.features])
        offsets = np.array([cal.dimension_offsets.get(d, 0.0) for d in Dimension])
        d_idx = np.array([list(Dimension).index(d) for d in dims])
        cuts = np.stack([cal.cuts(self.emulate, d) for d in dims])
        return level_probabilities(x, d_idx, cuts, weights, offsets)

    def _dimension(self, group: list[Claim], checks: dict[str, ClaimCheck],
                   n_claims: int) -> list[ClaimVerdict]:
        rows = [claim_features(checks[c.id], n_claims) for c in group]
        probs = self.probabilities([c.dimension for c in group], rows)
        expected = probs @ _LEVELS
        levels = apportion(expected)
        out = []
        for claim, p, level, value in zip(group, probs, levels, expected, strict=True):
            check = checks[claim.id]
            verdict = ClaimVerdict(
                id=claim.id, score=float(level), judge=self.name,
                confidence=round(float(p[list(SCORE_LEVELS).index(level)]), 3),
                expected_score=round(min(1.0, max(0.0, float(value))), 4),
                evidence_refs=[e.ref for e in check.evidence],
                judge_reasoning=reasoning(check))
            out.append(_categorised(verdict, claim.dimension, check))
        return out


def reasoning(check: ClaimCheck) -> str:
    """A one-line account of the checks behind a verdict."""
    parts: list[str] = [_official_account(check)]
    if check.numbers:
        parts.append(f"{len(check.numbers_in_code)}/{len(check.numbers)} claim values in code or "
                     f"config ({len(check.numbers_bound)} bound to a related name)")
    if check.value_mismatches and len(check.numbers_in_code) < len(check.numbers):
        m = check.value_mismatches[0]
        parts.append(f"related name {m.name}={m.found} at {m.file}:{m.line}")
    parts.append(f"terms {check.term_coverage:.0%} in code, first evidence window "
                 f"{check.window_coverage:.0%}")
    if check.function:
        parts.append(f"best function {check.function} ({check.function_coverage:.0%})")
    if check.stub_detected:
        parts.append("stub or placeholder near the evidence")
    if check.docs_tests_only:
        parts.append("matches mostly in docs/comments/tests")
    if check.entities:
        parts.append(f"{len(check.entities_in_code)}/{len(check.entities)} named datasets, "
                     "baselines or metrics in code")
    if check.phases:
        order = "n/a" if check.phase_order is None else f"{check.phase_order:.0%}"
        parts.append(f"{len(check.phases_found)}/{check.phases} steps found, in order {order}")
    return "; ".join(parts)


_GATE_TEXT = {
    "no_evidence": "no code/config evidence",
    "no_numbers": "an experiment claim whose numbers are not in the code evidence",
    "weak": "only weak or stub-like evidence",
    "theory": "a theory-style claim with a single strong window",
}


def _official_account(check: ClaimCheck) -> str:
    """What the official judge would do: gate the claim to 0, or show its LLM two windows."""
    if check.official_gate is not None:
        return (f"official search gates this claim to 0 "
                f"({_GATE_TEXT.get(check.official_gate, check.official_gate)})")
    shown = check.shown
    return (f"official search shows {shown.windows} window(s) holding {shown.terms:.0%} of the "
            f"claim's terms" + (f" and {shown.numbers:.0%} of its values" if check.numbers
                                else ""))


def _categorised(verdict: ClaimVerdict, dim: Dimension, check: ClaimCheck) -> ClaimVerdict:
    try:
        from sabench.verifiers.taxonomy import classify_verdict
    except ImportError:  # taxonomy is optional for the judge
        return verdict
    category = classify_verdict(verdict, dim, check.evidence, check)
    return verdict if category is None else verdict.model_copy(
        update={"failure_category": category})


def _index_notes(index: RepoIndex) -> dict[str, object]:
    """Issues met while indexing, kept in the result (skipped files, unparsable Python)."""
    notes: dict[str, object] = {}
    if index.skipped:
        notes["skipped_files"] = [f"{s.path}: {s.reason}" for s in index.skipped[:50]]
    errors = [f"{f.path}: {f.parse_error}" for f in index.files.values() if f.parse_error]
    if errors:
        notes["parse_errors"] = errors[:50]
    if not index.files:
        notes["empty_repository"] = True
    return notes


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
