"""The alignment-first scaffold on the demo paper over the loopback model server: claims
extracted, planned, implemented, checked for real, repaired."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sabench.agent.types import Budget
from sabench.benchmark.dataset import load_paper
from sabench.benchmark.reproduce import RunRequest, reproduce
from tests.agent.model_server import LoopbackModelServer, Reply, Request
from tests.sandbox.conftest import require_backend

DEMO = Path(__file__).resolve().parents[2] / "benchmark" / "demo"
PAPER_DIR = DEMO / "papers" / "smoothlr"
PAPER = load_paper(PAPER_DIR)
FAITHFUL = DEMO / "repos" / "faithful"
CODE_FILES = ["config.py", "data.py", "knn.py", "metrics.py", "model.py", "train.py", "run.py"]
DRIFTED_DECAY = "weight_decay: float = 5e-3"


@pytest.fixture(autouse=True)
def _setup(monkeypatch: pytest.MonkeyPatch) -> None:
    require_backend("local")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def request_text(request: Request) -> str:
    return str(request.body["messages"][-1]["content"])


def stage_of(request: Request) -> str:
    text = request_text(request)
    for prefix, stage in (("Below is one part", "extract"), ("Plan a repository", "plan"),
                          ("Write the file", "implement"), ("The file `", "repair")):
        if text.startswith(prefix):
            return stage
    return "?"


def owner(claim_id: str) -> str:
    return "config.py" if "-D1-" in claim_id else "train.py" if "-D2-" in claim_id else "run.py"


def scripted(config_text: str | None = None, repair: Any = None):
    """Extraction returns the paper's claims of each dimension from its abstract; the plan puts
    them in the demo's files; implementation writes the faithful reproduction."""

    def respond(request: Request) -> Reply:
        text, stage = request_text(request), stage_of(request)
        if stage == "extract":
            dimension = next(d for d in ("D1", "D2", "D3", "D4") if f"about {_words(d)}" in text)
            first = "## Abstract" in text
            claims = [c.text for c in PAPER.claims if c.dimension.value == dimension] if first \
                else []
            return Reply(text=json.dumps({"claims": claims}))
        if stage == "plan":
            ids = [line.split()[0] for line in text.splitlines() if line.startswith("smoothlr-")]
            files = [{"path": name, "purpose": name,
                      "claims": [i for i in ids if owner(i) == name]} for name in CODE_FILES]
            return Reply(text=json.dumps({"files": files}))
        if stage == "implement":
            name = text.split("`")[1]
            body = (config_text if name == "config.py" and config_text else
                    (FAITHFUL / name).read_text() if (FAITHFUL / name).is_file() else
                    "from run import main\n\nmain()\n" if name == "main.py" else "lr: 0.1\n")
            return Reply(text=f"```python\n{body}```")
        if stage == "repair" and repair is not None:
            return repair(request)
        return Reply(text='{"edits": []}')

    return respond


def _words(dimension: str) -> str:
    from sabench.scaffolds.alignment_prompts import DIMENSIONS

    return DIMENSIONS[dimension]


def run(server: LoopbackModelServer, out: Path, **options: Any) -> dict[str, Any]:
    budget = options.pop("budget", Budget())
    return reproduce(RunRequest(paper_dir=PAPER_DIR, scaffold="alignment-first",
                                model="openai-compatible:af-model", out=out, backend="local",
                                base_url=server.openai_url, judge=None, options=options,
                                budget=budget))


def report_of(out: Path) -> dict[str, Any]:
    return json.loads((out / "repo" / "alignment_report.json").read_text())


def test_a_drifted_value_is_flagged_and_repaired(model_server: LoopbackModelServer,
                                                 tmp_path: Path) -> None:
    drifted = (FAITHFUL / "config.py").read_text().replace("weight_decay: float = 5e-4",
                                                           DRIFTED_DECAY)

    def fix_decay(request: Request) -> Reply:
        if "0.0005" in request_text(request) and DRIFTED_DECAY in request_text(request):
            return Reply(text=json.dumps({"edits": [
                {"old": DRIFTED_DECAY, "new": "weight_decay: float = 5e-4"}]}))
        return Reply(text='{"edits": []}')

    model_server.responder = scripted(config_text=drifted, repair=fix_decay)
    record = run(model_server, tmp_path / "run")
    stages = [stage_of(r) for r in model_server.requests]
    assert stages.count("extract") > 4 and stages.count("plan") == 1
    assert stages.count("implement") == len(CODE_FILES) + 2  # + config.yaml and main.py
    report = report_of(tmp_path / "run")
    by_id = {c["text"]: c for c in report["claims"]}
    decay = by_id[next(c.text for c in PAPER.claims if c.id == "smoothlr-D1-002")]
    assert decay["passed_per_round"][0] is False and decay["passed_per_round"][-1] is True
    assert "weight_decay: float = 5e-4" in (tmp_path / "run" / "repo" / "config.py").read_text()
    # The claims were the model's own (numbered in the ledger), not the gold ones.
    assert report["oracle_claims"] is False and len(report["claims"]) == len(PAPER.claims)
    assert record["status"] == "ok"
    readme = (tmp_path / "run" / "repo" / "README.md").read_text()
    assert "| smoothlr-D1-002 | D1 | config.py |" in readme


def test_without_progress_the_loop_stops_after_two_rounds(model_server: LoopbackModelServer,
                                                          tmp_path: Path) -> None:
    model_server.responder = scripted()
    record = run(model_server, tmp_path / "run")
    report = report_of(tmp_path / "run")
    # The faithful reproduction leaves one claim failing (the clipping threshold: too little
    # of it is found); the scripted repairs change nothing, so two rounds make no progress.
    assert record["stop_reason"] == "no_progress"
    assert report["rounds"] == 2 and len(report["passing_per_check"]) == 3
    assert len(set(report["passing_per_check"])) == 1
    assert [stage_of(r) for r in model_server.requests].count("repair") == 2


def test_the_round_cap_and_the_oracle_ablation(model_server: LoopbackModelServer,
                                               tmp_path: Path) -> None:
    drifted = (FAITHFUL / "config.py").read_text().replace("weight_decay: float = 5e-4",
                                                           DRIFTED_DECAY)
    model_server.responder = scripted(config_text=drifted)
    record = run(model_server, tmp_path / "run", oracle=True, max_rounds=1)
    stages = [stage_of(r) for r in model_server.requests]
    assert "extract" not in stages  # the gold claims were given
    report = report_of(tmp_path / "run")
    assert report["oracle_claims"] is True and report["rounds"] == 1
    assert record["stop_reason"] == "round_cap"
    assert {c["id"] for c in report["claims"]} == {c.id for c in PAPER.claims}


def test_a_budget_that_ends_mid_repair_keeps_the_repository(
        model_server: LoopbackModelServer, tmp_path: Path) -> None:
    drifted = (FAITHFUL / "config.py").read_text().replace("weight_decay: float = 5e-4",
                                                           DRIFTED_DECAY)
    model_server.responder = scripted(config_text=drifted)
    calls_before_repair = 1 + len(CODE_FILES) + 2  # plan + implementation (oracle claims)
    record = run(model_server, tmp_path / "run", oracle=True,
                 budget=Budget(calls=calls_before_repair + 1))
    assert record["status"] == "stopped" and record["stop_reason"] == "budget_calls"
    assert model_server.request_count() == calls_before_repair + 1
    repo = tmp_path / "run" / "repo"
    assert DRIFTED_DECAY in (repo / "config.py").read_text()
    assert (repo / "alignment_report.json").is_file() and (repo / "train.py").is_file()


def test_kill_9_mid_repair_then_resume_repeats_no_completed_call(
        model_server: LoopbackModelServer, tmp_path: Path) -> None:
    drifted = (FAITHFUL / "config.py").read_text().replace("weight_decay: float = 5e-4",
                                                           DRIFTED_DECAY)
    in_repair, release = threading.Event(), threading.Event()
    answer = scripted(config_text=drifted)

    def respond(request: Request) -> Reply:
        if stage_of(request) == "repair" and not release.is_set():
            in_repair.set()
            release.wait(60)  # the client is killed while it waits for this reply
        return answer(request)

    model_server.responder = respond
    out = tmp_path / "run"
    command = [sys.executable, "-m", "sabench.benchmark.cli", "reproduce", str(PAPER_DIR),
               "--scaffold", "alignment-first", "--model", "openai-compatible:af-model",
               "--out", str(out), "--backend", "local", "--base-url", model_server.openai_url,
               "--judge", "none", "--option", "oracle=true", "--option", "max_rounds=1"]
    env = {**os.environ, "OPENAI_API_KEY": "test-key"}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    assert in_repair.wait(120), process.stderr.read().decode() if process.poll() else "stuck"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    release.set()
    time.sleep(0.2)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    bodies = [json_body(r) for r in model_server.requests]
    completed_before = bodies[:-2]  # all but the killed repair request and its re-send
    assert len(set(completed_before)) == len(completed_before)
    assert bodies[-1] == bodies[-2]  # only the call in flight was sent again
    record = json.loads((out / "record.json").read_text())
    assert record["stop_reason"] in ("round_cap", "all_claims_pass")
    assert "weight_decay" in (out / "repo" / "config.py").read_text()


def json_body(request: Request) -> str:
    return json.dumps(request.body["messages"], sort_keys=True)
