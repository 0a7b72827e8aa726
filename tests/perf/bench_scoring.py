"""Time and memory of `sabench score-runs` on the 240 development runs, and of the taxonomy
reading of the release. Prints JSON.

Target (issue 3): the 240 development runs in at most 60 s on 2 cores, peak memory under 1 GB.
The runs are unpacked with the release's own unpack.sh into a temporary folder; score-runs then
runs as a fresh process with `--jobs 2`, as a user runs it. A second, resumed pass measures the
cost of skipping runs that are already scored. Usage: python tests/perf/bench_scoring.py
[--judge offline|keyword] [--jobs N].
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from measure import DATA_DIR, run_cli

DATA = DATA_DIR
TARGET_S, TARGET_MB = 60.0, 1024.0


def timed(*args: str) -> dict[str, object]:
    """A `sabench` command's figures; exit 1 means some runs failed, reported in its summary."""
    run = run_cli(*args, ok_codes=(0, 1))
    return {"wall_s": round(run.wall_s, 2), "cpu_s": round(run.cpu_s, 2),
            "peak_mb": round(run.peak_mb, 1), "stdout": run.stdout}


def score_runs(dest: Path, judge: str, jobs: int) -> dict[str, object]:
    command = ["score-runs", str(dest), "--papers", str(DATA / "papers"), "--judge", judge,
               "--out", str(dest / "scores"), "--jobs", str(jobs), "--json"]
    first = timed(*command)
    summary = json.loads(first.pop("stdout"))
    resumed = timed(*command)
    again = json.loads(resumed.pop("stdout"))
    return {"first": {**first, "scored": summary["scored"], "failed": summary["failed"],
                      "claim_errors": summary["claim_errors"]},
            "resumed": {**resumed, "skipped": again["skipped"]},
            "per_run_s": round(first["wall_s"] / max(summary["scored"], 1), 3)}


def category_agreement(dest: Path) -> dict[str, object]:
    """How often our category of a low claim equals the one read from the official reason.

    Over the complete dev runs (no missing cited files), on claims both judges score <= 0.25.
    """
    from collections import Counter

    from sabench.verifiers.taxonomy import read_reasoning
    from sabench.verifiers.types import PaperScore

    index = json.loads((DATA / "runs" / "index.json").read_text())
    pairs: Counter[tuple[str, str]] = Counter()
    for run in index["runs"]:
        ours_path = dest / "scores" / run["config"] / f"{run['paper_id']}.json"
        if run["missing_cited_files"] or not ours_path.is_file():
            continue
        ours = {v.id: v for _, v in PaperScore.load(ours_path).verdicts()}
        for dim, theirs in PaperScore.load(DATA / run["official_score"]).verdicts():
            mine = ours.get(theirs.id)
            if (theirs.score is None or theirs.score > 0.25 or mine is None
                    or mine.score is None or mine.score > 0.25):
                continue
            pairs[(str(mine.failure_category), str(read_reasoning(theirs.judge_reasoning,
                                                                  dim).category))] += 1
    n = sum(pairs.values())
    ours_share = Counter()
    for (mine, _), count in pairs.items():
        ours_share[mine] += count
    same = sum(c for (a, b), c in pairs.items() if a == b)
    return {"claims_both_low": n, "agreement": round(same / n, 3) if n else None,
            "ours": {k: round(c / n, 3) for k, c in ours_share.most_common()}}


def taxonomy_time() -> dict[str, float]:
    from sabench.verifiers.taxonomy import release_comparison

    start = time.perf_counter()
    result = release_comparison(DATA / "official_scores")
    return {"release_taxonomy_s": round(time.perf_counter() - start, 2),
            "zero_scored": result["zero"]["n"], "low": result["low"]["n"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--judge", default="offline")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sabench-bench-") as tmp:
        dest = Path(tmp)
        subprocess.run(["sh", str(DATA / "unpack.sh"), str(dest)], check=True,
                       stdout=subprocess.DEVNULL)
        runs = score_runs(dest, args.judge, args.jobs)
        agreement = category_agreement(dest)
    first = runs["first"]
    print(json.dumps({
        "judge": args.judge, "jobs": args.jobs, "cores": os.cpu_count(),
        "score_runs": runs, **taxonomy_time(), "category_agreement": agreement,
        # The machine is shared: wall time grows with others' load, CPU time does not.
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpu_s_per_core": round(first["cpu_s"] / min(args.jobs, os.cpu_count() or 1), 1),
        "target_s": TARGET_S, "target_mb": TARGET_MB,
        "meets_time": first["wall_s"] <= TARGET_S, "meets_memory": first["peak_mb"] <= TARGET_MB,
    }, indent=1))


if __name__ == "__main__":
    main()
