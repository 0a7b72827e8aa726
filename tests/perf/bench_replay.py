"""Replay fidelity of every development BasicAgent run, and the graph's overhead per step.

Each recorded run (../shared/sabench/transcripts/<config>_basic/<paper>/) is replayed through
our BasicAgent graph inside the evaluation graph, its recorded tool calls executed for real in
the sandbox; the repository it ends with is compared byte for byte with the released one.
Prints one JSON object: per run the share of released files written identical and the reasons
for the others, the tool outputs that differ from the recorded ones by kind, and per step the
wall time the graph spends outside model and tool calls (checkpoint writes included).

    python tests/perf/bench_replay.py            # SABENCH_REPLAY_BACKEND=docker|local
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


def overhead_per_step(out: Path) -> tuple[float, float]:
    """Seconds outside model calls, tool calls and the fixed phases: per model step (one model
    call and the tool calls it asked for) and per node run."""
    record = json.loads((out / "record.json").read_text())
    timings = record["timings"]
    inside = sum(timings.get(k, 0.0) for k in ("scaffold_s", "prepare_s", "collect_s",
                                                "score_s"))
    steps = sum(1 for entry in record["trace"] if entry["kind"] == "model")
    tools = sum(1 for entry in record["trace"] if entry["kind"] == "tool")
    outside = timings["wall_s"] - inside
    return outside / max(1, steps), outside / max(1, steps + tools)


def median_ms(values: list[float]) -> float | None:
    return round(1000 * values[len(values) // 2], 3) if values else None


def main() -> None:
    backend = os.environ.get("SABENCH_REPLAY_BACKEND", "local")
    only = sys.argv[1:]
    runs = sorted(p for p in (DATA_DIR / "transcripts").glob("*_basic/*")
                  if (p / "messages.jsonl").is_file() and (not only or p.parent.name in only))
    results, kinds, reasons = [], Counter(), Counter()
    identical = released = 0
    overheads, per_node = [], []
    with runs_root() as root, tempfile.TemporaryDirectory() as tmp:
        for run in runs:
            out = Path(tmp) / run.parent.name / run.name
            repo = root / "runs" / run.parent.name / run.name / "repo"
            report = replay_run(run, DATA_DIR / "papers", out, released=repo, backend=backend)
            per_step, node = overhead_per_step(out)
            overheads.append(per_step)
            per_node.append(node)
            identical += report["files_identical"]
            released += report["files_released"]
            kinds.update(report["tool_output_diff_kinds"])
            reasons.update(item["reason"] for item in report["files_differing"])
            results.append({"run": f"{run.parent.name}/{run.name}",
                            "share_identical": report["share_identical"],
                            "files": f"{report['files_identical']}/{report['files_released']}",
                            "calls": f"{report['model_calls']}/{report['recorded_calls']}",
                            "stop": report["stop_reason"],
                            "tool_output_diffs": report["tool_output_diffs"],
                            "differing": report["files_differing"]})
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    overheads.sort()
    per_node.sort()
    print(json.dumps({
        "backend": backend, "runs": len(results),
        "files_released": released, "files_identical": identical,
        "share_identical": round(identical / max(1, released), 4),
        "differing_reasons": dict(reasons), "tool_output_diff_kinds": dict(kinds),
        "graph_overhead_ms_per_step_median": median_ms(overheads),
        "graph_overhead_ms_per_node_median": median_ms(per_node),
        "per_run": results}, indent=1))


if __name__ == "__main__":
    main()
