"""How far claim Spearman can go offline: prints one JSON object.

The offline judge gives five-level scores whose run and dimension means stay unbiased
(`offline.apportion`). The issue asks for a claim Spearman of 0.70; this measures what stands in
the way, leave-papers-out (5 folds) on the complete development runs:

- `levels` / `expected`: claim Spearman of the committed method's five-level scores and of the
  expected scores they are rounded from;
- `best_levels_any_mean`: the best claim Spearman of any five-level rule that cuts the expected
  scores at four thresholds, whatever the mean of its levels;
- `best_levels_official_mean`: the same, with the mean level held at the official mean (±0.005),
  which run and configuration means need;
- `oracle_shown`: the model refitted with its window features read from the windows the official
  judge actually cited first (`evidence_refs`), instead of our emulation of its search: what a
  perfect emulation of the search would give.

Uses $SABENCH_RUNS_ROOT when set (a folder made by ../shared/sabench/unpack.sh).
"""

from __future__ import annotations

import itertools
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from measure import DATA_DIR, runs_root
from scipy.stats import rankdata, spearmanr

from sabench.benchmark.calibrate import ClaimRow, RunRef, RunRows, cross_validate, read_runs
from sabench.benchmark.dataset import load_papers
from sabench.verifiers.checks import check_claim
from sabench.verifiers.index import RepoIndex, cycle_collection_paused
from sabench.verifiers.judge import check_repository
from sabench.verifiers.official_search import SHOWN, Item, path_kind
from sabench.verifiers.offline import claim_features
from sabench.verifiers.shown import PaperTerms, shown_windows
from sabench.verifiers.types import PaperScore

FOLDS = 5
MEAN_TOLERANCE = 0.005
_PAPERS: dict = {}


def _cited_windows(index: RepoIndex, refs: list[str]) -> list[Item]:
    """The first windows an official verdict cites, as items of our index."""
    items = []
    for ref in refs[:SHOWN]:
        file, _, span = ref.rpartition(":")
        start, _, end = span.partition("-")
        if file in index.files and start.isdigit() and end.isdigit():
            lines = index.files[file].lines[int(start) - 1:int(end)]
            items.append(Item(file, int(start), int(end), "direct", path_kind(file),
                              "\n".join(lines)))
    return items


def _rows(run: RunRef) -> tuple[RunRows, RunRows]:
    """One run's feature rows: as the offline judge computes them, and with the shown windows
    replaced by the ones the official judge cited."""
    spec = _PAPERS[run.paper_id]
    official = PaperScore.load(run.official)
    verdicts = {v.id: v for _, v in official.verdicts()}
    dims = {str(d): r.score for d, r in official.dimensions.items() if r.score is not None}
    ours = RunRows(run, official_overall=official.overall_score, official_dims=dims)
    oracle = RunRows(run, official_overall=official.overall_score, official_dims=dims)
    paper = PaperTerms.of([claim.text for claim in spec.claims])
    with cycle_collection_paused():
        index = RepoIndex.build(check_repository(run.repo))
        for claim in spec.claims:
            verdict = verdicts.get(claim.id)
            score = verdict.score if verdict else None
            check = check_claim(index, claim, 8, paper)
            ours.claims.append(ClaimRow(claim.id, claim.dimension,
                                        claim_features(check, len(spec.claims)), score))
            cited = _cited_windows(index, verdict.evidence_refs if verdict else [])
            check = check.model_copy(update={"shown": shown_windows(index, claim.text, cited,
                                                                    paper)})
            oracle.claims.append(ClaimRow(claim.id, claim.dimension,
                                          claim_features(check, len(spec.claims)), score))
        index.release()
    return ours, oracle


def _init(papers_dir: str) -> None:
    _PAPERS.update(load_papers(Path(papers_dir), with_markdown=False))


def _paired(rows: list[RunRows], by_run: dict) -> tuple[np.ndarray, np.ndarray]:
    """(predicted, official) claim scores of every claim with an official score."""
    pred, off = [], []
    for rr in rows:
        scores = by_run[(rr.run.config, rr.run.paper_id)]
        for row in rr.claims:
            if row.official is not None:
                pred.append(scores[row.claim_id])
                off.append(row.official)
    return np.array(pred), np.array(off)


def best_threshold_levels(expected: np.ndarray, official: np.ndarray,
                          mean: float | None = None, grid: int = 41) -> float:
    """The best Spearman of five levels cut from `expected` at four thresholds on a quantile
    grid (exhaustive), optionally with the mean level (in [0, 1]) within MEAN_TOLERANCE.

    Sorted by expected score, the levels are five consecutive blocks, so each candidate is
    scored in O(1) from prefix sums of the official ranks.
    """
    order = np.argsort(expected, kind="stable")
    values = expected[order]
    centred = rankdata(official)[order]
    centred = centred - centred.mean()
    prefix = np.concatenate([[0.0], np.cumsum(centred)])
    off_norm = float(np.sqrt((centred ** 2).sum()))
    n = len(values)
    # Cut positions: a threshold at a quantile puts every claim at or above it one level up.
    cuts = sorted({int(np.searchsorted(values, q, side="left"))
                   for q in np.quantile(values, np.linspace(0, 1, grid))} | {n})
    best = -1.0
    for chosen in itertools.combinations(cuts, 4):
        bounds = (0, *chosen, n)
        sizes = [bounds[i + 1] - bounds[i] for i in range(5)]
        if mean is not None and abs(
                sum(i * s for i, s in enumerate(sizes)) / (4 * n) - mean) > MEAN_TOLERANCE:
            continue
        # Mid-rank of each block, centred; covariance with the official ranks block by block.
        mids = [bounds[i] + (sizes[i] + 1) / 2 - (n + 1) / 2 for i in range(5)]
        cov = sum(mids[i] * (prefix[bounds[i + 1]] - prefix[bounds[i]]) for i in range(5))
        var = sum(sizes[i] * mids[i] ** 2 for i in range(5))
        if var > 0:
            best = max(best, cov / (np.sqrt(var) * off_norm))
    return round(float(best), 4)


def _figures(rows: list[RunRows]) -> dict[str, float]:
    predictions = cross_validate(rows, FOLDS)
    levels, official = _paired(rows, predictions.levels)
    expected, _ = _paired(rows, predictions.expected)
    return {"levels": round(float(spearmanr(levels, official)[0]), 4),
            "expected": round(float(spearmanr(expected, official)[0]), 4),
            "best_levels_any_mean": best_threshold_levels(expected, official),
            "best_levels_official_mean": best_threshold_levels(expected, official,
                                                               mean=float(official.mean()))}


def main() -> None:
    papers_dir = DATA_DIR / "papers"
    with runs_root() as root:
        runs = [r for r in read_runs(root) if r.complete]
        with ProcessPoolExecutor(2, initializer=_init, initargs=(str(papers_dir),)) as pool:
            pairs = list(pool.map(_rows, runs, chunksize=2))
    result = {"runs": len(runs), "folds": FOLDS,
              "emulated_search": _figures([ours for ours, _ in pairs]),
              "oracle_shown": _figures([oracle for _, oracle in pairs])}
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
