"""The benchmark runner's own costs, and the dry-run estimate of the paper's matrix.

Prints one JSON object:

* `overhead`: BasicAgent on the demo paper with a scripted model (no model latency), 8 runs on
  one worker of the process pool: per run the time outside model calls and tools, split into
  sandbox start (`prepare`), scoring, and the rest (graph, checkpoints, publishing); first run
  of the worker apart from the later ones; plus the executor's dispatch cost per run.
* `demo_matrix`: examples/demo-matrix.yaml (alignment-first and BasicAgent × 2 repeats) wall
  time on 1 and 2 workers, worker start-up included.
* `ray`: start-up of a local Ray instance and its actors, and the demo matrix on 2 actors.
* `docker`: sandbox start in a run with the workers' prewarmed containers, against a cold
  container start measured apart.
* `estimate`: `sabench run examples/sa-bench.yaml --dry-run` totals, the recorded usage it
  rests on, and the estimator's error when a recorded run's own recording is withheld.

    python tests/perf/bench_runner.py [--skip-ray] [--skip-docker]
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from measure import DATA_DIR, REPO_ROOT, reference_cpu_seconds

from sabench.benchmark.matrix import load_matrix
from sabench.benchmark.runner import LocalExecutor, RayExecutor, run_matrix

EXAMPLES = REPO_ROOT / "examples"
REPLIES = REPO_ROOT / "benchmark" / "demo" / "replies.yaml"
DEMO_PAPERS = REPO_ROOT / "benchmark" / "demo" / "papers"


def spec_file(folder: Path, **changes: Any) -> Path:
    data = yaml.safe_load((EXAMPLES / "demo-matrix.yaml").read_text())
    data["models"][0]["spec"] = f"scripted:{REPLIES}"
    data["papers"]["dataset"] = str(DEMO_PAPERS)
    data.update(changes)
    path = folder / f"spec-{len(list(folder.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def median(values: list[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def overhead(folder: Path, runs: int = 8) -> dict[str, Any]:
    spec = spec_file(folder, scaffolds=["basic"], repeats=runs, jobs=1)
    summary = run_matrix(load_matrix(spec), folder / "overhead", executor=LocalExecutor(1))
    rows = []
    for result in sorted(summary.results, key=lambda r: r["seed"]):
        record = json.loads((folder / "overhead" / "records" / result["config"] /
                             "smoothlr.json").read_text())
        timings = record["timings"]
        rest = result["overhead_s"] - timings.get("prepare_s", 0) - timings.get("score_s", 0)
        rows.append({"overhead_s": result["overhead_s"], "prepare_s": timings["prepare_s"],
                     "score_s": timings["score_s"], "rest_s": rest,
                     "dispatch_s": result["dispatch_s"], "task_s": result["task_s"],
                     "model_s": result["model_s"], "tool_s": result["tool_s"]})
    later = rows[1:]
    return {"runs": runs, "first_run": {k: round(v, 4) for k, v in rows[0].items()},
            "later_runs_median": {k: median([r[k] for r in later]) for k in rows[0]},
            "matrix_wall_s": round(summary.wall_s, 3)}


def demo_matrix(folder: Path) -> dict[str, Any]:
    figures = {}
    for jobs in (1, 2):
        spec = spec_file(folder, jobs=jobs)
        started = time.perf_counter()
        summary = run_matrix(load_matrix(spec), folder / f"demo-{jobs}",
                             executor=LocalExecutor(jobs))
        assert summary.failed == 0, summary.results
        figures[f"workers_{jobs}"] = {"wall_s": round(time.perf_counter() - started, 3),
                                      "runs": len(summary.results),
                                      "sum_task_s": round(sum(r["task_s"]
                                                              for r in summary.results), 3)}
    return figures


def ray_figures(folder: Path) -> dict[str, Any]:
    import ray

    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    init_s = time.perf_counter() - started
    try:
        executor = RayExecutor(jobs=2)
        began = time.perf_counter()
        summary = run_matrix(load_matrix(spec_file(folder, jobs=2)), folder / "ray",
                             executor=executor)
        wall = time.perf_counter() - began
        assert summary.failed == 0, summary.results
    finally:
        ray.shutdown()
    return {"ray_init_s": round(init_s, 3), "actors_ready_s": round(executor.startup_s, 3),
            "demo_matrix_wall_s": round(wall, 3), "runs": len(summary.results)}


def docker_figures(folder: Path) -> dict[str, Any]:
    from sabench.sandbox.docker_backend import DockerSandbox
    from sabench.sandbox.types import SandboxSpec

    cold = []
    for _ in range(3):
        started = time.perf_counter()
        box = DockerSandbox(SandboxSpec(backend="docker", workspace_aliases=("/home",)))
        cold.append(time.perf_counter() - started)
        box.close()
    spec = spec_file(folder, scaffolds=["basic"], repeats=4, jobs=2,
                     sandbox={"backend": "docker"})
    summary = run_matrix(load_matrix(spec), folder / "docker", executor=LocalExecutor(2))
    assert summary.failed == 0, summary.results
    prepare = [json.loads((folder / "docker" / "records" / r["config"] / "smoothlr.json")
                          .read_text())["timings"]["prepare_s"] for r in summary.results]
    return {"cold_container_start_s": median(cold), "run_prepare_s_median": median(prepare),
            "run_prepare_s": [round(p, 3) for p in prepare],
            "matrix_wall_s": round(summary.wall_s, 3)}


def estimate_figures() -> dict[str, Any]:
    from sabench.benchmark.runner_estimates import (
        estimate_matrix,
        estimate_usage,
        read_recordings,
        totals,
    )

    matrix = load_matrix(EXAMPLES / "sa-bench.yaml", dataset=DATA_DIR / "papers")
    recordings = read_recordings(DATA_DIR / "transcripts")
    estimates = estimate_matrix(matrix, DATA_DIR / "transcripts")
    errors: dict[str, list[float]] = {}
    for (scaffold, model, paper), usage in recordings.runs.items():
        held_out, _, _ = estimate_usage(recordings, scaffold, model, paper, withhold=True)
        if held_out is not None and usage.input_tokens:
            errors.setdefault(scaffold, []).append(
                abs(held_out.input_tokens - usage.input_tokens) / usage.input_tokens)
    recorded = [u for u in recordings.runs.values()]
    return {
        "full_matrix": totals(list(estimates.values())),
        "recorded_runs": len(recorded),
        "recorded_input_tokens": round(sum(u.input_tokens for u in recorded)),
        "recorded_output_tokens": round(sum(u.output_tokens for u in recorded)),
        "held_out_input_error_median": {s: median(e) for s, e in sorted(errors.items())},
        "note": "recorded = release transcripts (BasicAgent exact; PaperCoder planning+analysis "
                "recorded plus an estimated coding stage; OpenHands imputed); held-out error: "
                "|estimate - recording| / recording of input tokens when the run's own "
                "recording is withheld (the estimate the 10 unrecorded papers get)",
    }


def main() -> None:
    figures: dict[str, Any] = {"reference_cpu_s": round(reference_cpu_seconds(), 4)}
    with tempfile.TemporaryDirectory(prefix="bench-runner-") as tmp:
        folder = Path(tmp)
        figures["overhead"] = overhead(folder)
        figures["demo_matrix"] = demo_matrix(folder)
        if "--skip-ray" not in sys.argv:
            figures["ray"] = ray_figures(folder)
        if "--skip-docker" not in sys.argv:
            figures["docker"] = docker_figures(folder)
    if (DATA_DIR / "transcripts").is_dir():
        figures["estimate"] = estimate_figures()
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
