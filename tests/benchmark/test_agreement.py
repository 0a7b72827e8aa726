"""`sabench agreement` and `sabench calibrate` on the real development runs (a subset of papers,
to keep the suite fast; the full 240 runs are measured by tests/perf/bench_offline.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from sabench.benchmark.agreement import agreement_from_predictions, run_agreement
from sabench.benchmark.calibrate import (
    ClaimRow,
    RunRef,
    RunRows,
    RunsIndexError,
    _design,
    _negative_log_likelihood,
    dimension_weights,
    fit,
    paper_folds,
    predict,
    read_runs,
)
from sabench.benchmark.scoring import JUDGE_KINDS, JudgeRequest
from sabench.verifiers.offline import FEATURES, Calibration, OfflineJudge
from sabench.verifiers.spec import Dimension, PaperSpec
from sabench.verifiers.types import ClaimVerdict, PaperScore


@pytest.fixture(scope="session")
def runs_root(sabench_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("sabench-runs")
    subprocess.run(["sh", str(sabench_data / "unpack.sh"), str(dest)], check=True,
                   capture_output=True)
    return dest


@pytest.fixture(scope="session")
def subset(runs_root: Path) -> list[str]:
    """The three papers with the most complete runs."""
    complete = Counter(r.paper_id for r in read_runs(runs_root) if r.complete)
    return sorted(p for p, _ in complete.most_common(3))


@pytest.mark.dataset
def test_agreement_on_a_subset(runs_root: Path, papers_dir: Path, subset: list[str]) -> None:
    result = run_agreement(runs_root, papers_dir, papers=subset, jobs=2)
    runs = [r for r in read_runs(runs_root) if r.paper_id in subset]
    assert result["n_runs"] == sum(r.complete for r in runs)
    assert result["excluded_incomplete"] == sum(not r.complete for r in runs)
    assert result["n_claims"] > 10 * result["n_runs"]
    for key in ("run_spearman", "claim_spearman", "config_kendall"):
        assert -1.0 <= result[key] <= 1.0
    assert set(result["per_dimension"]) == {"D1", "D2", "D3", "D4"}
    # The committed calibration is fitted on these runs: it must rank them well.
    assert result["run_spearman"] >= 0.6
    assert result["fail_recall"] >= 0.8 and result["fail_precision"] >= 0.8
    assert abs(result["mean_predicted"] - result["mean_official"]) < 0.05
    # And the result says so: these papers are among the calibration's.
    assert result["calibration_overlap"] == sorted(subset)
    assert "3 of the 3 scored papers among them" in result["evaluation"]


def test_the_label_says_when_the_calibration_saw_none_of_the_papers() -> None:
    from sabench.benchmark.agreement import evaluation_label
    from sabench.verifiers.offline import default_calibration

    label = evaluation_label("offline", None, default_calibration(), {"unseen-paper"})
    assert "other papers, none of the 1 scored here" in label
    assert "leave-papers-out" in evaluation_label("offline", 5, default_calibration(), set())


@pytest.fixture(scope="session")
def small_root(runs_root: Path, subset: list[str],
               tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runs root holding two papers' runs, built from the real one (index filtered)."""
    data = json.loads((runs_root / "runs" / "index.json").read_text())
    data["runs"] = [r for r in data["runs"] if r["paper_id"] in subset[:2]]
    small = tmp_path_factory.mktemp("small-root")
    (small / "runs").mkdir(parents=True)
    (small / "runs" / "index.json").write_text(json.dumps(data))
    for r in data["runs"]:
        (small / r["repo"]).parent.mkdir(parents=True, exist_ok=True)
        (small / r["repo"]).symlink_to(runs_root / r["repo"])
    (small / "official_scores").symlink_to(runs_root / "official_scores")
    return small


def sabench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from sabench.benchmark.cli import main; main()", *args],
        capture_output=True, text=True)


@pytest.mark.dataset
def test_agreement_cli_json(small_root: Path, papers_dir: Path) -> None:
    done = sabench("agreement", str(small_root), "--papers", str(papers_dir), "--judge",
                   "offline", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    index = json.loads((small_root / "runs" / "index.json").read_text())["runs"]
    assert result["n_runs"] == sum(not r["missing_cited_files"] for r in index)
    assert result["excluded_incomplete"] == sum(bool(r["missing_cited_files"]) for r in index)
    for key in ("n_claims", "run_spearman", "claim_spearman", "claim_mae", "config_kendall",
                "config_mae", "per_dimension", "fail_recall", "fail_precision"):
        assert key in result


class _FailsOneClaim:
    """The offline judge, except that judging each run's first claim fails."""

    def __init__(self, emulate: str | None) -> None:
        self.inner = OfflineJudge(emulate=emulate)

    def score(self, spec: PaperSpec, repo: Path) -> PaperScore:
        verdicts: dict[Dimension, list] = {}
        for i, (dim, verdict) in enumerate(self.inner.score(spec, repo).verdicts()):
            if i == 0:
                verdict = ClaimVerdict(id=verdict.id, score=None, error="model reply invalid")
            verdicts.setdefault(dim, []).append(verdict)
        return PaperScore.of(spec.paper_id, verdicts)


@pytest.mark.dataset
def test_agreement_of_another_judge_gets_its_options_and_counts_its_errors(
        small_root: Path, papers_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    requests: list[dict] = []

    def failing_kind(request: JudgeRequest) -> _FailsOneClaim:
        requests.append(dict(request.options))
        return _FailsOneClaim(request.options.get("emulate"))

    monkeypatch.setitem(JUDGE_KINDS, "failing", failing_kind)
    result = run_agreement(small_root, papers_dir, judge="failing", jobs=1,
                           judge_options={"threshold": 0.3, "evidence": "official"})
    runs = [r for r in read_runs(small_root) if r.complete]
    # One judge per official judge emulated, each given the options.
    assert sorted(r["emulate"] for r in requests) == sorted({r.judge_model for r in runs})
    assert all(r["threshold"] == 0.3 and r["evidence"] == "official" for r in requests)
    # A failed claim is counted and left out, never scored 0.
    offline = run_agreement(small_root, papers_dir, jobs=1)
    assert result["claim_errors"] == len(runs) == result["n_runs"]
    assert result["n_claims"] == offline["n_claims"] - len(runs)
    assert "claim_errors" not in offline


@pytest.mark.dataset
def test_calibrate_cli_writes_a_loadable_calibration(small_root: Path, papers_dir: Path,
                                                     tmp_path: Path) -> None:
    out = tmp_path / "calibration.json"
    done = sabench("calibrate", str(small_root), "--papers", str(papers_dir), "-o", str(out),
                   "--folds", "2", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    calibration = Calibration.load(out)
    assert calibration.n_parameters == summary["n_parameters"] <= 48
    assert f"{summary['n_runs']} complete development runs" in calibration.data
    assert summary["cross_validation"]["n_runs"] == summary["n_runs"]
    assert calibration.cross_validation["run_spearman"] == \
        summary["cross_validation"]["run_spearman"]


@pytest.mark.dataset
def test_bad_runs_root_is_one_line(tmp_path: Path, papers_dir: Path) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "index.json").write_text('{"runs": [{"config": "c"}]}')
    done = sabench("agreement", str(tmp_path), "--papers", str(papers_dir), "--json")
    assert done.returncode == 2
    assert "runs[0] needs 'config' and 'paper_id'" in done.stderr
    assert "Traceback" not in done.stderr
    with pytest.raises(RunsIndexError, match="cannot read the runs index"):
        read_runs(tmp_path / "nowhere")


SIGNAL = "shown_repo_rare"  # a feature of the offline judge: coverage of the shown windows


def _synthetic_runs(n_runs: int, seed: int) -> list[RunRows]:
    """Runs whose official scores follow one feature (`SIGNAL`) plus noise."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_runs):
        quality = rng.uniform(0, 1)
        rr = RunRows(run=RunRef(config=f"c{i % 4}", paper_id=f"p{i % 5}", repo=Path("."),
                                official=Path("."), judge_model="judge-a" if i % 2 else "judge-b",
                                complete=True))
        for j in range(20):
            cov = float(np.clip(quality + rng.normal(0, 0.2), 0, 1))
            features = {f: 0.0 for f in FEATURES} | {SIGNAL: cov}
            level = float(np.clip(np.round(cov * 4 + rng.normal(0, 0.3)), 0, 4) / 4)
            rr.claims.append(ClaimRow(f"r{i}-c{j}", list(Dimension)[j % 4], features, level))
        out.append(rr)
    return out


def test_fit_recovers_a_known_relation() -> None:
    train, test = _synthetic_runs(60, 1), _synthetic_runs(30, 2)
    calibration = fit(train, data="synthetic")
    assert calibration.weights[SIGNAL] > 3 * max(
        abs(w) for f, w in calibration.weights.items() if f != SIGNAL)
    predictions = {(rr.run.config, rr.run.paper_id): predict(calibration, rr, rr.run.judge_model)
                   for rr in test}
    # Keys (config, paper) repeat in the synthetic set: score the unique ones only.
    unique = list({(rr.run.config, rr.run.paper_id): rr for rr in test}.values())
    result = agreement_from_predictions(unique, predictions)
    assert result["claim_spearman"] > 0.8 and result["run_spearman"] > 0.8


def test_perfect_predictions_agree_perfectly() -> None:
    rows = list({(rr.run.config, rr.run.paper_id): rr for rr in _synthetic_runs(40, 3)}.values())
    perfect = {(rr.run.config, rr.run.paper_id): {c.claim_id: c.official for c in rr.claims}
               for rr in rows}
    result = agreement_from_predictions(rows, perfect)
    assert result["claim_mae"] == 0 and result["config_mae"] == 0
    assert result["claim_spearman"] == 1.0 and result["fail_recall"] == 1.0
    assert result["fail_precision"] == 1.0
    assert "claim_spearman_expected" not in result  # only for judges with expected scores


def test_expected_scores_are_ranked_separately() -> None:
    rows = list({(rr.run.config, rr.run.paper_id): rr for rr in _synthetic_runs(20, 6)}.values())
    flat = {(rr.run.config, rr.run.paper_id): {c.claim_id: 0.25 for c in rr.claims}
            for rr in rows}
    # Expected scores that rank exactly like the official levels, then reversed.
    expected = {(rr.run.config, rr.run.paper_id): {c.claim_id: 0.1 + 0.8 * c.official
                                                   for c in rr.claims} for rr in rows}
    result = agreement_from_predictions(rows, flat, expected)
    assert result["claim_spearman"] is None  # constant levels rank nothing
    assert result["claim_spearman_expected"] == 1.0
    reversed_ = {key: {cid: 1 - v for cid, v in values.items()}
                 for key, values in expected.items()}
    assert agreement_from_predictions(rows, flat, reversed_)["claim_spearman_expected"] == -1.0


def test_paper_folds_partition_the_papers() -> None:
    papers = [f"p{i}" for i in range(11)]
    folds = paper_folds(papers * 2, 4)
    assert len(folds) == 4
    assert set().union(*folds) == set(papers) and sum(len(f) for f in folds) == 11


def test_fit_learns_a_dimension_whose_upper_levels_are_rare() -> None:
    """Same evidence, but D3 claims never score above 0.25: D3's upper cuts move up."""
    runs = _synthetic_runs(60, 4)
    for rr in runs:
        for row in rr.claims:
            if row.dimension == Dimension.D3:
                row.official = min(row.official, 0.25)
    calibration = fit(runs, data="synthetic")
    shifts = calibration.dimension_cut_shifts
    assert shifts[Dimension.D1] == 0.0
    assert shifts[Dimension.D3] > 1.0 + max(abs(shifts[Dimension.D2]), abs(shifts[Dimension.D4]))
    low = calibration.cuts("judge-a", Dimension.D1)
    high = calibration.cuts("judge-a", Dimension.D3)
    assert high[0] == low[0] and (high[1:] > low[1:]).all()


def test_likelihood_gradient_with_cut_shifts_matches_finite_differences() -> None:
    runs = _synthetic_runs(8, 5)
    judges = sorted({rr.run.judge_model for rr in runs})
    design = _design(runs, list(FEATURES), judges)
    nf = len(FEATURES)
    theta = np.random.default_rng(0).normal(0, 0.3, nf + 4 + 3 + 4 * len(judges))
    _, grad = _negative_log_likelihood(theta, design, nf)
    numeric = approx_fprime(theta, lambda t: _negative_log_likelihood(t, design, nf)[0], 1e-6)
    assert np.allclose(grad, numeric, rtol=1e-3, atol=1e-3)


def test_dimension_weights_give_each_dimension_of_a_run_equal_weight() -> None:
    dims = [Dimension.D1] * 6 + [Dimension.D2] * 3 + [Dimension.D4]
    weights = dimension_weights(dims)
    assert weights.sum() == pytest.approx(len(dims))
    totals = {d: weights[[i for i, x in enumerate(dims) if x == d]].sum() for d in set(dims)}
    assert all(t == pytest.approx(len(dims) / 3) for t in totals.values())
    # The lone D4 claim outweighs any single D1 claim.
    assert weights[-1] > 5 * weights[0]


@pytest.mark.parametrize("weighting", ["dimension", "claim"])
def test_likelihood_gradient_matches_finite_differences(weighting: str) -> None:
    runs = _synthetic_runs(6, 4)
    for rr in runs:  # uneven dimensions, so the weights differ from 1
        rr.claims = rr.claims[:13]
    features = [SIGNAL, "shown_terms_sq"]
    design = _design(runs, features, ["judge-a", "judge-b"], weighting)
    assert (np.ptp(design.weight) > 0) == (weighting == "dimension")
    theta = np.random.default_rng(0).normal(0, 0.5, len(features) + 4 + 3 + 8)
    _, grad = _negative_log_likelihood(theta, design, len(features))
    eps = 1e-6
    for i in range(len(theta)):
        step = np.zeros_like(theta)
        step[i] = eps
        numeric = (_negative_log_likelihood(theta + step, design, len(features))[0]
                   - _negative_log_likelihood(theta - step, design, len(features))[0]) / (2 * eps)
        assert grad[i] == pytest.approx(numeric, rel=1e-4, abs=1e-5)


def test_unknown_weighting_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown weighting"):
        fit(_synthetic_runs(4, 5), weighting="papers")
