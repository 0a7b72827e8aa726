"""Time and memory of loading the 30-paper SA-Bench dataset (target: under 1 s). Prints JSON."""

from __future__ import annotations

import json
import statistics
import sys
import time
import tracemalloc

from measure import DATA_DIR

from sabench.benchmark.dataset import load_papers


def main() -> None:
    papers = DATA_DIR / "papers"
    if not papers.is_dir():
        print(json.dumps({"bench": "dataset", "skipped": f"no dataset at {papers}"}))
        return
    times = []
    for _ in range(5):
        start = time.perf_counter()
        specs = load_papers(papers)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    load_papers(papers)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(json.dumps({
        "bench": "dataset_load",
        "papers": len(specs),
        "claims": sum(len(s.claims) for s in specs.values()),
        "median_s": round(statistics.median(times), 4),
        "max_s": round(max(times), 4),
        "peak_python_alloc_mb": round(peak / 2**20, 1),
        "target_s": 1.0,
    }))


if __name__ == "__main__":
    sys.exit(main())
