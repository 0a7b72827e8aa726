"""Agreement of a judge with the official scores (`sabench agreement`).

Scores every complete run of a runs root (runs whose `missing_cited_files` is empty; the others
are counted as excluded), and compares with the official judge at three levels: claims (Spearman,
MAE, and recall/precision of the low verdicts, <= 0.25, that a repair loop acts on), runs
(Spearman of overall and per-dimension scores) and configurations (Kendall tau of the ranking by
mean overall score, and the mean absolute error of those means).

The offline judge emulates each run's own official judge (`judge_model`). With `folds`, its
calibration is refitted with whole papers held out (leave-papers-out cross-validation); without,
the committed calibration is used, which was fitted on the development runs themselves.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from statistics import fmean
from typing import Any

import numpy as np
from scipy.stats import kendalltau, spearmanr

from sabench.benchmark.calibrate import (
    Predictions,
    RunRows,
    collect,
    cross_validate,
    default_jobs,
    read_runs,
)
from sabench.benchmark.dataset import load_papers
from sabench.verifiers.offline import Calibration, OfflineJudge, default_calibration

LOW = 0.25


def _overall(claims: dict[str, float], dims: dict[str, str]) -> tuple[float | None,
                                                                      dict[str, float]]:
    """Overall = mean of dimension means, as the benchmark computes it."""
    by_dim: dict[str, list[float]] = defaultdict(list)
    for claim_id, score in claims.items():
        by_dim[dims[claim_id]].append(score)
    means = {d: fmean(v) for d, v in by_dim.items() if v}
    return (fmean(means.values()) if means else None), means


def _corr(fn: Any, a: list[float], b: list[float]) -> float | None:
    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    return round(float(fn(a, b)[0]), 4)


def agreement_from_predictions(rows: list[RunRows],
                               predictions: dict[tuple[str, str], dict[str, float]],
                               expected: dict[tuple[str, str], dict[str, float]] | None = None,
                               ) -> dict[str, Any]:
    """Agreement figures of predicted claim scores against the official ones.

    Args:
        rows: the runs (with official claim scores and overall scores).
        predictions: {(config, paper_id): {claim_id: score}}.
        expected: the same for the expected scores the levels were rounded from, when the
            judge has them (the offline judge); adds `claim_spearman_expected`.
    """
    pred_claims, off_claims = [], []
    run_pred, run_off = [], []
    dim_pred: dict[str, list[float]] = defaultdict(list)
    dim_off: dict[str, list[float]] = defaultdict(list)
    by_config: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for rr in rows:
        pred = predictions[(rr.run.config, rr.run.paper_id)]
        scored = {row.claim_id: row for row in rr.claims if row.official is not None}
        dims = {cid: str(row.dimension) for cid, row in scored.items()}
        ours = {cid: pred[cid] for cid in scored if pred.get(cid) is not None}
        for cid, score in ours.items():
            pred_claims.append(score)
            off_claims.append(scored[cid].official)
        overall, means = _overall(ours, dims)
        official = rr.official_overall
        if official is None:
            official, _ = _overall({c: r.official for c, r in scored.items()}, dims)
        if overall is None or official is None:
            continue
        run_pred.append(overall)
        run_off.append(official)
        by_config[rr.run.config].append((overall, official))
        for dim, mean in means.items():
            if dim in rr.official_dims:
                dim_pred[dim].append(mean)
                dim_off[dim].append(rr.official_dims[dim])
    configs = sorted(by_config)
    extra = {} if expected is None else {
        "claim_spearman_expected": _expected_spearman(rows, expected)}
    conf_pred = [fmean(p for p, _ in by_config[c]) for c in configs]
    conf_off = [fmean(o for _, o in by_config[c]) for c in configs]
    p, o = np.array(pred_claims), np.array(off_claims)
    return {
        "n_runs": len(run_pred),
        "n_claims": len(pred_claims),
        "run_spearman": _corr(spearmanr, run_pred, run_off),
        "claim_spearman": _corr(spearmanr, pred_claims, off_claims),
        "claim_mae": round(float(np.abs(p - o).mean()), 4) if len(p) else None,
        "config_kendall": _corr(kendalltau, conf_pred, conf_off),
        "config_mae": round(float(np.abs(np.array(conf_pred) - conf_off).mean()), 4)
        if configs else None,
        "per_dimension": {d: _corr(spearmanr, dim_pred[d], dim_off[d]) for d in sorted(dim_pred)},
        "fail_recall": round(float((p[o <= LOW] <= LOW).mean()), 4) if (o <= LOW).any() else None,
        "fail_precision": round(float((o[p <= LOW] <= LOW).mean()), 4)
        if (p <= LOW).any() else None,
        **extra,
        "mean_official": round(float(o.mean()), 4) if len(o) else None,
        "mean_predicted": round(float(p.mean()), 4) if len(p) else None,
        "configs": {c: {"predicted": round(cp, 4), "official": round(co, 4),
                        "runs": len(by_config[c])}
                    for c, cp, co in zip(configs, conf_pred, conf_off, strict=True)},
    }


def _expected_spearman(rows: list[RunRows],
                       expected: dict[tuple[str, str], dict[str, float]]) -> float | None:
    """Claim Spearman of the expected scores: how well the judge ranks claims before the
    rounding to five levels, whose ties cost rank agreement."""
    ours, official = [], []
    for rr in rows:
        values = expected.get((rr.run.config, rr.run.paper_id), {})
        for row in rr.claims:
            if row.official is not None and values.get(row.claim_id) is not None:
                ours.append(values[row.claim_id])
                official.append(row.official)
    return _corr(spearmanr, ours, official)


def run_agreement(runs_root: Path, papers_dir: Path, judge: str = "offline",
                  folds: int | None = None, jobs: int | None = None,
                  calibration: Calibration | None = None, papers: list[str] | None = None,
                  base_url: str | None = None,
                  judge_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Score the complete runs of `runs_root` with `judge` and compare with the official scores.

    Args:
        runs_root: folder holding `runs/index.json` and `official_scores/`.
        papers_dir: the dataset (papers/<paper_id>/sau.json).
        judge: `offline`, or any judge spec `sabench score` accepts.
        folds: leave-papers-out cross-validation of the offline calibration with this many folds.
        jobs: worker processes (default: up to 2).
        calibration: offline calibration to use (default: the committed one).
        papers: only the runs of these papers (a subset, e.g. for tests).
        base_url: server URL for openai-compatible LLM judges.
        judge_options: options for judges other than `offline` (`threshold`, `evidence`, as
            `sabench score` takes them); a hybrid judge's offline part emulates each run's own
            official judge, as the offline judge does.
    """
    all_runs = read_runs(runs_root)
    if papers is not None:
        all_runs = [r for r in all_runs if r.paper_id in set(papers)]
    runs = [r for r in all_runs if r.complete]
    specs = load_papers(papers_dir, with_markdown=False)
    rows = collect(runs, specs, default_jobs(jobs))
    if judge == "offline":
        if folds:
            offline = cross_validate(rows, folds)
        else:
            offline = Predictions()
            for rr in rows:
                offline.add(rr, calibration or default_calibration())
        result = agreement_from_predictions(rows, offline.levels, offline.expected)
    else:
        scores, errors = _other_judge(rows, specs, judge, base_url, judge_options or {})
        result = agreement_from_predictions(rows, scores)
        result["claim_errors"] = errors
    result.update(excluded_incomplete=len(all_runs) - len(runs), judge=judge,
                  evaluation=evaluation_label(judge, folds, calibration or default_calibration(),
                                              {r.paper_id for r in runs}))
    if judge == "offline" and not folds:
        fitted = set((calibration or default_calibration()).papers)
        result["calibration_overlap"] = sorted(fitted & {r.paper_id for r in runs})
    return result


def evaluation_label(judge: str, folds: int | None, calibration: Calibration,
                     scored: set[str]) -> str:
    """How the figures were made, and whether the calibration saw the scored papers."""
    if judge != "offline":
        return "as scored"
    if folds:
        return f"leave-papers-out, {folds} folds (a calibration fitted per fold)"
    fitted = set(calibration.papers)
    if not fitted:
        return "committed calibration (its papers are not recorded)"
    shared = len(fitted & scored)
    where = (f"fitted on {len(fitted)} papers, {shared} of the {len(scored)} scored papers "
             f"among them" if shared else
             f"fitted on {len(fitted)} other papers, none of the {len(scored)} scored here")
    return f"committed calibration ({calibration.fitted_at}; {where})"


def _other_judge(rows: list[RunRows], specs: dict, judge: str, base_url: str | None,
                 options: dict[str, Any]) -> tuple[dict[tuple[str, str], dict[str, float]], int]:
    """Each run's claim scores by `judge`, and how many claims it failed to judge (errors are
    left out of the figures and counted, never scored 0)."""
    from sabench.benchmark.scoring import make_judge

    judges: dict[str | None, Any] = {}  # one judge per emulated official judge
    out, errors = {}, 0
    for rr in rows:
        known = rr.run.judge_model in default_calibration().cutpoints
        emulate = rr.run.judge_model if known else None  # else the default (stricter) judge
        if emulate not in judges:
            judges[emulate] = (OfflineJudge(emulate=emulate) if judge.startswith("offline")
                               else make_judge(judge, base_url, emulate=emulate, **options))
        score = judges[emulate].score(specs[rr.run.paper_id], rr.run.repo)
        verdicts = [v for _, v in score.verdicts()]
        errors += sum(v.score is None for v in verdicts)
        out[(rr.run.config, rr.run.paper_id)] = {v.id: v.score for v in verdicts
                                                 if v.score is not None}
    return out, errors
