"""Calibration of the offline judge on scored runs (`sabench calibrate`).

A runs root (the layout `unpack.sh` produces: `runs/index.json`, `runs/<config>/<paper>/repo/`,
`official_scores/<config>/<paper>.json`) gives, for every complete run, the offline checks of each
claim and the official score of that claim. `collect` turns them into feature rows (the expensive
part, done once, in parallel); `fit` fits the offline judge's ordinal model to them by maximum
likelihood with a small ridge penalty; `cross_validate` refits with whole papers held out, so the
figures say how the judge does on papers it was not fitted on.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

from sabench.benchmark.dataset import load_papers
from sabench.verifiers.checks import check_claim
from sabench.verifiers.files import inside, plain_name, read_json
from sabench.verifiers.index import RepoIndex, cycle_collection_paused
from sabench.verifiers.judge import check_repository
from sabench.verifiers.offline import (
    FEATURES,
    UPPER_CUTS,
    Calibration,
    apportion,
    claim_features,
    level_probabilities,
)
from sabench.verifiers.shown import PaperTerms
from sabench.verifiers.spec import Dimension, PaperSpec
from sabench.verifiers.types import SCORE_LEVELS, PaperScore

_DIMS = list(Dimension)
RIDGE = 0.5
# Per-dimension shift of the cut points above the lowest (D1 is the reference): protocol and
# ordering claims reach 0.25 as easily as value claims but rarely 0.5, so the same evidence
# must not carry them as high. Mirrors `offline.UPPER_CUTS`.
_N_SHIFTS = len(_DIMS) - 1
_UPPER = UPPER_CUTS


class RunsIndexError(ValueError):
    """A runs root whose index or official scores cannot be used (names file and entry)."""


@dataclass(frozen=True)
class RunRef:
    """One run listed in `runs/index.json`."""

    config: str
    paper_id: str
    repo: Path
    official: Path
    judge_model: str
    complete: bool


@dataclass
class ClaimRow:
    claim_id: str
    dimension: Dimension
    features: dict[str, float]
    official: float | None


@dataclass
class RunRows:
    """The feature rows of one run and its official result."""

    run: RunRef
    claims: list[ClaimRow] = field(default_factory=list)
    official_overall: float | None = None
    official_dims: dict[str, float] = field(default_factory=dict)


def read_runs(runs_root: Path) -> list[RunRef]:
    """Every run of `runs_root/runs/index.json`; `complete` is False when cited files are missing.

    Raises:
        RunsIndexError: no readable index, or an entry without config/paper_id.
    """
    index = Path(runs_root) / "runs" / "index.json"
    data = read_json(index, RunsIndexError, "cannot read the runs index")
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise RunsIndexError(f"{index}: cannot read the runs index: expected an object with "
                             f"a 'runs' list")
    return [_run_ref(entry, f"{index}: runs[{i}]", Path(runs_root))
            for i, entry in enumerate(data["runs"])]


def _run_ref(entry: Any, where: str, runs_root: Path) -> RunRef:
    """One entry of the index; its files must lie inside the runs root."""
    if not isinstance(entry, dict) or not entry.get("config") or not entry.get("paper_id"):
        raise RunsIndexError(f"{where} needs 'config' and 'paper_id'")
    config, paper = str(entry["config"]), str(entry["paper_id"])
    if not (plain_name(config) and plain_name(paper)):
        raise RunsIndexError(f"{where}: config and paper_id must be plain names, not "
                             f"{config!r} / {paper!r}")
    files = {"repo": entry.get("repo") or f"runs/{config}/{paper}/repo",
             "official_score": (entry.get("official_score")
                                or f"official_scores/{config}/{paper}.json")}
    paths = {key: inside(runs_root, str(value)) for key, value in files.items()}
    for key, path in paths.items():
        if path is None:
            raise RunsIndexError(f"{where}.{key} {files[key]!r} leaves the runs root {runs_root}")
    return RunRef(config=config, paper_id=paper, repo=paths["repo"],
                  official=paths["official_score"],
                  judge_model=str(entry.get("judge_model") or ""),
                  complete=not entry.get("missing_cited_files"))


def run_rows(run: RunRef, spec: PaperSpec, k: int = 8) -> RunRows:
    """Index one run, check every claim, and pair the features with the official scores."""
    official = PaperScore.load(run.official) if run.official.exists() else None
    scores = {v.id: v.score for _, v in official.verdicts()} if official else {}
    rows = RunRows(run=run, official_overall=official.overall_score if official else None,
                   official_dims={str(d): r.score for d, r in official.dimensions.items()
                                  if r.score is not None} if official else {})
    paper = PaperTerms.of([claim.text for claim in spec.claims])
    with cycle_collection_paused():
        index = RepoIndex.build(check_repository(run.repo))
        for claim in spec.claims:
            check = check_claim(index, claim, k, paper)
            features = claim_features(check, len(spec.claims))
            rows.claims.append(ClaimRow(claim.id, claim.dimension, features,
                                        scores.get(claim.id)))
        index.release()
    return rows


def _run_rows_job(args: tuple[RunRef, PaperSpec]) -> RunRows:
    return run_rows(*args)


def collect(runs: list[RunRef], papers: dict[str, PaperSpec], jobs: int = 1,
            progress: Callable[[RunRows], None] | None = None) -> list[RunRows]:
    """Feature rows for the given runs, in their order (`jobs` worker processes)."""
    missing = sorted({r.paper_id for r in runs} - set(papers))
    if missing:
        raise RunsIndexError(f"runs refer to papers not in the dataset: {', '.join(missing)}")
    work = [(run, papers[run.paper_id]) for run in runs]
    if jobs <= 1:
        results = []
        for item in work:
            results.append(_run_rows_job(item))
            if progress:
                progress(results[-1])
        return results
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        results = []
        for rows in pool.map(_run_rows_job, work, chunksize=2):
            results.append(rows)
            if progress:
                progress(rows)
        return results


# --------------------------------------------------------------------- fitting
@dataclass
class _Design:
    x: np.ndarray
    dims: np.ndarray
    judge: np.ndarray
    level: np.ndarray
    judges: list[str]
    weight: np.ndarray


def dimension_weights(dimensions: list[Dimension]) -> np.ndarray:
    """Likelihood weights that give each dimension of a run the same total weight.

    A run's overall score is the mean of its dimension means, so one D4 claim of a run with two
    D4 claims moves it as much as ten D1 claims of a run with forty. Weighting every claim by
    `n / (n_dimensions * n_in_its_dimension)` makes the fit favour what the run and configuration
    scores are made of (the weights of a run sum to its claim count).
    """
    counts: dict[Dimension, int] = {}
    for dim in dimensions:
        counts[dim] = counts.get(dim, 0) + 1
    n = len(dimensions)
    return np.array([n / (len(counts) * counts[dim]) for dim in dimensions], dtype=float)


def _design(runs: Iterable[RunRows], features: list[str], judges: list[str],
            weighting: str = "dimension") -> _Design:
    x, dims, judge, level, weight = [], [], [], [], []
    for rr in runs:
        scored = [row for row in rr.claims if row.official is not None]
        if weighting == "dimension":
            weight.extend(dimension_weights([row.dimension for row in scored]))
        else:
            weight.extend([1.0] * len(scored))
        for row in scored:
            x.append([row.features[f] for f in features])
            dims.append(_DIMS.index(row.dimension))
            judge.append(judges.index(rr.run.judge_model))
            level.append(SCORE_LEVELS.index(row.official))
    w = np.array(weight, dtype=float)
    return _Design(np.array(x, dtype=float).reshape(len(x), len(features)), np.array(dims),
                   np.array(judge), np.array(level), judges,
                   w / w.mean() if len(w) else w)


def _cuts(raw: np.ndarray) -> np.ndarray:
    """Increasing cut points from unconstrained parameters (first, then log-gaps)."""
    return np.cumsum(np.concatenate(([raw[0]], np.exp(raw[1:]))))


def _negative_log_likelihood(theta: np.ndarray, d: _Design, nf: int
                             ) -> tuple[float, np.ndarray]:
    """The penalised negative log-likelihood of the ordinal model and its gradient."""
    weights, offsets = theta[:nf], theta[nf:nf + 4]
    shifts = np.concatenate(([0.0], theta[nf + 4:nf + 4 + _N_SHIFTS]))
    raw = theta[nf + 4 + _N_SHIFTS:].reshape(len(d.judges), 4)
    cuts = np.stack([_cuts(r) for r in raw])[d.judge] + shifts[d.dims][:, None] * _UPPER
    eta = d.x @ weights + offsets[d.dims]
    n = len(eta)
    # Padded cut points: level k lies between upper[k-1] and upper[k]; -inf / +inf at the ends.
    sig = 1.0 / (1.0 + np.exp(-(cuts - eta[:, None])))
    big_f = np.concatenate([np.zeros((n, 1)), sig, np.ones((n, 1))], axis=1)
    small_f = np.concatenate([np.zeros((n, 1)), sig * (1 - sig), np.zeros((n, 1))], axis=1)
    rows = np.arange(n)
    hi, lo = d.level + 1, d.level
    prob = np.clip(big_f[rows, hi] - big_f[rows, lo], 1e-12, 1.0)
    w = d.weight
    loss = float(-(w * np.log(prob)).sum() + RIDGE * np.sum(weights ** 2))
    d_eta = w * (small_f[rows, hi] - small_f[rows, lo]) / prob  # d(-log p)/d eta
    grad = np.zeros_like(theta)
    grad[:nf] = d.x.T @ d_eta + 2 * RIDGE * weights
    grad[nf:nf + 4] = np.bincount(d.dims, weights=d_eta, minlength=4)
    # d(-log p)/d cut_j: -f_j/p when j is the upper cut, +f_j/p when it is the lower one.
    d_cut = np.zeros((n, 4))
    upper = hi - 1 < 4
    d_cut[rows[upper], (hi - 1)[upper]] -= (w * small_f[rows, hi] / prob)[upper]
    lower = lo >= 1
    d_cut[rows[lower], (lo - 1)[lower]] += (w * small_f[rows, lo] / prob)[lower]
    # A dimension's shift moves its three upper cuts together.
    grad[nf + 4:nf + 4 + _N_SHIFTS] = np.bincount(d.dims, weights=d_cut @ _UPPER,
                                                 minlength=4)[1:]
    base = nf + 4 + _N_SHIFTS
    for j, r in enumerate(raw):
        mine = d.judge == j
        g_c = d_cut[mine].sum(axis=0)  # per cut point
        tail = np.cumsum(g_c[::-1])[::-1]  # cut i moves every cut from i on
        scale = np.concatenate(([1.0], np.exp(r[1:])))
        grad[base + 4 * j: base + 4 + 4 * j] = tail * scale
    return loss, grad


def fit(runs: list[RunRows], features: list[str] | None = None, data: str = "",
        weighting: str = "dimension") -> Calibration:
    """Fit the ordinal model on the claims of `runs` (official scores as labels).

    Args:
        runs: feature rows with official scores.
        features: feature names to use (default: all of `offline.FEATURES`).
        data: provenance recorded in the calibration.
        weighting: `dimension` (each dimension of a run weighs the same, as in its overall
            score; see `dimension_weights`) or `claim` (every claim weighs the same).
    """
    if weighting not in ("dimension", "claim"):
        raise ValueError(f"unknown weighting {weighting!r}: use 'dimension' or 'claim'")
    features = list(features or FEATURES)
    judges = sorted({rr.run.judge_model for rr in runs})
    design = _design(runs, features, judges, weighting)
    if len(design.level) == 0:
        raise RunsIndexError("no claim with an official score to calibrate on")
    nf = len(features)
    theta0 = np.zeros(nf + 4 + _N_SHIFTS + 4 * len(judges))
    result = minimize(_negative_log_likelihood, theta0, args=(design, nf), method="L-BFGS-B",
                      jac=True)
    theta = result.x
    shifts = np.concatenate(([0.0], theta[nf + 4:nf + 4 + _N_SHIFTS]))
    raw = theta[nf + 4 + _N_SHIFTS:].reshape(len(judges), 4)
    cutpoints = {j: [round(float(c), 4) for c in _cuts(r)] for j, r in zip(judges, raw,
                                                                           strict=True)}
    return Calibration(
        fitted_at=datetime.now(UTC).strftime("%Y-%m-%d"), data=data, features=features,
        weights={f: round(float(w), 4) for f, w in zip(features, theta[:nf], strict=True)},
        dimension_offsets={d: round(float(o), 4) for d, o in zip(_DIMS, theta[nf:nf + 4],
                                                                 strict=True)},
        dimension_cut_shifts={d: round(float(u), 4) for d, u in zip(_DIMS, shifts, strict=True)},
        cutpoints=cutpoints, default_judge=_strictest(design, judges),
        papers=sorted({rr.run.paper_id for rr in runs}))


def _strictest(design: _Design, judges: list[str]) -> str:
    """The judge with the lowest mean official score: the one a scaffold should satisfy."""
    means = [design.level[design.judge == i].mean() if (design.judge == i).any() else np.inf
             for i in range(len(judges))]
    return judges[int(np.argmin(means))]


# --------------------------------------------------------------------- predicting
def predict(calibration: Calibration, rr: RunRows, emulate: str | None = None) -> dict[str, float]:
    """Five-level scores of one run's claims, exactly as the offline judge gives them."""
    return predict_run(calibration, rr, emulate)[0]


def predict_run(calibration: Calibration, rr: RunRows, emulate: str | None = None
                ) -> tuple[dict[str, float], dict[str, float]]:
    """The five-level scores of one run's claims and the expected scores they are rounded from."""
    levels_out: dict[str, float] = {}
    expected_out: dict[str, float] = {}
    weights = np.array([calibration.weights[f] for f in calibration.features])
    offsets = np.array([calibration.dimension_offsets.get(d, 0.0) for d in _DIMS])
    for dim in _DIMS:
        cuts = calibration.cuts(emulate, dim)
        rows = [row for row in rr.claims if row.dimension == dim]
        if not rows:
            continue
        x = np.array([[row.features[f] for f in calibration.features] for row in rows])
        probs = level_probabilities(x, np.full(len(rows), _DIMS.index(dim)),
                                    np.tile(cuts, (len(rows), 1)), weights, offsets)
        expected = probs @ np.array(SCORE_LEVELS)
        levels = apportion(expected)
        for row, level, value in zip(rows, levels, expected, strict=True):
            levels_out[row.claim_id] = float(level)
            expected_out[row.claim_id] = float(value)
    return levels_out, expected_out


@dataclass
class Predictions:
    """Per run, {claim_id: score}: the five-level scores and the expected scores behind them."""

    levels: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    expected: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)

    def add(self, rr: RunRows, calibration: Calibration) -> None:
        key = (rr.run.config, rr.run.paper_id)
        self.levels[key], self.expected[key] = predict_run(calibration, rr, rr.run.judge_model)


def paper_folds(papers: list[str], k: int) -> list[set[str]]:
    """k groups of papers, deterministic (sorted, dealt round-robin)."""
    ordered = sorted(set(papers))
    k = max(2, min(k, len(ordered)))
    return [set(ordered[i::k]) for i in range(k)]


def cross_validate(runs: list[RunRows], k: int) -> Predictions:
    """Leave-papers-out predictions: each run is predicted by a model fitted without its paper.

    Returns:
        For every run, keyed (config, paper_id), its claims' levels and expected scores.
    """
    out = Predictions()
    for held in paper_folds([rr.run.paper_id for rr in runs], k):
        train = [rr for rr in runs if rr.run.paper_id not in held]
        calibration = fit(train)
        for rr in runs:
            if rr.run.paper_id in held:
                out.add(rr, calibration)
    return out


def calibrate(runs_root: Path, papers_dir: Path, out: Path | None = None, jobs: int | None = None,
              folds: int = 0, progress: Callable[[RunRows], None] | None = None
              ) -> dict[str, Any]:
    """Fit on every complete run of `runs_root` and write the calibration file.

    Returns:
        A summary: the output path, parameter count, runs and claims used, and, with `folds`,
        the leave-papers-out agreement figures.
    """
    from sabench.benchmark.agreement import agreement_from_predictions

    runs = [r for r in read_runs(runs_root) if r.complete]
    rows = collect(runs, load_papers(papers_dir, with_markdown=False), default_jobs(jobs),
                   progress)
    n_claims = sum(row.official is not None for rr in rows for row in rr.claims)
    n_papers = len({r.paper_id for r in runs})
    data = (f"{len(rows)} complete development runs of SA-Bench ({n_papers}"
            f" papers, {n_claims} claims with official scores; runs/index.json of the runs root, "
            "official_scores/<config>/<paper>.json; likelihood weighted so that each dimension "
            "of a run counts as in its overall score)")
    calibration = fit(rows, data=data)
    summary: dict[str, Any] = {"n_parameters": calibration.n_parameters, "n_runs": len(rows),
                               "n_claims": n_claims}
    if folds:
        predictions = cross_validate(rows, folds)
        cv = agreement_from_predictions(rows, predictions.levels, predictions.expected)
        calibration = calibration.model_copy(update={"cross_validation": {
            key: value for key, value in cv.items() if isinstance(value, float)}})
        summary["cross_validation"] = cv
    if out is not None:
        calibration.dump(out)
        summary["written"] = str(out)
    summary["calibration"] = json.loads(calibration.model_dump_json())
    return summary


def default_jobs(jobs: int | None) -> int:
    return jobs if jobs and jobs > 0 else max(1, min(2, os.cpu_count() or 1))
