"""The alignment-first check step's figures; prints one JSON object.

    python tests/perf/bench_alignment_check.py [demo] [bands] [drift] [--sample N] [--seed S]
                                                [--stratified] [--papers-only ID,ID,...]
                                                [--checkers alignment-folds,offline]

- `demo`: the check on the bundled demo paper's two reproductions: every claim of `faithful/`
  should pass, every claim `DRIFT.md` lists as drifted in `drifted/` should fail.
- `bands`: on the complete development runs, the share of claims the check passes per official
  score band, leave-papers-out (5 folds: the offline judge's calibration behind each run is
  fitted without its paper), for the scaffold's `alignment` checker and for the expected score
  alone; which rule failed how many claims the official judge scored >= 0.75; seconds per claim.
- `drift`: `sabench drift-test`'s suite (`sabench.benchmark.drift`) with the `alignment` checker
  (fold calibrations again) against the verifiers' `offline` check, on `--sample` injections
  (`--checkers alignment-folds` measures the scaffold's checker alone, in half the time;
  `--papers-only` holds the draw to those papers' runs, a held-out split of papers). The
  suite's `by_judge_naming` splits detection by whether the official judge's reasoning names
  what each drift changed.

Uses $SABENCH_RUNS_ROOT when set (a folder made by ../shared/sabench/unpack.sh), else unpacks
the runs into a temporary folder first. Fold calibrations are cached in the temporary folder
($SABENCH_FOLD_CACHE to place them elsewhere).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from itertools import product
from pathlib import Path

from measure import DATA_DIR, REPO_ROOT, runs_root

from sabench.benchmark.calibrate import collect, fit, paper_folds, read_runs
from sabench.benchmark.dataset import load_paper, load_papers
from sabench.benchmark.demo_run import drifted_claims
from sabench.scaffolds.alignment_check import check_alignment
from sabench.verifiers.offline import Calibration, default_calibration

DEMO = REPO_ROOT / "benchmark" / "demo"
BANDS = (0.0, 0.25, 0.5, 0.75, 1.0)
_SPECS: dict = {}


# ------------------------------------------------------------------------------- demo


def demo() -> dict:
    paper = load_paper(DEMO / "papers" / "smoothlr")
    drifted = drifted_claims()
    out: dict = {"claims": len(paper.claims), "drifted_claims": len(drifted)}
    for repo in ("faithful", "drifted"):
        results = check_alignment(paper, DEMO / "repos" / repo)
        failing = sorted(r.id for r in results if not r.passed)
        out[repo] = {"passed": len(results) - len(failing), "failing": failing}
    out["faithful_all_pass"] = not out["faithful"]["failing"]
    out["drifted_flagged"] = len(drifted & set(out["drifted"]["failing"]))
    out["drifted_missed"] = sorted(drifted - set(out["drifted"]["failing"]))
    return out


# ------------------------------------------------------------------------------- folds


def fold_calibrations(root: Path, papers: Path, k: int = 5) -> dict[str, Calibration]:
    """Each development paper's offline calibration fitted without it (cached)."""
    runs = [r for r in read_runs(root) if r.complete]
    key = hashlib.sha256(json.dumps([sorted(r.paper_id + r.config for r in runs), k,
                                     default_calibration().model_dump(mode="json")],
                                    sort_keys=True).encode()).hexdigest()[:16]
    cache = Path(os.environ.get("SABENCH_FOLD_CACHE") or tempfile.gettempdir()) / \
        f"sabench-folds-{key}.json"
    if cache.is_file():
        data = json.loads(cache.read_text())
        return {p: Calibration.model_validate(c) for p, c in data.items()}
    rows = collect(runs, load_papers(papers, with_markdown=False), 2)
    out = {}
    for held in paper_folds([r.paper_id for r in runs], k):
        calibration = fit([rr for rr in rows if rr.run.paper_id not in held])
        out.update({paper: calibration for paper in held})
    cache.write_text(json.dumps({p: c.model_dump(mode="json") for p, c in out.items()}))
    return out


# ------------------------------------------------------------------------------- bands


def _check_run(args: tuple) -> tuple[list[dict], float, int]:
    paper_id, repo, papers_dir, calibration, official = args
    if paper_id not in _SPECS:
        _SPECS[paper_id] = load_paper(Path(papers_dir) / paper_id)
    spec = _SPECS[paper_id]
    started = time.process_time()
    results = check_alignment(spec, Path(repo), calibration=calibration)
    seconds = time.process_time() - started
    rows = [{"official": official.get(r.id), "dimension": r.dimension.value, "paper": paper_id,
             "passed": r.passed, "expected": r.expected_score, "findings": r.findings,
             "bound_d1": r.values_bound}
            for r in results if official.get(r.id) is not None]
    return rows, seconds, len(results)


def official_scores(root: Path, config: str, paper: str) -> dict[str, float]:
    data = json.loads((root / "official_scores" / config / f"{paper}.json").read_text())
    return {c["id"]: c["score"] for d in data["dimensions"].values() for c in d["claims"]}


def band_rows(root: Path, papers: Path, calibrations: dict[str, Calibration]) -> tuple:
    runs = [r for r in read_runs(root) if r.complete]
    work = [(r.paper_id, str(r.repo), str(papers), calibrations[r.paper_id],
             official_scores(root, r.config, r.paper_id)) for r in runs]
    rows, seconds, claims = [], 0.0, 0
    with ProcessPoolExecutor(max_workers=2) as pool:
        for found, spent, n in pool.map(_check_run, work, chunksize=2):
            rows += found
            seconds += spent
            claims += n
    return rows, seconds, claims, len(runs)


def rate(rows: list[dict], key: str) -> float | None:
    return round(sum(r[key] for r in rows) / len(rows), 4) if rows else None


def choose_thresholds(rows: list[dict], limit: float = 0.09) -> dict[str, float]:
    """Per-dimension thresholds passing the most claims scored >= 0.75 while passing at most
    `limit` of those scored 0 (exhaustive over a grid), from claims the rules do not fail."""
    grid = [round(0.16 + 0.01 * i, 2) for i in range(16)]
    dims = ("D1", "D2", "D3", "D4")
    def passes(r: dict, t: float) -> bool:
        return (r["expected"] >= t or r["bound_d1"]) and not r["findings"]

    counts = {d: {t: (sum(passes(r, t) for r in rows if r["dimension"] == d and
                          r["official"] >= 0.75),
                      sum(passes(r, t) for r in rows if r["dimension"] == d and
                          r["official"] == 0)) for t in grid}
              for d in dims}
    n_zero = max(1, sum(r["official"] == 0 for r in rows))
    best: tuple = (-1, ())
    for cuts in product(grid, repeat=4):
        high = sum(counts[d][t][0] for d, t in zip(dims, cuts, strict=True))
        zero = sum(counts[d][t][1] for d, t in zip(dims, cuts, strict=True))
        if zero / n_zero <= limit and high > best[0]:
            best = (high, cuts)
    return dict(zip(dims, best[1], strict=True))


def nested(rows: list[dict], k: int = 5) -> dict:
    """Thresholds chosen on the other papers' runs, applied to each held-out paper's."""
    held_rows = []
    for held in paper_folds([r["paper"] for r in rows], k):
        cuts = choose_thresholds([r for r in rows if r["paper"] not in held])
        held_rows += [{**r, "nested": r["expected"] >= cuts[r["dimension"]] or
                       r["bound_d1"]} for r in rows if r["paper"] in held]
    high = [r for r in held_rows if r["official"] >= 0.75]
    zero = [r for r in held_rows if r["official"] == 0]
    for r in held_rows:
        r["nested"] = r["nested"] and not r["findings"]
    return {"pass_official_ge_075": rate(high, "nested"),
            "pass_official_0": rate(zero, "nested"),
            "thresholds_on_all_runs": choose_thresholds(rows)}


def bands(root: Path, papers: Path, calibrations: dict[str, Calibration],
          threshold: float = 0.22) -> dict:
    rows, seconds, claims, runs = band_rows(root, papers, calibrations)
    for row in rows:
        row["expected_only"] = row["expected"] >= threshold
    by_band = defaultdict(list)
    for row in rows:
        by_band[row["official"]].append(row)
    high = [r for r in rows if r["official"] >= 0.75]
    zero = by_band[0.0]
    rules_high = Counter(f for r in high if r["expected_only"] for f in r["findings"])
    rules_zero = Counter(f for r in zero if r["expected_only"] for f in r["findings"])
    dims = sorted({r["dimension"] for r in rows})
    return {
        "runs": runs, "claims": len(rows), "evaluation": "leave-papers-out, 5 folds",
        "pass_official_ge_075": rate(high, "passed"),
        "pass_official_0": rate(zero, "passed"),
        "expected_only": {"threshold": threshold,
                          "pass_official_ge_075": rate(high, "expected_only"),
                          "pass_official_0": rate(zero, "expected_only")},
        "thresholds_chosen_without_the_held_out_papers": nested(rows),
        "pass_by_band": {str(b): {"n": len(by_band[b]), "pass": rate(by_band[b], "passed"),
                                  "expected_only": rate(by_band[b], "expected_only")}
                         for b in BANDS},
        "pass_by_dimension": {d: {
            "n_ge_075": sum(r["dimension"] == d for r in high),
            "ge_075": rate([r for r in high if r["dimension"] == d], "passed"),
            "zero": rate([r for r in zero if r["dimension"] == d], "passed"),
            "expected_only_ge_075": rate([r for r in high if r["dimension"] == d],
                                         "expected_only"),
            "expected_only_zero": rate([r for r in zero if r["dimension"] == d],
                                       "expected_only")} for d in dims},
        "rule_fails_official_ge_075": dict(rules_high.most_common()),
        "rule_fails_official_0": dict(rules_zero.most_common()),
        "cpu_seconds_per_claim": round(seconds / max(1, claims), 5),
    }


# ------------------------------------------------------------------------------- drift


def drift(root: Path, papers: Path, calibrations: dict[str, Calibration], sample: int,
          seed: int, stratified: bool = False,
          checkers: tuple[str, ...] = ("alignment-folds", "offline"),
          papers_only: list[str] | None = None) -> dict:
    from sabench.benchmark import drift as suite
    from sabench.scaffolds.alignment_check import CHECKERS

    # The suite takes a checker by name from the scaffold's registry: the alignment checker
    # with each paper's held-out calibration is added for this measurement only.
    CHECKERS["alignment-folds"] = lambda spec, repo, ids: check_alignment(
        spec, repo, ids, calibration=calibrations[spec.paper_id])
    out = {}
    for name in checkers:
        started = time.perf_counter()
        out[name] = suite.drift_test(root, papers, sample=sample, seed=seed, checker=name,
                                     stratified=stratified, papers_only=papers_only)
        out[name]["seconds"] = round(time.perf_counter() - started, 1)
    return out


def main(argv: list[str]) -> None:
    parts = [a for a in argv if a in ("demo", "bands", "drift")] or ["demo", "bands", "drift"]
    sample = int(argv[argv.index("--sample") + 1]) if "--sample" in argv else 200
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 0
    papers = DATA_DIR / "papers"
    result: dict = {}
    if "demo" in parts:
        result["demo"] = demo()
    if "bands" in parts or "drift" in parts:
        with runs_root() as root:
            calibrations = fold_calibrations(root, papers)
            if "bands" in parts:
                result["bands"] = bands(root, papers, calibrations)
            if "drift" in parts:
                checkers = tuple(argv[argv.index("--checkers") + 1].split(",")) \
                    if "--checkers" in argv else ("alignment-folds", "offline")
                only = argv[argv.index("--papers-only") + 1].split(",") \
                    if "--papers-only" in argv else None
                result["drift"] = drift(root, papers, calibrations, sample, seed,
                                        "--stratified" in argv, checkers, only)
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
