"""Replay fidelity of every development PaperCoder run.

Each recorded run (../shared/sabench/transcripts/<config>_papercoder/<paper>/) is replayed
through our PaperCoder graph: the recorded planning and analysis replies, and coding replies
synthesised from the released files. Prints one JSON object: per run whether the calls and the
parsed task list match the recording, and the share of released files written byte-identical
with the reason for each other file; over all runs the totals.

    python tests/perf/bench_replay_papercoder.py [CONFIG ...]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

from measure import DATA_DIR, runs_root

from sabench.benchmark.replay import replay_run


def main() -> None:
    backend = os.environ.get("SABENCH_REPLAY_BACKEND", "local")
    only = sys.argv[1:]
    runs = sorted(p for p in (DATA_DIR / "transcripts").glob("*_papercoder/*")
                  if (p / "planning_response.json").is_file()
                  and (not only or p.parent.name in only))
    results, reasons = [], Counter()
    totals = Counter()
    with runs_root() as root, tempfile.TemporaryDirectory() as tmp:
        for run in runs:
            out = Path(tmp) / run.parent.name / run.name
            repo = root / "runs" / run.parent.name / run.name / "repo"
            report = replay_run(run, DATA_DIR / "papers", out, released=repo, backend=backend)
            totals.update(identical=report["files_identical"], released=report["files_released"],
                          task_lists=report["task_list_identical"],
                          calls=report["calls_matched"])
            reasons.update(item["reason"] for item in report["files_differing"])
            results.append({"run": f"{run.parent.name}/{run.name}",
                            "share_identical": report["share_identical"],
                            "files": f"{report['files_identical']}/{report['files_released']}",
                            "task_list_identical": report["task_list_identical"],
                            "calls_matched": report["calls_matched"],
                            "calls": [report["planning_calls"], report["analysis_calls"],
                                      report["coding_calls"]],
                            "stop": report["stop_reason"],
                            "differing": report["files_differing"]})
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    print(json.dumps({
        "backend": backend, "runs": len(results),
        "files_released": totals["released"], "files_identical": totals["identical"],
        "share_identical": round(totals["identical"] / max(1, totals["released"]), 4),
        "task_lists_identical": totals["task_lists"], "calls_matched": totals["calls"],
        "differing_reasons": dict(reasons), "per_run": results}, indent=1))


if __name__ == "__main__":
    main()
