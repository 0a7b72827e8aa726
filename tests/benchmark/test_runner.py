"""`sabench run`: the demo matrix end to end on the process pool, failures recorded while the
other runs go on, prices and keys per model, one runner per folder.

Everything is real except the model: scripted replies (`scripted:PATH`) or the loopback model
server; the sandbox is bubblewrap (or Docker where marked), scores come from the offline judge.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sabench.benchmark.dataset import load_paper
from sabench.benchmark.matrix import load_matrix
from sabench.benchmark.runner import RunnerError, run_matrix, runner_lock
from sabench.benchmark.scoring import make_judge, score_repo
from sabench.scaffolds import SCAFFOLDS
from tests.agent.model_server import HttpError, LoopbackModelServer, Reply, Request
from tests.sandbox.conftest import require_backend

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
REPLIES = REPO / "benchmark" / "demo" / "replies.yaml"
DEMO = REPO / "benchmark" / "demo"
FAITHFUL = DEMO / "repos" / "faithful"


@pytest.fixture(autouse=True)
def _local_sandbox() -> None:
    require_backend("local")


def demo_spec(tmp_path: Path, **changes: Any) -> Path:
    """examples/demo-matrix.yaml with absolute paths, as a file in tmp_path.

    The demo crosses its scaffolds with two repeats; until the alignment-first scaffold is
    registered (and in the demo spec) a second BasicAgent entry stands in for it, so the matrix
    is 2 scaffolds × 1 paper × 2 repeats either way.
    """
    data = yaml.safe_load((EXAMPLES / "demo-matrix.yaml").read_text())
    data["models"][0]["spec"] = f"scripted:{REPLIES}"
    data["papers"]["dataset"] = str(DEMO / "papers")
    if len(data["scaffolds"]) < 2:
        data["scaffolds"].append({"name": "basic", "label": "basic-b",
                                  "options": {"max_steps": 30}})
    data.update(changes)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def sabench(*args: str, env: dict[str, str] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sabench.benchmark.cli", *args],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def test_the_demo_matrix_runs_end_to_end_on_the_process_pool(tmp_path: Path) -> None:
    spec, out = demo_spec(tmp_path), tmp_path / "out"
    matrix = load_matrix(spec)
    done = sabench("run", str(spec), "--out", str(out), "--jobs", "2", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    configs = list(matrix.configs())
    assert len(configs) == 4 and summary["ran"] == 4 == summary["ok"]
    assert len({r["pid"] for r in summary["runs"]}) == 2, "two worker processes"

    expected = score_repo(load_paper(DEMO / "papers" / "smoothlr"), FAITHFUL,
                          make_judge("offline")).overall_score
    listed = read(out / "scores" / "configs.json")
    assert set(listed) == set(configs)
    for config in configs:
        assert listed[config]["model"] == "scripted" and listed[config]["seed"] in (1, 2)
        record = read(out / "records" / config / "smoothlr.json")
        assert record["status"] == "ok" and record["runner"]["config"] == config
        assert record["requests"] == record["usage"]["calls"] > 0
        assert record["runner"]["overhead_s"] <= record["runner"]["task_s"]
        score = read(out / "scores" / config / "smoothlr.json")
        assert score["overall_score"] == record["overall_score"]
        if matrix.configs()[config]["scaffold_name"] == "basic":
            assert record["stop_reason"] == "submitted" and record["requests"] == 4
            assert record["usage"]["input_tokens"] == 30_900
            assert score["overall_score"] == pytest.approx(expected)
            repo = out / "runs" / config / "smoothlr" / "repo"
            assert sorted(p.name for p in repo.iterdir()) == \
                sorted(p.name for p in FAITHFUL.iterdir())

    # The other commands read the output unchanged: the report, and score-runs (the runs
    # folder is a runs root, to score again with another judge).
    report = sabench("report", str(out / "scores"), "--format", "json")
    assert report.returncode == 0, report.stderr
    assert set(json.loads(report.stdout)["configs"]) == set(configs)
    rescored = sabench("score-runs", str(out), "--papers", str(DEMO / "papers"), "--judge",
                       "keyword", "--out", str(tmp_path / "keyword"))
    assert rescored.returncode == 0, rescored.stderr
    assert read(tmp_path / "keyword" / "configs.json") == {
        name: {"scaffold": entry["scaffold"], "model": "scripted"}
        for name, entry in matrix.configs().items()}

    # Running again skips every finished run and touches none of their files.
    stamps = {p: p.stat().st_mtime_ns for p in (out / "records").rglob("*.json")}
    again = sabench("run", str(spec), "--out", str(out), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["skipped"] == 4 and json.loads(again.stdout)["ran"] == 0
    assert stamps == {p: p.stat().st_mtime_ns for p in (out / "records").rglob("*.json")}


def faithful_replies() -> list[Reply]:
    """BasicAgent writing the faithful reproduction: file by file, then submit."""
    calls = [("bash", {"command": f"cat > /home/submission/{p.name} << 'EOF'\n"
                                  f"{p.read_text()}EOF"}) for p in sorted(FAITHFUL.iterdir())]
    return [Reply(tool_calls=calls), Reply(tool_calls=[("submit", {"summary": "done"})])]


def by_turn(replies: list[Reply]) -> Any:
    """A stateless responder: the reply for the number of assistant turns so far."""
    def respond(request: Request) -> Reply:
        turns = sum(m["role"] == "assistant" for m in request.body["messages"])
        return replies[min(turns, len(replies) - 1)]
    return respond


def test_failures_become_error_records_and_the_other_runs_go_on(
        tmp_path: Path, model_server: LoopbackModelServer) -> None:
    """A scaffold that raises and a model that fails every call, beside a healthy run."""
    spec = demo_spec(tmp_path, repeats=1, scaffolds=[
        "basic", {"name": "basic", "label": "raises", "options": {"max_steps": "many"}}])
    data = yaml.safe_load(spec.read_text())
    data["models"].append({"spec": "openai-compatible:flaky", "base_url":
                           model_server.openai_url})
    spec.write_text(yaml.safe_dump(data))
    model_server.responder = lambda request: HttpError(500, retry_after=None)
    out, env = tmp_path / "out", {"OPENAI_API_KEY": "test-key"}

    done = sabench("run", str(spec), "--out", str(out), "--json", env=env)
    assert done.returncode == 1, done.stderr
    assert "3 of 4 runs failed" in done.stderr.strip().splitlines()[-1]
    summary = json.loads(done.stdout)
    status = {r["config"]: r for r in summary["runs"]}
    assert status["scripted_basic"]["status"] == "ok"
    for config in ("scripted_raises", "flaky_raises"):
        assert status[config]["status"] == "error"
        assert "TypeError" in read(out / "records" / config / "smoothlr.json")["error"]
    failed = read(out / "records" / "flaky_basic" / "smoothlr.json")
    assert failed["status"] == "error" and "500" in failed["error"]
    # Errors are records, never scores: no zero slips into the tables.
    assert sorted(p.name for p in (out / "scores").iterdir()) == ["configs.json",
                                                                   "scripted_basic"]
    assert list(read(out / "scores" / "configs.json")) == ["scripted_basic"]
    assert sabench("report", str(out / "scores")).returncode == 0

    # The server recovers: a rerun resumes the failed runs and skips the finished one.
    model_server.responder = by_turn(faithful_replies())
    again = sabench("run", str(spec), "--out", str(out), "--json", env=env)
    rerun = {r["config"]: r["status"] for r in json.loads(again.stdout)["runs"]}
    assert rerun == {"flaky_basic": "ok", "scripted_raises": "error", "flaky_raises": "error"}
    assert read(out / "records" / "flaky_basic" / "smoothlr.json")["status"] == "ok"
    assert (out / "scores" / "flaky_basic" / "smoothlr.json").is_file()


def test_prices_and_keys_come_from_the_model_entry(
        tmp_path: Path, model_server: LoopbackModelServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNNER_TEST_KEY", "key-of-this-model")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = demo_spec(tmp_path, repeats=1, scaffolds=["basic"], jobs=1, models=[
        {"spec": "openai-compatible:priced-model", "base_url": model_server.openai_url,
         "api_key_env": "RUNNER_TEST_KEY", "price": {"input": 2.0, "output": 10.0}}])
    model_server.responder = by_turn(faithful_replies())
    summary = run_matrix(load_matrix(spec), tmp_path / "out")
    assert summary.count("ok") == 1
    assert {h for r in model_server.requests for k, h in r.headers.items()
            if k.lower() == "authorization"} == \
        {"Bearer key-of-this-model"}
    usage = read(tmp_path / "out" / "records" / "priced-model_basic" / "smoothlr.json")["usage"]
    assert usage["unpriced_calls"] == 0
    assert usage["dollars"] == pytest.approx((2 * 100 * 2.0 + 2 * 20 * 10.0) / 1e6)
    assert "OPENAI_API_KEY" not in os.environ  # the key was lent to the run, not kept

    monkeypatch.delenv("RUNNER_TEST_KEY")
    with pytest.raises(Exception, match="set RUNNER_TEST_KEY"):
        run_matrix(load_matrix(spec), tmp_path / "out2")


def test_one_runner_per_folder_and_configurations_keep_their_meaning(tmp_path: Path) -> None:
    spec, out = demo_spec(tmp_path, repeats=1, scaffolds=["basic"]), tmp_path / "out"
    matrix = load_matrix(spec)
    with runner_lock(out), pytest.raises(RunnerError, match="another sabench run"):
        run_matrix(matrix, out)
    assert run_matrix(matrix, out).count("ok") == 1
    data = yaml.safe_load(spec.read_text())
    data["scaffolds"] = [{"name": "basic", "options": {"max_steps": 3}}]
    data["models"][0]["spec"] = "openai:gpt-4o"  # same name "scripted", another model
    spec.write_text(yaml.safe_dump(data))
    with pytest.raises(RunnerError, match="'scripted_basic' has model_spec"):
        run_matrix(load_matrix(spec), out)


def test_dry_run_lists_every_run_with_its_estimate(tmp_path: Path) -> None:
    spec, out = demo_spec(tmp_path), tmp_path / "out"
    done = sabench("run", str(spec), "--out", str(out), "--dry-run", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert len(report["runs"]) == 4 and {r["state"] for r in report["runs"]} == {"new"}
    basic = next(r["estimate"] for r in report["runs"] if r["scaffold"] == "basic")
    # The scripted model's estimate is what its replies state (4 replies, 30,900 tokens in).
    assert (basic["source"], basic["input_tokens"], basic["calls"]) == ("scripted", 30_900, 4)
    assert basic["dollars"] is None  # a scripted model has no price: never shown as $0
    assert {r["estimate"]["source"] for r in report["runs"]} == {"scripted"}
    assert not out.exists()


@pytest.mark.dataset
def test_dry_run_of_the_paper_matrix_uses_the_recorded_usage(sabench_data: Path,
                                                             tmp_path: Path) -> None:
    needed = {"basic", "papercoder", "openhands"}
    if not needed <= set(SCAFFOLDS):
        pytest.skip(f"scaffolds not registered yet: {sorted(needed - set(SCAFFOLDS))}")
    done = sabench("run", str(EXAMPLES / "sa-bench.yaml"), "--out", str(tmp_path / "o"),
                   "--papers", str(sabench_data / "papers"), "--dry-run", "--json",
                   env={"DEEPSEEK_API_KEY": "x", "GEMINI_API_KEY": "x"})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert len(report["runs"]) == 360 and report["totals"]["unestimated"] == 0
    gpt4o = {r["paper_id"]: r["estimate"] for r in report["runs"]
             if r["config"] == "gpt4o_basic"}
    meta = read(sabench_data / "transcripts" / "gpt4o_basic" / "luno" / "meta.json")["usage"]
    assert gpt4o["luno"]["input_tokens"] == meta["total_input_tokens"]
    assert gpt4o["luno"]["source"] == "recorded"
    assert gpt4o["luno"]["dollars"] == pytest.approx(
        (meta["total_input_tokens"] * 2.5 + meta["total_output_tokens"] * 10) / 1e6)
    held_out = [p for p, e in gpt4o.items() if e["source"] == "model-mean"]
    assert len(held_out) == 10  # the 10 test papers have no recordings


@pytest.mark.docker
def test_docker_runs_prewarm_their_sandboxes_and_leave_none_behind(tmp_path: Path) -> None:
    require_backend("docker")
    from sabench.sandbox.docker_backend import DockerBackend, docker_client
    from sabench.sandbox.reaper import sandbox_containers
    from sabench.sandbox.types import SandboxSpec

    ok, why = DockerBackend().available(SandboxSpec(backend="docker"))
    assert ok, why
    spec = demo_spec(tmp_path, scaffolds=["basic"], sandbox={"backend": "docker"})
    done = sabench("run", str(spec), "--out", str(tmp_path / "out"), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["ok"] == 2
    docker_client()
    owners = {c.labels.get("sabench.sandbox.owner", "") for c in sandbox_containers()}
    workers = {str(r["pid"]) for r in summary["runs"]}
    assert not {o for o in owners if o.rpartition(":")[2] in workers}, \
        "a worker's (prewarmed) container outlived it"


@pytest.mark.postgres
def test_checkpoints_can_live_in_postgres(tmp_path: Path, postgres_url: str) -> None:
    """The spec's `checkpoint` URL: every run a thread of its own in one shared database."""
    spec = demo_spec(tmp_path, checkpoint=postgres_url, name=f"pg-{tmp_path.name}")
    summary = run_matrix(load_matrix(spec), tmp_path / "out")
    assert summary.count("ok") == 4 and summary.failed == 0, summary.results
    assert not list((tmp_path / "out" / "runs").rglob("checkpoints.sqlite"))
    threads = {read(p)["runner"]["thread"] for p in (tmp_path / "out" / "records").rglob("*.json")}
    assert len(threads) == 4
