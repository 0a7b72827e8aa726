"""The Ray executor: the demo matrix on a local Ray instance that the test starts, in process
and through `sabench run --executor ray --ray-address`, with the same results and layout as
the process pool. `SABENCH_REQUIRE_RAY=1` (CI) turns a missing Ray into a failure."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sabench.benchmark.dataset import load_paper
from sabench.benchmark.matrix import load_matrix
from sabench.benchmark.runner import LocalExecutor, RayExecutor, run_matrix
from sabench.benchmark.scoring import make_judge, score_repo
from tests.benchmark.test_runner import DEMO, FAITHFUL, demo_spec, read, sabench
from tests.conftest import require_or_skip
from tests.sandbox.conftest import require_backend

pytestmark = [pytest.mark.ray, pytest.mark.slow]


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """A local Ray instance with two CPU slots, stopped after the module."""
    try:
        import ray
    except ImportError:
        require_or_skip(False, "SABENCH_REQUIRE_RAY",
                        "ray is not installed (pip install 'sabench[cluster]')")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(autouse=True)
def _local_sandbox() -> None:
    require_backend("local")


def test_the_demo_matrix_on_ray(ray_cluster: Any, tmp_path: Path) -> None:
    matrix, out = load_matrix(demo_spec(tmp_path)), tmp_path / "out"
    summary = run_matrix(matrix, out, executor=RayExecutor(jobs=2))
    assert summary.executor == "ray" and summary.count("ok") == 4, summary.results
    workers = {r["pid"] for r in summary.results}
    assert len(workers) == 2 and os.getpid() not in workers  # two Ray actors ran them
    expected = score_repo(load_paper(DEMO / "papers" / "smoothlr"), FAITHFUL,
                          make_judge("offline")).overall_score
    for config, entry in matrix.configs().items():
        record = read(out / "records" / config / "smoothlr.json")
        assert record["status"] == "ok" and record["runner"]["config"] == config
        if entry["scaffold_name"] == "basic":
            assert read(out / "scores" / config / "smoothlr.json")["overall_score"] == \
                pytest.approx(expected)
    # The same folder is the process pool's: it finds every run finished.
    again = run_matrix(matrix, out, executor=LocalExecutor(jobs=2))
    assert again.skipped == 4 and not again.results


def test_the_cli_runs_on_a_ray_cluster_by_address(ray_cluster: Any, tmp_path: Path) -> None:
    address = ray_cluster.get_runtime_context().gcs_address
    spec, out = demo_spec(tmp_path, repeats=1), tmp_path / "out"
    done = sabench("run", str(spec), "--out", str(out), "--executor", "ray", "--ray-address",
                   address, "--jobs", "2", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["executor"] == "ray" and summary["ok"] == 2 == summary["ran"]
    assert summary["startup_s"] is not None
    assert sabench("report", str(out / "scores")).returncode == 0
