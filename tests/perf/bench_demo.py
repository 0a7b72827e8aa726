"""Time and peak memory of `sabench demo`, and of the keyword judge alone. Prints JSON.

`sabench demo` runs as a fresh process, as a user runs it (imports and the HTML report's
matplotlib included); the peak resident memory is the child's ru_maxrss. The keyword judge is
also timed in process on the two bundled reproductions. CPU time is given beside wall time
because the machine is shared.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from measure import run_cli

REPEATS = 3


def _keyword_judge_seconds() -> dict[str, float]:
    from sabench.benchmark.demo_run import REPOSITORIES, demo_paper, demo_repository
    from sabench.verifiers.keyword import KeywordJudge

    spec, judge = demo_paper(), KeywordJudge()
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for name in REPOSITORIES:
            judge.score(spec, demo_repository(name))
        times.append(time.perf_counter() - start)
    return {"keyword_judge_both_repos_s_median": round(statistics.median(times), 4)}


def main() -> None:
    figures: dict[str, object] = {"repeats": REPEATS}
    with tempfile.TemporaryDirectory() as tmp:
        runs = [run_cli("demo", "--out", str(Path(tmp) / f"out{i}"), "--judge", "keyword")
                for i in range(REPEATS)]
    figures["demo_keyword_wall_s_median"] = round(statistics.median(r.wall_s for r in runs), 3)
    figures["demo_keyword_cpu_s_median"] = round(statistics.median(r.cpu_s for r in runs), 3)
    figures["demo_keyword_peak_rss_mb_max"] = round(max(r.peak_mb for r in runs), 1)
    figures.update(_keyword_judge_seconds())
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
