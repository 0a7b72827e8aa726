"""Offline scoring cost in machine instructions, which day-to-day drift does not move: prints one
JSON object.

Wall-clock figures on the shared machines drift by 2-3x from day to day (see
`reference_cpu_seconds` in bench_offline.py), so two versions of the judge timed on different days
cannot be compared. Instruction counts (valgrind's callgrind) can: the same code on the same
repositories gives the same count to within about 0.3% (hash seed fixed; measured
0.25% apart on two runs while native CPU time moved by 35%).

Figures, on a fixed sample of the development runs (every 30th of `runs/index.json`):
- `instructions_per_repo`: instructions to index and score one repository (offline judge), start-up
  (imports, dataset, calibration) subtracted: one process scores the sample, another only starts;
- `native_cpu_seconds_per_repo`: the same sample's CPU seconds without valgrind, right now;
- `giga_instructions_per_cpu_second`: their ratio, the machine's speed on this very workload now.
  The median target of 0.25 s per repository means a budget of 0.25 s times this speed.

Skipped (with the reason printed) when valgrind is not installed. Takes about 2 minutes.
Uses $SABENCH_RUNS_ROOT when set (a folder made by ../shared/sabench/unpack.sh).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from measure import DATA_DIR, runs_root

SAMPLE_STEP = 30
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def _sample(root: Path) -> list[tuple[str, Path]]:
    from sabench.benchmark.calibrate import read_runs

    return [(r.paper_id, r.repo) for r in read_runs(root)[::SAMPLE_STEP]]


def score_sample(root: Path, count: int) -> float:
    """Start up, then score the first `count` repositories of the sample; returns the CPU
    seconds of the scoring alone."""
    from sabench.benchmark.dataset import load_papers
    from sabench.verifiers.offline import OfflineJudge

    specs = load_papers(DATA_DIR / "papers", with_markdown=False)
    judge = OfflineJudge()
    start = time.process_time()
    for paper, repo in _sample(root)[:count]:
        judge.score(specs[paper], repo)
    return time.process_time() - start


def _instructions(root: Path, count: int) -> int:
    """Instructions of a fresh process that starts up and scores `count` repositories."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               sys.executable, __file__, "--child", str(root), str(count)]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"callgrind run failed ({done.returncode}): {done.stderr[-500:]}")
    return int(found.group(1))


def measure(root: Path) -> dict:
    repos = len(_sample(root))
    score_sample(root, 1)  # warm the file cache for the native timing
    native = score_sample(root, repos)
    startup = _instructions(root, 0)
    per_repo = (_instructions(root, repos) - startup) / repos
    return {
        "repos": repos,
        "instructions_per_repo": int(per_repo),
        "startup_instructions": startup,
        "native_cpu_seconds_per_repo": round(native / repos, 4),
        "giga_instructions_per_cpu_second": round(per_repo / (native / repos) / 1e9, 3),
    }


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        score_sample(Path(sys.argv[2]), int(sys.argv[3]))
        return
    if shutil.which("valgrind") is None:
        sys.stdout.write(json.dumps({"skipped": "valgrind is not installed"}) + "\n")
        return
    with runs_root() as root:
        result = measure(root)
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
