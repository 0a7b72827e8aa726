"""Offline scoring speed on the 240 development runs: prints one JSON object.

Figures: median and 90th-percentile seconds per repository (index + checks + verdicts, one
process), total wall seconds for all runs with 2 worker processes, peak resident memory, and
the machine's speed at the time (`reference_cpu_seconds`, lower is faster).
Uses $SABENCH_RUNS_ROOT when set (a folder made by ../shared/sabench/unpack.sh), else unpacks
the runs into a temporary folder first (not timed).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from measure import DATA_DIR, reference_cpu_seconds, runs_root

from sabench.benchmark.calibrate import read_runs
from sabench.benchmark.dataset import load_papers
from sabench.verifiers.offline import OfflineJudge

DATA = DATA_DIR
_SPECS: dict = {}


def _score(args: tuple[str, str, str]) -> tuple[float, float]:
    paper, repo, papers_dir = args
    if not _SPECS:
        _SPECS.update(load_papers(Path(papers_dir), with_markdown=False))
    wall, cpu = time.perf_counter(), time.process_time()
    OfflineJudge().score(_SPECS[paper], Path(repo))
    return time.perf_counter() - wall, time.process_time() - cpu


def measure(root: Path) -> dict:
    papers_dir = DATA / "papers"
    work = [(r.paper_id, str(r.repo), str(papers_dir)) for r in read_runs(root)]
    _score(work[0])  # warm imports and the calibration
    serial = [_score(item) for item in work]
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=2) as pool:
        list(pool.map(_score, work, chunksize=4))
    total = time.perf_counter() - start
    walls = sorted(w for w, _ in serial)
    peak_kb = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return {
        "runs": len(work),
        "median_seconds_per_repo": round(statistics.median(walls), 4),
        "p90_seconds_per_repo": round(walls[int(0.9 * (len(walls) - 1))], 4),
        "median_cpu_seconds_per_repo": round(statistics.median(c for _, c in serial), 4),
        "serial_total_seconds": round(sum(walls), 2),
        "total_seconds_2_workers": round(total, 2),
        "peak_rss_mb": round(peak_kb / 1024, 1),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "reference_cpu_seconds": reference_cpu_seconds(),
    }


def main() -> None:
    with runs_root() as root:
        result = measure(root)
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
